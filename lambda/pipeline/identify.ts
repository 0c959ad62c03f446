import { admitSignIn } from '../auth/failed-sign-ins';
import { hashSecret, type ParsedToken } from '../auth/proxy-token';
import { requestBudgets } from '../budgets/request-budgets';
import type { Deps } from '../wiring/deps';
import { AuthenticationError } from '../base/errors';
import { quiet } from '../base/quiet';
import { requesterLabel } from '../usage/usage-row';
import type { Identified, Routed, StoreReads } from './state';
import { Prefetched, type Step } from './step';

const NO_KEY_READ = Promise.resolve(undefined);

type ReadDeps = Pick<
  Deps,
  | 'tokenGate'
  | 'budgets'
  | 'budgetHints'
  | 'providerKeys'
  | 'accountPrices'
  | 'accountSettings'
  | 'cache'
  | 'now'
  | 'preForwardBudget'
  | 'failedSignIns'
>;

/**
 * Everything a request reads from the store before forwarding, started at once. Warm and with no
 * budget or cache in play this is one call: the token gate (token check and rate count, token-gate.ts).
 * The stored key comes from the instance's short cache (a read beside the gate when cold), a
 * named requester's budget and the request's tag budgets are read beside the gate, and so is the
 * cache entry when asked for. The account's own prices and failover settings come from the instance's short cache too.
 * Each is awaited by the step that needs it; none rejects unawaited. All are held to one budget
 * (`preForwardBudget`): a read not done by then fails as the store being unavailable (a 503,
 * `Retry-After: 1`), except the cache lookup, which like any failed cache read makes the request a miss.
 */
export function startStoreReads(
  deps: ReadDeps,
  state: Pick<Routed, 'requester' | 'requestTags' | 'mode' | 'provider' | 'cache'>,
  identified: Identified,
): StoreReads {
  const { token, presented } = identified;
  const now = deps.now();
  // Every read starts now, so one budget from here bounds them all, those that wait on another included.
  const budget = deps.preForwardBudget();
  const inBudget = <T>(read: Promise<T>, what: string) => quiet(budget.bound(read, `the request's ${what} read`));
  const gate = deps.tokenGate.admit(presented, now);
  const cachedResponse = deps.cache.lookup(state.cache, now);
  return {
    gate: inBudget(gate, 'token gate'),
    // Tags a malformed header named are not read: the request is refused in step 5.
    budgets: inBudget(
      requestBudgets(
        deps,
        presented,
        requesterLabel(state.requester),
        state.requestTags.ok ? state.requestTags.tags : {},
        quiet(gate),
        now,
      ),
      'budgets',
    ),
    providerKey:
      state.mode === 'stored'
        ? inBudget(deps.providerKeys.get(token.accountId, state.provider.id), 'stored key')
        : NO_KEY_READ,
    accountPrices: inBudget(deps.accountPrices.list(token.accountId), 'account prices'),
    accountSettings: inBudget(deps.accountSettings.get(token.accountId), 'account settings'),
    cachedResponse: cachedResponse && budget.bound(cachedResponse, 'the cache lookup').catch(() => undefined),
  };
}

function missingCredentialMessage(state: Routed): string {
  const { header, scheme } = state.endpoint.dialect.credential;
  const where = scheme ? `the ${header} header as "${scheme} <token>"` : `the ${header} header`;
  return `Missing credential: send a proxy token (sk-proxy-…) in ${where}, or your own provider key there plus x-proxy-token.`;
}

/** The request's one credential and the proxy token it names, or a 401: read from the request alone. */
function identifiedToken(state: Routed): { credential: string; token: ParsedToken } {
  const { credential, token } = state;
  if (!credential) throw new AuthenticationError(missingCredentialMessage(state));
  // Repeated credential headers arrive joined with commas: which one was meant is unknowable.
  if (/[\s,]/.test(credential))
    throw new AuthenticationError('Ambiguous credential: send exactly one credential header with one value.');
  if (!token) {
    throw new AuthenticationError(
      state.mode === 'stored'
        ? 'Invalid proxy token.'
        : 'Pass-through mode needs the x-proxy-token header with a valid proxy token (sk-proxy-…) to identify the account.',
    );
  }
  return { credential, token };
}

/**
 * Step 2 (docs/behaviour.md, "Processing order"): the token carries its account id, so its store
 * reads start here, all at once, before any of them is awaited; unless its address has had too many
 * wrong credentials checked lately (auth/failed-sign-ins.ts), when it is refused with 429 unchecked.
 */
export function identify(deps: ReadDeps): Step<Routed, Identified> {
  return {
    name: 'identify',
    run(state) {
      const { credential, token } = identifiedToken(state);
      // Before any store read: from an address that keeps failing, a token is refused unchecked, at no cost.
      const signIn = admitSignIn(deps.failedSignIns, state.request.sourceIp, credential);
      const identified = {
        credential,
        token,
        presented: { accountId: token.accountId, tokenId: token.tokenId, secretHash: hashSecret(token.secret) },
        signIn,
      };
      return new Prefetched(identified, startStoreReads(deps, state, identified));
    },
  };
}
