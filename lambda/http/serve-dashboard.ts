import assets from 'virtual:dashboard-assets';
import type { IncomingRequest } from './request';
import type { ProxyResponse } from './response';

const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** Page headers: the dashboard loads nothing from elsewhere and can't be framed. */
const PAGE_SECURITY = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The dashboard's three files are built into the bundle (scripts/build.mjs), so
 * Lambda and the local server serve the same assets with no CDN.
 */
export function serveDashboard(request: IncomingRequest): ProxyResponse | undefined {
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
  const file =
    request.path === '/' || request.path === '/index.html' ? 'index.html' : request.path.replace(/^\/assets\//, '');
  const body = assets[file];
  if (body === undefined || (file !== 'index.html' && !request.path.startsWith('/assets/'))) return undefined;
  const caching = file === 'index.html' ? 'no-cache' : 'public, max-age=31536000, immutable';
  return {
    statusCode: 200,
    headers: { 'content-type': TYPES[file], 'cache-control': caching, ...PAGE_SECURITY },
    body: request.method === 'HEAD' ? '' : body,
  };
}
