/**
 * The endpoints a fake serves beside its chat endpoint: Responses API, embeddings,
 * model lists and token counting, from the fixtures in `test/fixtures/endpoints`, with
 * the requested model echoed; and, under `/echo`, any method and path, answered with
 * what arrived (to check what the proxy forwards for a provider's other paths).
 */
import type { IncomingMessage } from 'node:http';
import { createHash } from 'node:crypto';
import { fixtureText, splitSseBlocks } from '../fixtures/index';
import type { FakeStyle } from './styles';

export interface ExtraRoute {
  method: string;
  /** Below the fake's base path. */
  path: string;
  json: string;
  sse?: string;
}

const responses = {
  method: 'POST',
  path: '/responses',
  json: 'endpoints/openai-responses.json',
  sse: 'endpoints/openai-responses.sse',
};
const models = { method: 'GET', path: '/models', json: 'endpoints/openai-models.json' };
const embeddings = { method: 'POST', path: '/embeddings', json: 'endpoints/openai-embeddings.json' };

export const EXTRA_ROUTES: Record<FakeStyle, ExtraRoute[]> = {
  anthropic: [
    { method: 'POST', path: '/v1/messages/count_tokens', json: 'endpoints/anthropic-count-tokens.json' },
    { method: 'GET', path: '/v1/models', json: 'endpoints/anthropic-models.json' },
  ],
  openai: [responses, embeddings, models],
  gemini: [embeddings, models],
  mistral: [{ ...embeddings, json: 'endpoints/mistral-embeddings.json' }, models],
  // Groq offers no embeddings: the fake answers its own 404 there, as Groq does.
  groq: [responses, models],
};

export function findExtraRoute(
  style: FakeStyle,
  basePath: string,
  method: string,
  url: string,
): ExtraRoute | undefined {
  const path = url.split('?')[0]!;
  return EXTRA_ROUTES[style].find((route) => route.method === method && basePath + route.path === path);
}

/**
 * The fixture (the route's own, or `override`, one of `endpoints/`) with the requested model in place of
 * the recorded one, as blocks (SSE) or one body (JSON).
 */
export function renderExtra(
  route: ExtraRoute,
  stream: boolean,
  model: string | undefined,
  override?: string,
): { events: Buffer[]; stream: boolean; fixture: string } {
  const fixture = override ?? (stream && route.sse ? route.sse : route.json);
  let text = fixtureText(fixture);
  if (model !== undefined) text = text.replace(/("model"\s*:\s*)"[^"]*"/g, `$1${JSON.stringify(model)}`);
  const isSse = fixture.endsWith('.sse');
  return {
    events: isSse ? splitSseBlocks(text).map((e) => Buffer.from(e.raw)) : [Buffer.from(text)],
    stream: isSse,
    fixture,
  };
}

/** `/echo/…` under the base path: any method. */
export function isEchoPath(basePath: string, url: string): boolean {
  return url.startsWith(`${basePath}/echo`);
}

/**
 * What the echo answers: the request line and body as received. With `?usage=1` it adds
 * usage in the style's own shape (a path whose answer happens to carry usage).
 */
export function echoBody(style: FakeStyle, req: IncomingMessage, raw: Buffer): Buffer {
  const query = new URL(req.url ?? '/', 'http://fake').searchParams;
  const usage =
    query.get('usage') === '1'
      ? style === 'anthropic'
        ? { model: 'claude-haiku-4-5', usage: { input_tokens: 11, output_tokens: 7 } }
        : { model: 'gpt-4o-mini', usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }
      : {};
  return Buffer.from(
    JSON.stringify({
      object: 'echo',
      method: req.method,
      url: req.url,
      content_type: req.headers['content-type'] ?? null,
      bytes: raw.length,
      sha256: createHash('sha256').update(raw).digest('hex'),
      ...usage,
    }),
  );
}
