import { providerById, type Provider } from '../providers/registry';
import { isModelId } from '../providers/routes';
import type { Endpoint, EndpointKind } from '../providers/types';

/** The request header naming the fallbacks, in order (docs/fallbacks.md). Never sent upstream (an `x-proxy-` header). */
export const FALLBACK_HEADER = 'x-proxy-fallback';
/** Seconds a stream may take to its first byte before the next target is tried. */
export const FIRST_TOKEN_HEADER = 'x-proxy-first-token-timeout';
/** Seconds a started stream may stay silent before it is continued on the next target. */
export const STALL_HEADER = 'x-proxy-stall-timeout';

/** The header's value that turns an account's and a token's default fallbacks off for one request. */
export const NO_FALLBACK = 'none';

/** The limits a request gets when neither it nor its account sets one. */
export const DEFAULT_FIRST_TOKEN_MS = 10_000;
export const DEFAULT_STALL_MS = 10_000;
/** More would only stretch a failing request's wait. */
export const MAX_FALLBACKS = 3;
/** The bounds of a limit a request may set, in seconds. */
const LIMIT_RANGE_S = { min: 1, max: 300 };

/** Endpoints that name a model (in the body, or Bedrock's path), so a fallback is the same request with another model. */
const FALLBACK_KINDS: ReadonlySet<EndpointKind> = new Set([
  'chat',
  'messages',
  'responses',
  'embeddings',
  'converse',
  'invoke',
]);

/** The segment of an endpoint's path that names the model (Bedrock's `/model/{model}/…`). */
const MODEL_SEGMENT = '{model}';

/** The endpoint names the model in its path (Bedrock), not in the body. */
export const modelInPath = (endpoint: Endpoint) => endpoint.path.includes(MODEL_SEGMENT);

/**
 * The target with the model in its path where the endpoint's path names one (Bedrock), checked as
 * the route checks the model asked for: the path keeps its shape, so it reaches the same operation.
 */
function pathTarget(target: Target): Target | string {
  const { endpoint, model } = target;
  if (!modelInPath(endpoint)) return target;
  if (!isModelId(model)) return `"${model}" is not a model id.`;
  return { ...target, upstreamPath: endpoint.path.replace(MODEL_SEGMENT, encodeURIComponent(model)) };
}

/** Where one attempt goes: a provider, the model asked of it, and its endpoint there. */
export interface Target {
  provider: Provider;
  endpoint: Endpoint;
  model: string;
  /** The path below the provider's base URL. */
  upstreamPath: string;
}

/** The targets a request may be answered by, primary first, and the limits that move it on to the next. */
export interface FailoverPlan {
  targets: readonly Target[];
  firstTokenMs: number;
  stallMs: number;
}

export type PlanResult = { ok: true; plan: FailoverPlan } | { ok: false; message: string; param: string };

/** What the token and the account set for this request's model, used where the request sets nothing. */
export interface FailoverDefaults {
  /** The token's default fallbacks for the body's model; they win over the account's. */
  token?: readonly string[];
  account?: readonly string[];
  /** The account's own limits, which the request's headers override. */
  firstTokenMs?: number;
  stallMs?: number;
}

export interface PlanInput {
  headers: Record<string, string | undefined>;
  primary: Target;
  /** Pass-through requests carry the client's own key, which only its provider may see. */
  mode: 'stored' | 'pass-through';
  defaults?: FailoverDefaults;
}

/** The fallbacks a request gets, and where they came from (for its refusals): the header, else the token's, else the account's. */
export function chosenFallbacks(
  header: string | undefined,
  defaults: FailoverDefaults = {},
): { entries: readonly string[]; source: string; fromHeader: boolean } | undefined {
  const value = header?.trim();
  if (value) {
    if (value.toLowerCase() === NO_FALLBACK) return undefined;
    return { entries: value.split(',').map((entry) => entry.trim()), source: `${FALLBACK_HEADER}:`, fromHeader: true };
  }
  if (defaults.token?.length)
    return { entries: defaults.token, source: "The token's default fallbacks:", fromHeader: false };
  if (defaults.account?.length)
    return { entries: defaults.account, source: "The account's default fallbacks:", fromHeader: false };
  return undefined;
}

/** `<model>` (same provider) or `<provider>/<model>` (another provider with an endpoint of the same kind and wire format). */
function fallbackTarget(entry: string, input: PlanInput): Target | string {
  const { primary } = input;
  const slash = entry.indexOf('/');
  const named = slash > 0 ? providerById(entry.slice(0, slash)) : undefined;
  if (!named) return pathTarget({ ...primary, model: entry });
  const model = entry.slice(slash + 1);
  if (!model) return `"${entry}" names no model after the provider.`;
  const endpoint = named.endpoints.find(
    (candidate) =>
      candidate.kind === primary.endpoint.kind &&
      candidate.dialect.name === primary.endpoint.dialect.name &&
      Boolean(candidate.streams) === Boolean(primary.endpoint.streams),
  );
  if (!endpoint) return `provider ${named.id} has no ${primary.endpoint.kind} endpoint of the same API shape.`;
  if (named.id !== primary.provider.id && input.mode === 'pass-through')
    return `"${entry}" is another provider: a request carrying its own provider key (pass-through mode) can only fall back to models of the same provider.`;
  return pathTarget({ provider: named, endpoint, model, upstreamPath: endpoint.path });
}

