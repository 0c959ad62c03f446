/**
 * The contenders as request shapes: the same chat-completions request (and a
 * messages request and a Responses API request for this proxy's other
 * dialects), addressed to each one.
 */
import type { RequestSpec } from './load-protocol';
import type { Child, ProxyInstance } from './processes';

export type ContenderId =
  | 'direct'
  | 'pipe'
  | 'stored'
  | 'passThrough'
  | 'cacheHit'
  | 'portkey'
  | 'directMessages'
  | 'storedMessages'
  | 'directResponses'
  | 'storedResponses';

/** The Responses API pair, measured in the stream phases beside the chat stream. */
export const RESPONSES_CONTENDERS: readonly ContenderId[] = ['directResponses', 'storedResponses'];

export interface Contender {
  id: ContenderId;
  label: string;
  /** The contender this one is compared with ("added over"). */
  baseline: ContenderId;
  /** The pid whose CPU and memory are measured (none for the direct call). */
  pid?: number;
  spec(stream: boolean): RequestSpec;
}

/** The key a client would hold for itself; the fake upstream accepts any key. */
export const OWN_PROVIDER_KEY = 'sk-bench-own-key-0123456789abcdef';
// Real, priced model names: a priced row takes the exact-spend write path, as real traffic does.
const MODEL = 'gpt-4o-mini';

/** About the size of a small real prompt (~0.5 KB). */
function chatBody(stream: boolean, salt = ''): string {
  return JSON.stringify({
    model: MODEL,
    messages: [
      { role: 'system', content: 'You are a concise assistant. Answer in one short paragraph without lists.' },
      { role: 'user', content: `Summarise why a proxy in front of an AI provider should add as little latency as possible.${salt}` },
    ],
    max_tokens: 256,
    temperature: 0.2,
    ...(stream ? { stream: true } : {}),
  });
}

function messagesBody(stream: boolean): string {
  return JSON.stringify({
    model: 'claude-haiku-4-5-20251001',
    max_tokens: 256,
    system: 'You are a concise assistant.',
    messages: [{ role: 'user', content: 'Summarise why a proxy in front of an AI provider should add as little latency as possible.' }],
    ...(stream ? { stream: true } : {}),
  });
}

/** The chat request's prompt as a Responses API request (`input` and `instructions` instead of messages). */
function responsesBody(stream: boolean): string {
  return JSON.stringify({
    model: MODEL,
    instructions: 'You are a concise assistant. Answer in one short paragraph without lists.',
    input: 'Summarise why a proxy in front of an AI provider should add as little latency as possible.',
    max_output_tokens: 256,
    ...(stream ? { stream: true } : {}),
  });
}

const json = { 'content-type': 'application/json' };

export function buildContenders(parts: { upstreamOrigin: string; pipe: Child; proxy: ProxyInstance; portkey: Child }): Contender[] {
  const { upstreamOrigin, pipe, proxy, portkey } = parts;
  const chatPath = '/api/proxy/prov-b/v1/chat/completions';
  return [
    {
      id: 'direct',
      label: 'direct call (floor)',
      baseline: 'direct',
      spec: (stream) => ({ url: `${upstreamOrigin}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${OWN_PROVIDER_KEY}` }, body: chatBody(stream), readStamps: stream }),
    },
    {
      id: 'pipe',
      label: 'bare Node pipe proxy',
      baseline: 'direct',
      pid: pipe.pid,
      spec: (stream) => ({ url: `${pipe.url}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${OWN_PROVIDER_KEY}` }, body: chatBody(stream), readStamps: stream }),
    },
    {
      id: 'stored',
      label: 'this proxy, stored key',
      baseline: 'direct',
      pid: proxy.pid,
      spec: (stream) => ({ url: proxy.url + chatPath, headers: { ...json, authorization: `Bearer ${proxy.token}` }, body: chatBody(stream), readStamps: stream }),
    },
    {
      id: 'passThrough',
      label: 'this proxy, pass-through',
      baseline: 'direct',
      pid: proxy.pid,
      spec: (stream) => ({
        url: proxy.url + chatPath,
        headers: { ...json, authorization: `Bearer ${OWN_PROVIDER_KEY}`, 'x-proxy-token': proxy.token },
        body: chatBody(stream),
        readStamps: stream,
      }),
    },
    {
      id: 'cacheHit',
      label: 'this proxy, cache hit',
      baseline: 'direct',
      pid: proxy.pid,
      spec: (stream) => ({
        url: proxy.url + chatPath,
        headers: { ...json, authorization: `Bearer ${proxy.token}`, 'x-proxy-cache': 'true' },
        // Its own prompt, so the entry is written once (by the priming call) and only read afterwards.
        body: chatBody(stream, ' (cached)'),
        expectHeader: ['x-proxy-cache', 'HIT'],
      }),
    },
    {
      id: 'portkey',
      label: 'Portkey gateway, pass-through',
      baseline: 'direct',
      pid: portkey.pid,
      spec: (stream) => ({
        url: `${portkey.url}/v1/chat/completions`,
        headers: { ...json, authorization: `Bearer ${OWN_PROVIDER_KEY}`, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstreamOrigin}/v1` },
        body: chatBody(stream),
        readStamps: stream,
      }),
    },
    {
      id: 'directMessages',
      label: 'direct call, messages dialect',
      baseline: 'directMessages',
      spec: (stream) => ({ url: `${upstreamOrigin}/v1/messages`, headers: { ...json, 'x-api-key': OWN_PROVIDER_KEY, 'anthropic-version': '2023-06-01' }, body: messagesBody(stream), readStamps: stream }),
    },
    {
      id: 'storedMessages',
      label: 'this proxy, stored key, messages dialect',
      baseline: 'directMessages',
      pid: proxy.pid,
      spec: (stream) => ({ url: `${proxy.url}/api/proxy/v1/messages`, headers: { ...json, 'x-api-key': proxy.token, 'anthropic-version': '2023-06-01' }, body: messagesBody(stream), readStamps: stream }),
    },
    {
      id: 'directResponses',
      label: 'direct call, Responses API',
      baseline: 'directResponses',
      spec: (stream) => ({ url: `${upstreamOrigin}/v1/responses`, headers: { ...json, authorization: `Bearer ${OWN_PROVIDER_KEY}` }, body: responsesBody(stream), readStamps: stream }),
    },
    {
      id: 'storedResponses',
      label: 'this proxy, stored key, Responses API',
      baseline: 'directResponses',
      pid: proxy.pid,
      spec: (stream) => ({ url: `${proxy.url}/api/proxy/prov-b/v1/responses`, headers: { ...json, authorization: `Bearer ${proxy.token}` }, body: responsesBody(stream), readStamps: stream }),
    },
  ];
}

/** Stores the cache-hit contender's answer once and waits until the proxy serves it from the cache. */
export async function primeCache(contender: Contender): Promise<void> {
  const spec = contender.spec(false);
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body });
    await response.arrayBuffer();
    if (response.headers.get('x-proxy-cache') === 'HIT') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
