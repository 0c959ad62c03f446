import type { BudgetStatus, BudgetSubject } from './budget';
import type { TokenBudgetHints } from './budget-hints';
import type { GateVerdict, PresentedToken } from '../auth/ports';
import type { BudgetStore } from './ports';
import type { Tags } from '../tags/tags';
import { quiet } from '../base/quiet';

const tagId = (key: string, value: string) => `${key}\u0000${value}`;

/**
 * The budgets one proxied request is held to, with their spend, read fresh (limits are exact).
 * A requester budget spans its account's tokens, so a request naming a requester reads that
 * requester's budget beside the gate call, and a request's tags (`x-proxy-tags`) their tag
 * budgets likewise. The token's own budget and its own tags' budgets are known from its gate:
 * read beside the gate when this instance has seen them before, after it otherwise.
 */
export function requestBudgets(
  deps: { budgets: BudgetStore; budgetHints: TokenBudgetHints },
  token: PresentedToken,
  requester: string | undefined,
  requestTags: Tags,
  gate: Promise<GateVerdict>,
  now: number,
): Promise<BudgetStatus[]> {
  const { accountId, tokenId } = token;
  const read = (subject: BudgetSubject) => quiet(deps.budgets.statusOf(accountId, subject, now));
  const tokenRead = () => read({ kind: 'token', tokenId });
  const early = deps.budgetHints.expects(tokenId) ? tokenRead() : undefined;
  const requesterRead = requester ? read({ kind: 'requester', requester }) : undefined;
  const tagReads = new Map<string, Promise<BudgetStatus | undefined>>();
  const readTag = (key: string, value: string) => {
    const id = tagId(key, value);
    if (!tagReads.has(id)) tagReads.set(id, read({ kind: 'tag', key, value }));
    return tagReads.get(id)!;
  };
  for (const tags of [requestTags, deps.budgetHints.expectedTags(tokenId)])
    for (const [key, value] of Object.entries(tags)) void readTag(key, value);
  return gate.then(async (verdict) => {
    const admitted = verdict.kind !== 'refused';
    const hasTokenBudget = admitted && verdict.tokenBudget;
    const tokenTags = (admitted && verdict.record.tags) || {};
    if (admitted) deps.budgetHints.note(tokenId, hasTokenBudget, tokenTags);
    // Only the tags the row will carry: the request's and the token's own (a hinted tag the token no longer has is left out).
    const applying = { ...requestTags, ...tokenTags };
    const statuses = await Promise.all([
      hasTokenBudget ? (early ?? tokenRead()) : undefined,
      requesterRead,
      ...Object.entries(applying).map(([key, value]) => readTag(key, value)),
    ]);
    return statuses.filter((status): status is BudgetStatus => status !== undefined);
  });
}