function limitMs(value: string | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
  const seconds = Number(value);
  return limitInRange(seconds) ? Math.round(seconds * 1000) : undefined;
}

/** Whether a limit in seconds is one a request or an account may set. */
export function limitInRange(seconds: number): boolean {
  return seconds >= LIMIT_RANGE_S.min && seconds <= LIMIT_RANGE_S.max;
}

/**
 * The request's targets from `x-proxy-fallback`, or else the token's or the account's defaults for
 * its model, checked before anything is sent: a bad entry is refused (400), never silently skipped.
 */
export function planFailover(input: PlanInput): PlanResult {
  const { defaults = {} } = input;
  const firstTokenMs = limitMs(input.headers[FIRST_TOKEN_HEADER], defaults.firstTokenMs ?? DEFAULT_FIRST_TOKEN_MS);
  if (firstTokenMs === undefined)
    return { ok: false, message: badLimit(FIRST_TOKEN_HEADER), param: FIRST_TOKEN_HEADER };
  const stallMs = limitMs(input.headers[STALL_HEADER], defaults.stallMs ?? DEFAULT_STALL_MS);
  if (stallMs === undefined) return { ok: false, message: badLimit(STALL_HEADER), param: STALL_HEADER };
  const limits = { firstTokenMs, stallMs };
  const alone: PlanResult = { ok: true, plan: { targets: [input.primary], ...limits } };
  const chosen = chosenFallbacks(input.headers[FALLBACK_HEADER], defaults);
  if (!chosen) return alone;

  const refuse = (message: string): PlanResult => ({
    ok: false,
    message: `${chosen.source} ${message}`,
    param: FALLBACK_HEADER,
  });
  if (!FALLBACK_KINDS.has(input.primary.endpoint.kind) || !input.primary.model) {
    // Defaults are for the requests that can fall back; only a header asking for the impossible is refused.
    if (chosen.fromHeader)
      return refuse(
        'fallbacks apply to requests that name a model (chat completions, messages, responses, embeddings, Bedrock).',
      );
    return alone;
  }
  const { entries } = chosen;
  if (entries.some((entry) => entry === '')) return refuse('an entry is empty.');
  if (entries.length > MAX_FALLBACKS) return refuse(`at most ${MAX_FALLBACKS} fallbacks.`);
  const targets: Target[] = [input.primary];
  for (const entry of entries) {
    const target = fallbackTarget(entry, input);
    if (typeof target === 'string') return refuse(target);
    targets.push(target);
  }
  return { ok: true, plan: { targets, ...limits } };
}

/**
 * Why default fallbacks saved for a model of `providerId` can never be used (an unknown provider, an
 * entry naming a provider without an endpoint of the same API shape, more than 3), or undefined.
 */
export function savedFallbacksProblem(providerId: string, entries: readonly string[]): string | undefined {
  const provider = providerById(providerId);
  if (!provider) return `unknown provider "${providerId.slice(0, 100)}".`;
  const kinds = provider.endpoints.filter((endpoint) => FALLBACK_KINDS.has(endpoint.kind));
  if (!kinds.length) return `provider ${provider.id} has no endpoint that can fall back.`;
  if (entries.length < 1 || entries.length > MAX_FALLBACKS) return `1 to ${MAX_FALLBACKS} fallbacks.`;
  for (const entry of entries) {
    if (entry.trim() === '' || entry.includes(',')) return 'an entry is empty or holds a comma.';
    // Usable when at least one of the provider's endpoints can fall back to it.
    const problems = kinds.map((endpoint) =>
      fallbackTarget(entry.trim(), {
        headers: {},
        mode: 'stored',
        primary: { provider, endpoint, model: 'any', upstreamPath: endpoint.path },
      }),
    );
    const problem = problems.find((result) => typeof result === 'string');
    if (problems.every((result) => typeof result === 'string')) return problem;
  }
  return undefined;
}

function badLimit(header: string): string {
  return `${header} must be a number of seconds from ${LIMIT_RANGE_S.min} to ${LIMIT_RANGE_S.max}.`;
}

/** How a target is named in a row's attempts and in logs. */
export function targetLabel(target: Pick<Target, 'provider' | 'model'>): string {
  return `${target.provider.id}/${target.model}`;
}
