import { useApi } from '../../api-context';
import { useAsync } from '../../use-async';
import { SubjectBudgets, type BudgetSubject } from './subject-budgets';
import { TagBudgets } from './tag-budgets';

const REQUESTER: BudgetSubject<{ requester: string }> = {
  name: 'requester',
  title: 'Requester budgets',
  intro: (
    <>
      Limit what one requester (the <code>x-proxy-user</code> header) may spend through any token of this account. When
      a budget is used up, that requester's requests are refused with 402 until the period resets (UTC).
    </>
  ),
  column: 'Requester',
  placeholder: 'e.g. intern-script',
  parse: (text) => (text.trim() ? { requester: text.trim() } : undefined),
  hint: 'Enter the requester label, as sent in the x-proxy-user header.',
  row: ({ requester }) => ({
    key: requester,
    attributes: { 'data-requester': requester },
    cellClass: 'break mono',
    cell: requester,
    label: `requester “${requester}”`,
  }),
  save: (api, { requester }, input) => api.setRequesterBudget(requester, input),
  remove: (api, { requester }) => api.removeRequesterBudget(requester),
};

/** Budgets per requester label (`x-proxy-user`), across every token of the account; tag budgets come from the same answer. */
export function RequesterBudgets() {
  const api = useApi();
  const budgets = useAsync(() => api.budgets(), []);
  return (
    <>
      <SubjectBudgets
        subject={REQUESTER}
        budgets={budgets.data?.requesters}
        onChanged={budgets.reload}
        load={{ error: budgets.error, onRetry: budgets.reload }}
      />
      <TagBudgets budgets={budgets.data?.tags} onChanged={budgets.reload} />
    </>
  );
}
