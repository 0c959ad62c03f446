import type { Readable } from 'node:stream';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { CacheWriter } from '../cache/response-cache';
import type { Deps } from '../deps';
import type { ProxyResponse } from '../http/response';
import { plainErrorText } from '../providers/dialects/error-text';
import { upstreamUrl } from '../providers/registry';
import { NO_USAGE } from '../providers/usage';
import { SecretRedactor } from '../streaming/redact';
import { MAX_ERROR_READ, UsageTap, type TapResult } from '../streaming/usage-tap';
import { callUpstream } from '../upstream/call-upstream';
import { bodyDecoding } from '../upstream/content-encoding';
import { clientResponseHeaders, upstreamRequestHeaders } from '../upstream/headers';
import { finishResponse } from './finish-response';
import { pipelineData, proxyState } from './middy-types';
import { recordUsage } from './record';
import { abandonCacheFlight, cacheStatusHeader, openCacheWriter } from './serve-from-cache';
import type { ProxyState } from './state';

/** The body sent upstream: the client's bytes, unless the proxy must ask for stream usage. */
function upstreamBody(state: ProxyState): { body: Buffer; addedStreamUsage: boolean } {
  if (!state.stream || state.provider.streamUsage !== 'when-asked' || !state.body) return { body: state.request.body, addedStreamUsage: false };
  const { body, added } = state.endpoint.dialect.requestStreamUsage(state.body, state.request.body);
  return { body, addedStreamUsage: added };
}

/**
 * Step 9, the handler: forward to the provider and stream its answer back
 * unchanged, reading usage on the way; the row is recorded when the body ends.
 */
export function forwardUpstream(deps: Deps) {
  return async function forwardUpstream(event: APIGatewayProxyEventV2, context?: { clientGone?: AbortSignal }): Promise<ProxyResponse> {
    const state = proxyState(event);
    const { dialect } = state.endpoint;
    const { body, addedStreamUsage } = upstreamBody(state);
    // Every credential of this request, whoever owns it, is cut out of whatever the provider sends back.
    const redactor = new SecretRedactor(requestSecrets(state));
    let upstream;
    try {
      upstream = await callUpstream({
        method: state.request.method,
        url: upstreamUrl(state.provider, deps.config.env, state.upstreamPath, state.request.rawQuery),
        headers: upstreamRequestHeaders(state.request.headers, dialect, state.upstreamKey!, body.length > 0),
        body,
        timeoutMs: deps.config.upstreamTimeoutMs,
        clientGone: context?.clientGone,
      });
    } catch (error) {
      abandonCacheFlight(state);
      recordUsage(deps, state, { status: (error as { status?: number }).status ?? 502, error: (error as Error).message });
      throw error;
    } finally {
      state.upstreamKey = undefined;
    }

    const ok = upstream.status >= 200 && upstream.status < 300;
    const contentType = String(upstream.headers['content-type'] ?? '');
    // A body in a format the dialect can't read (an audio file, a download) passes through unread.
    const format = contentType.includes('text/event-stream') ? 'sse' : dialect.requestBody === 'json' || /json/i.test(contentType) ? 'json' : 'opaque';
    const storedFormat = format === 'opaque' ? undefined : format;
    const cacheWriter: CacheWriter | undefined = ok && storedFormat ? openCacheWriter(deps, state) : undefined;
    const decoding = bodyDecoding(upstream.headers['content-encoding']);
    // A compressed body the proxy edits (the usage event it asked for) or that may quote a credential (an error)
    // is decoded, edited and sent as identity; any other compressed body goes out as sent, read from a decoded copy.
    const transcoder = decoding.kind === 'decode' && (addedStreamUsage || !ok) ? decoding.create() : undefined;
    const tap = new UsageTap({
      dialect,
      format,
      hideUsageOnlyEvent: addedStreamUsage,
      // An error body reaches the client whole; only its start is kept, for the row's message.
      maxJsonRead: ok ? undefined : MAX_ERROR_READ,
      onText: cacheWriter && ((text) => cacheWriter.append(text)),
      // The entry is committed before the client sees the end, so a retry right after always hits.
      beforeEnd: cacheWriter && ((result) => commitToCache(deps, state, cacheWriter, { format: storedFormat!, status: upstream.status, contentType }, result)),
      readVia: decoding.kind !== 'identity' && !transcoder && format !== 'opaque' ? decoding.create(new SecretRedactor(requestSecrets(state))) : undefined,
    });
    let stalled = false;
    watchStalls(upstream.body, deps.config.upstreamTimeoutMs, () => {
      stalled = true;
      upstream.abort();
    });
    // Errors of the upstream body show up as an incomplete 'close' below.
    upstream.body.on('error', () => undefined);
    // The tap is destroyed with a reason when the body is cut; the runtime's pipe reports that to the
    // client, and this listener keeps a cut that comes before the pipe is attached from ending the process.
    tap.on('error', () => undefined);

    let finished = false;
    const finish = (interruption?: string) => {
      if (finished) return;
      finished = true;
      const result = tap.result();
      const error = upstream.status >= 400 ? (dialect.upstreamErrorMessage(result.json) ?? quotedMessage(result.text) ?? plainErrorText(result.text)) : (interruption ?? result.error);
      if (result.oversizedEvents) deps.log.warn('stream events over 16 MB passed on unparsed', { request_id: state.request.id, events: result.oversizedEvents });
      recordUsage(deps, state, { status: upstream.status, model: result.model, usage: result.usage, error });
      if (interruption || !cacheWriter) {
        cacheWriter?.abort();
        abandonCacheFlight(state);
      }
    };

    const source: Readable = transcoder ? upstream.body.pipe(transcoder) : upstream.body;
    transcoder?.on('error', (error) => {
      const reason = `could not decode the upstream body: ${error.message}`;
      // The rest of the body is drained, not cut: an aborted body would end the client's stream before its error event.
      upstream.body.unpipe(transcoder);
      upstream.body.resume();
      if (format === 'sse' && !tap.writableEnded) tap.end(state.provider.dialect.streamErrorEvent(reason, 'closed'));
      else tap.destroy(new Error(reason));
      finish(reason);
    });
    source.on('data', (chunk: Buffer) => {
      const safe = redactor.write(chunk);
      if (safe.length && !tap.write(safe)) source.pause();
    });
    tap.on('drain', () => source.resume());
    const flushRedactor = () => {
      const rest = redactor.end();
      if (rest.length && !tap.writableEnded) tap.write(rest);
    };
    source.on('end', () => {
      flushRedactor();
      tap.end();
    });
    upstream.body.on('close', () => {
      if (upstream.body.complete) return;
      // Cut off mid-body: a stream ends with an error event in its own format, so the SDK raises instead of hanging.
      const cut = stalled ? 'stalled' : 'closed';
      const reason = stalled ? `upstream stalled for more than ${Math.round(deps.config.upstreamTimeoutMs / 1000)} s` : 'upstream connection closed mid-response';
      flushRedactor();
      if (format === 'sse' && !tap.writableEnded) tap.end(dialect.streamErrorEvent(reason, cut));
      else tap.destroy(new Error(reason));
      finish(reason);
    });
    tap.on('end', () => finish());
    tap.on('close', () => {
      if (finished) return;
      // The client went away: stop paying for tokens nobody will read.
      upstream.abort();
      finish('client disconnected');
    });

    const headers = clientResponseHeaders(upstream.headers);
    if (transcoder) delete headers['content-encoding'];
    Object.assign(headers, cacheStatusHeader(state));
    return finishResponse(pipelineData(event), { statusCode: upstream.status, headers, body: tap });
  };
}

