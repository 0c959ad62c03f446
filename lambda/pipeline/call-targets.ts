import type { Deps } from '../wiring/deps';
import { UpstreamEncodingError, ValidationError } from '../base/errors';
import { openStoredKey } from '../keys/open-stored-key';
import { setMember } from '../providers/dialects/json-splice';
import { upstreamUrl, type Provider } from '../providers/registry';
import { firstAnswer, type AttemptRecord, type TargetCall } from '../upstream/attempts';
import { signAwsRequest } from '../upstream/aws-signing';
import { callUpstream, type UpstreamResponse } from '../upstream/call-upstream';
import { bodyDecoding, type BodyDecoding } from '../upstream/content-encoding';
import { FALLBACK_HEADER, modelInPath, targetLabel, type Target } from '../upstream/fallbacks';
import { upstreamRequestHeaders } from '../upstream/headers';
import { queryWithoutSecrets } from '../upstream/query';
import type { InvocationContext } from './pipeline';
import type { ProxyState } from './state';

/** What calling the provider uses: the upstream settings, the runtime's AWS credentials, a fallback provider's stored key. */
export type CallDeps = Pick<Deps, 'config' | 'awsCredentials' | 'providerKeys' | 'sealer'>;

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
}

/** What one target's attempt sends: its URL, headers and body, and the credentials it carries beyond the request's own. */
interface TargetRequest {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  secrets?: string[];
  addedStreamUsage: boolean;
}

/**
 * The provider's answer, in a content coding the proxy can decode: a body it cannot decode
 * cannot be checked for credentials, so it is not passed on (a 502). The request goes to each
 * target of the plan from `from` on, in turn (upstream/attempts.ts), until one answers.
 */
export async function callTargets(options: CallTargets): Promise<TargetAnswer> {
  const { deps, state, context, from, deadlineAt } = options;
  const targets = state.failover.targets.slice(from);
  const requests = new Map<number, TargetRequest>();
  const calls: TargetCall[] = targets.map((target, offset) => ({
    label: targetLabel(target),
    send: async ({ timeoutMs, freshConnection }) => {
      if (!requests.has(offset)) requests.set(offset, await targetRequest(options, target, from + offset));
      const request = requests.get(offset)!;
      return callUpstream({
        method: state.request.method,
        url: request.url,
        headers: request.headers,
        body: request.body,
        timeoutMs,
        // A request that waited for an identical one is told of the limit it was held to from its arrival.
        namedLimitMs: state.cacheFill.timeLimitMs === undefined ? undefined : deps.config.upstreamTimeoutMs,
        clientGone: context?.clientGone,
        freshConnection,
      });
    },
  }));
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
  const request = requests.get(index)!;
  const decoding = bodyDecoding(upstream.headers['content-encoding']);
  if (decoding.kind !== 'unsupported')
    return {
      upstream,
      decoding,
      secrets: request.secrets ?? [],
      index: from + index,
      addedStreamUsage: request.addedStreamUsage,
    };
  upstream.abort();
  throw new UpstreamEncodingError(decoding.coding);
}

/** The body sent upstream: the client's bytes, unless the proxy must ask this provider for stream usage. */
function upstreamBody(state: ProxyState, provider: Provider): { body: Buffer; addedStreamUsage: boolean } {
  if (!state.stream || provider.streamUsage !== 'when-asked' || !state.body)
    return { body: state.request.body, addedStreamUsage: false };
  const { body, added } = state.endpoint.dialect.requestStreamUsage(state.body, state.request.body);
  return { body, addedStreamUsage: added };
}

/**
 * The URL, headers and body sent to one target: the provider key in the dialect's credential header, or, for a
 * provider reached through AWS with no key (docs/bedrock.md), a SigV4 signature made with the runtime's credentials.
 * A fallback gets the client's body with its own model; a continuation, the answer so far as the last message.
 */
async function targetRequest(options: CallTargets, target: Target, index: number): Promise<TargetRequest> {
  const { deps, state, sending } = options;
  const provider = target.provider;
  const base = deps.config.upstreams[provider.id];
  const proxySecrets = presentedProxyToken(state);
  const url = upstreamUrl(
    provider,
    base.baseUrl,
    target.upstreamPath,
    queryWithoutSecrets(state.request.rawQuery, proxySecrets),
  );
  const asked = upstreamBody(state, provider);
  // A model named in the path (Bedrock) is in the target's path already.
  const modelInBody = index !== 0 && !modelInPath(target.endpoint);
  let body = modelInBody ? setMember(asked.body, 'model', JSON.stringify(target.model)) : asked.body;
  if (sending.kind === 'prefill') body = sending.edit(body);
  const key = provider.id === state.provider.id ? state.upstreamKey : await fallbackKey(deps, state, target);
  const headers = upstreamRequestHeaders(
    state.request.headers,
    target.endpoint.dialect,
    key,
    body.length > 0,
    proxySecrets,
  );
  const addedStreamUsage = asked.addedStreamUsage;
  // Another provider's stored key is this request's credential too: cut out of whatever comes back.
  const secrets = key !== undefined && key !== state.upstreamKey ? [key] : undefined;
  if (key !== undefined || !base.aws) return { url, headers, body, addedStreamUsage, secrets };
  return {
    url,
    body,
    addedStreamUsage,
    ...(await signAwsRequest({ method: state.request.method, url, headers, body }, base.aws, deps.awsCredentials.get)),
  };
}

/**
 * The stored key of a fallback on another provider (stored mode only: planFailover refuses another
 * provider in pass-through mode); none for a provider reached through AWS, which is then signed.
 */
async function fallbackKey(deps: CallDeps, state: ProxyState, target: Target): Promise<string | undefined> {
  const { id, displayName } = target.provider;
  const accountId = state.token.accountId;
  return openStoredKey(
    deps.sealer,
    deps.providerKeys.get(accountId, id),
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
