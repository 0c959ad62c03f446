import { useEffect, useState } from 'preact/hooks';

export type RouteName = 'overview' | 'logs' | 'integrations' | 'tokens' | 'audit';

export const ROUTES: readonly { name: RouteName; label: string }[] = [
  { name: 'overview', label: 'Overview' },
  { name: 'logs', label: 'Logs' },
  { name: 'integrations', label: 'Integrations' },
  { name: 'tokens', label: 'Tokens' },
  { name: 'audit', label: 'Audit' },
];

export interface Route {
  name: RouteName;
  params: URLSearchParams;
  /** `#/logs/<request id>`: the request whose details are open. */
  detail?: string;
}

/** `#/logs?model=x` → logs with its query; `#/logs/<id>?…` also opens that request. Anything unknown lands on the overview. */
export function parseHash(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?');
  const [name, ...rest] = path.split('/');
  const known = ROUTES.find((r) => r.name === name);
  if (!known) return { name: 'overview', params: new URLSearchParams(query) };
  const detail = known.name === 'logs' && rest.length === 1 && rest[0] ? safeDecode(rest[0]) : undefined;
  return { name: known.name, params: new URLSearchParams(query), ...(detail ? { detail } : {}) };
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The deep link of one request's details, keeping the list's filters behind it. */
export function logDetailHref(id: string, params?: URLSearchParams): string {
  const query = params?.toString() ?? '';
  return `#/logs/${encodeURIComponent(id)}${query ? `?${query}` : ''}`;
}

export function hrefFor(name: RouteName, params?: Record<string, string> | URLSearchParams): string {
  const query = params ? new URLSearchParams(params).toString() : '';
  return `#/${name}${query ? `?${query}` : ''}`;
}

export function useHashRoute(): Route {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return parseHash(hash);
}