const CACHE_COMMIT_WAIT_MS = 2_000;

/** The stored or pass-through provider key, the client's credential and the proxy token (whole and its secret part). */
function requestSecrets(state: ProxyState): Array<string | undefined> {
  return [state.upstreamKey, state.credential, state.request.headers['x-proxy-token']?.trim(), state.token?.secret];
}

/** The provider's message from the start of a JSON error body too large to parse whole. */
function quotedMessage(head: string | undefined): string | undefined {
  const match = head && /"message"\s*:\s*"((?:[^"\\]|\\.){1,2000})/.exec(head);
  return match ? match[1] : undefined;
}

/** Stores a complete answer; an incomplete one (cut off, unparsable) is dropped. Never delays the client for long. */
async function commitToCache(deps: Deps, state: ProxyState, writer: CacheWriter, response: { format: 'json' | 'sse'; status: number; contentType: string }, result: TapResult): Promise<void> {
  if (!result.complete) {
    writer.abort();
    return;
  }
  const usage = result.usage ?? NO_USAGE;
  const meta = { ...response, model: result.model, usage, costNanos: deps.prices.cost(result.model, usage, { provider: state.provider.id, at: state.request.receivedAt }).nanos, storedAt: deps.now() };
  const commit = writer.commit(meta);
  state.work.add(commit);
  await Promise.race([commit, new Promise((resolve) => setTimeout(resolve, CACHE_COMMIT_WAIT_MS).unref())]);
}

/** Ends a body that goes quiet for longer than the upstream limit (README, "Errors the proxy answers itself"). */
function watchStalls(body: NodeJS.EventEmitter, limitMs: number, onStall: () => void): void {
  const timer = setTimeout(onStall, limitMs);
  // refresh() re-arms the same timer: no allocation per chunk.
  body.on('data', () => timer.refresh());
  body.on('close', () => clearTimeout(timer));
}
