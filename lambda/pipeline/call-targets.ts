import type { Deps } from '../wiring/deps';
import { UpstreamEncodingError, ValidationError } from '../base/errors';
import { KeyRotation } from '../keys/key-rotation';
import { openPool, type OpenedKey } from '../keys/open-pool';
import { setMember } from '../providers/dialects/json-splice';
import { upstreamUrl, type Provider } from '../providers/registry';
import { firstAnswer, type AttemptRecord, type TargetCall, type TargetKeys } from '../upstream/attempts';
import { signAwsRequest } from '../upstream/aws-signing';
import { callUpstream, type UpstreamResponse } from '../upstream/call-upstream';
import { bodyDecoding, type BodyDecoding } from '../upstream/content-encoding';
import { FALLBACK_HEADER, modelInPath, targetLabel, type Target } from '../upstream/fallbacks';
import { upstreamRequestHeaders } from '../upstream/headers';
import { queryWithoutSecrets } from '../upstream/query';
import type { InvocationContext } from './pipeline';
import type { ProxyState } from './state';

/** What calling the provider uses: the upstream settings, the runtime's AWS credentials, a fallback provider's stored key. */
export type CallDeps = Pick<
  Deps,
  'config' | 'awsCredentials' | 'providerKeys' | 'sealer' | 'keyHealth' | 'now' | 'log'
>;

/** How the request is sent: as the client wrote it, or continuing an answer a cut stream had begun. */
export type Sending =
  | { kind: 'request' }
  /** The answer so far as the assistant's prefill (`edit` puts it in the body): the target carries on from it. */
  | { kind: 'prefill'; edit: (body: Buffer) => Buffer }
  /** The client's request again, for a target that refuses a prefill: it answers from the start. */
  | { kind: 'restart' };

export interface CallTargets {
  deps: CallDeps;
  state: ProxyState;
  context: InvocationContext | undefined;
  /** The first of the plan's targets to try; the ones after it are the fallbacks. */
  from: number;
  sending: Sending;
  /** `performance.now()` past which nothing more is started (Lambda's time limit), if any. */
  deadlineAt: number | undefined;
  /** Every attempt, appended. */
  attempts: AttemptRecord[];
}

/** A target's answer, in a content coding the proxy can decode. */
export interface TargetAnswer {
  upstream: UpstreamResponse;
  decoding: Exclude<BodyDecoding, { kind: 'unsupported' }>;
  /** The credentials this answer must be scrubbed of beyond the request's own (a signature, a fallback provider's key). */
  secrets: string[];
  /** Index of the answering target in the plan. */
  index: number;
  addedStreamUsage: boolean;
  /** The stored key that got this answer, as rows name it. */
  key?: { label: string; hint: string };
}

/**
 * What one target's attempts send: its URL and body, and the keys its headers carry (a pool of
 * stored keys, or the caller's own key, or none: signed with the runtime's AWS credentials).
 */
interface TargetRequest {
  url: URL;
  body: Buffer;
  addedStreamUsage: boolean;
  /** A pool of stored keys, one chosen per attempt; or the headers of every attempt (the caller's own key, or signed). */
  keys: { pool: KeyRotation } | { headers: Record<string, string> };
  /** The credentials it carries beyond the request's own (a fallback provider's keys). */
  secrets?: string[];
}

/**
 * The provider's answer, in a content coding the proxy can decode: a body it cannot decode
 * cannot be checked for credentials, so it is not passed on (a 502). The request goes to each
 * target of the plan from `from` on, in turn (upstream/attempts.ts), until one answers.
 */
export async function callTargets(options: CallTargets): Promise<TargetAnswer> {
  const { deps, state, from, deadlineAt } = options;
  const calls = state.failover.targets
    .slice(from)
    .map((target, offset) => new TargetAttempts(options, target, from + offset));
  const left = deadlineAt === undefined ? Infinity : deadlineAt - performance.now();
  const { response: upstream, index } = await firstAnswer({
    calls,
    // Headers that would come after the deadline would come too late to record anything.
    // A request that first waited for an identical one has only what is left of its own limit.
    headerTimeoutMs: Math.max(
      1,
      Math.min(deps.config.upstreamTimeoutMs, state.cacheFill.timeLimitMs ?? Infinity, left),
    ),
    firstByteMs: state.stream ? state.failover.firstTokenMs : undefined,
    deadlineAt,
    attempts: options.attempts,
  });
  const request = calls[index].request!;
  const decoding = bodyDecoding(upstream.headers['content-encoding']);
  const served = 'pool' in request.keys ? request.keys.pool.last : undefined;
  if (decoding.kind !== 'unsupported')
    return {
      upstream,
      decoding,
      secrets: request.secrets ?? [],
      index: from + index,
      addedStreamUsage: request.addedStreamUsage,
      ...(served ? { key: { label: served.label, hint: served.hint } } : {}),
    };
  upstream.abort();
  throw new UpstreamEncodingError(decoding.coding);
}

/**
 * One target's attempts (upstream/attempts.ts): its URL, body and keys are made on its first attempt
 * (a target never tried costs nothing, not even its pool's read); each attempt sends with the next
 * key of the pool, and the pool hears how that key fared.
 */
class TargetAttempts implements TargetCall, TargetKeys {
  readonly label: string;
  readonly keys: TargetKeys = this;
  /** What every attempt sends, once the first has made it. */
  request: TargetRequest | undefined;

  constructor(
    private readonly options: CallTargets,
    private readonly target: Target,
    private readonly index: number,
  ) {
    this.label = targetLabel(target);
  }

  private get pool(): KeyRotation | undefined {
    return this.request && 'pool' in this.request.keys ? this.request.keys.pool : undefined;
  }

  get lastLabel(): string | undefined {
    return this.pool?.last?.label;
  }

  answered(status: number, retryAfterMs: number | undefined): boolean {
    return this.pool?.answered(status, retryAfterMs) ?? false;
  }

  async send({ timeoutMs, freshConnection }: { timeoutMs: number; freshConnection: boolean }) {
    const { deps, state, context } = this.options;
    this.request ??= await targetRequest(this.options, this.target, this.index);
    const { url, body, keys } = this.request;
    return callUpstream({
      method: state.request.method,
      url,
      headers: 'pool' in keys ? keyHeaders(state, this.target, keys.pool.next().key, body) : keys.headers,
      body,
      timeoutMs,
      // A request that waited for an identical one is told of the limit it was held to from its arrival.
      namedLimitMs: state.cacheFill.timeLimitMs === undefined ? undefined : deps.config.upstreamTimeoutMs,
      clientGone: context?.clientGone,
      freshConnection,
    });
  }
}

/** The body sent upstream: the client's bytes, unless the proxy must ask this provider for stream usage. */
function upstreamBody(state: ProxyState, provider: Provider): { body: Buffer; addedStreamUsage: boolean } {
  if (!state.stream || provider.streamUsage !== 'when-asked' || !state.body)
    return { body: state.request.body, addedStreamUsage: false };
  const { body, added } = state.endpoint.dialect.requestStreamUsage(state.body, state.request.body);
  return { body, addedStreamUsage: added };
}

/**
 * The URL, body and keys of one target. A fallback gets the client's body with its own model; a
 * continuation, the answer so far as the last message. Stored mode sends the target provider's pool
 * of keys (the request's own provider's was opened in step 8), one key per attempt.
 */
async function targetRequest(options: CallTargets, target: Target, index: number): Promise<TargetRequest> {
  const { deps, state, sending } = options;
  const provider = target.provider;
  const base = deps.config.upstreams[provider.id];
  const url = upstreamUrl(
    provider,
    base.baseUrl,
    target.upstreamPath,
    queryWithoutSecrets(state.request.rawQuery, presentedProxyToken(state)),
  );
  const asked = upstreamBody(state, provider);
  // A model named in the path (Bedrock) is in the target's path already.
  const modelInBody = index !== 0 && !modelInPath(target.endpoint);
  let body = modelInBody ? setMember(asked.body, 'model', JSON.stringify(target.model)) : asked.body;
  if (sending.kind === 'prefill') body = sending.edit(body);
  const addedStreamUsage = asked.addedStreamUsage;
  if (state.mode === 'pass-through')
    return { url, body, addedStreamUsage, keys: { headers: keyHeaders(state, target, state.upstreamKey, body) } };
  const own = provider.id === state.provider.id;
  const keys = own ? state.keyPool : await fallbackPool(deps, state, target);
  if (keys.length === 0) {
    // No key saved for a provider reached through AWS (docs/bedrock.md): signed with the runtime's credentials.
    const headers = keyHeaders(state, target, undefined, body);
    if (!base.aws) return { url, body, addedStreamUsage, keys: { headers } };
    const signed = await signAwsRequest(
      { method: state.request.method, url, headers, body },
      base.aws,
      deps.awsCredentials.get,
    );
    return { url, body, addedStreamUsage, keys: { headers: signed.headers }, secrets: signed.secrets };
  }
  const accountId = state.token.accountId;
  const pool = new KeyRotation(keys, deps.keyHealth, accountId, deps.now, (key, mark) =>
    // Off the request's path, like its row: other instances read the mark with their pool.
    state.work.add(
      deps.providerKeys
        .mark(accountId, key, mark)
        .catch((error: unknown) =>
          deps.log.warn('a key mark was not stored', { request_id: state.request.id, error: String(error) }),
        ),
    ),
  );
  // Another provider's stored keys are this request's credentials too: cut out of whatever comes back.
  return { url, body, addedStreamUsage, keys: { pool }, ...(own ? {} : { secrets: keys.map((k) => k.key) }) };
}

/** An attempt's headers: the client's, less the proxy's own, with `key` in the dialect's credential header. */
function keyHeaders(state: ProxyState, target: Target, key: string | undefined, body: Buffer): Record<string, string> {
  return upstreamRequestHeaders(
    state.request.headers,
    target.endpoint.dialect,
    key,
    body.length > 0,
    presentedProxyToken(state),
  );
}

/**
 * The stored keys of a fallback on another provider (stored mode only: planFailover refuses another
 * provider in pass-through mode); none for a provider reached through AWS, which is then signed.
 */
function fallbackPool(deps: CallDeps, state: ProxyState, target: Target): Promise<OpenedKey[]> {
  const { id, displayName } = target.provider;
  const accountId = state.token.accountId;
  return openPool(
    deps.sealer,
    deps.providerKeys.pool(accountId, id),
    accountId,
    target.provider,
    () =>
      new ValidationError(
        `${FALLBACK_HEADER}: no ${displayName} key is saved for this account (provider ${id}). Save one on the dashboard's Integrations page or with PUT /api/keys/${id}.`,
        FALLBACK_HEADER,
      ),
  );
}

/** The proxy token as the client presented it, whole and its secret part: no header quoting either goes upstream. */
function presentedProxyToken(state: ProxyState): Array<string | undefined> {
  return [
    state.mode === 'stored' ? state.credential : state.request.headers['x-proxy-token']?.trim(),
    state.token.secret,
  ];
}
