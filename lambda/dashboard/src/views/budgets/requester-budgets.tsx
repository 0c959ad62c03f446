import { useState } from 'preact/hooks';
import { useApi } from '../../api-context';
import { EmptyState } from '../../components/empty-state';
import { ErrorMessage } from '../../components/error-message';
import { SkeletonRows } from '../../components/skeleton';
import { useAsync } from '../../use-async';
import { BudgetEditor } from './budget-editor';
import { BudgetFields, useBudgetForm } from './budget-form';
import { TagBudgets } from './tag-budgets';

/** Budgets per requester label (`x-proxy-user`), across every token of the account; tag budgets come from the same answer. */
export function RequesterBudgets() {
  const api = useApi();
  const budgets = useAsync(() => api.budgets(), []);
  const [requester, setRequester] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const form = useBudgetForm();

  const add = async (event: Event) => {
    event.preventDefault();
    const label = requester.trim();
    if (!label) {
      setError(new Error('Enter the requester label, as sent in the x-proxy-user header.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await api.setRequesterBudget(label, form.input());
      setRequester('');
      form.reset();
      budgets.reload();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };

  const list = budgets.data?.requesters;
  return (
    <>
      <section class="card table-card" data-testid="requester-budgets" aria-labelledby="requester-budgets-title">
        <h2 class="card-title" id="requester-budgets-title">
          Requester budgets
        </h2>
        <p class="muted token-intro">
          Limit what one requester (the <code>x-proxy-user</code> header) may spend through any token of this account. When a budget
          is used up, that requester's requests are refused with 402 until the period resets (UTC).
        </p>
        <form class="budget-form budget-add" onSubmit={(event) => void add(event)} data-testid="requester-budget-add">
          <span class="budget-field">
            <label for="requester-budget-new-requester">Requester</label>
            <input
              id="requester-budget-new-requester"
              type="text"
              value={requester}
              autoComplete="off"
              placeholder="e.g. intern-script"
              data-testid="requester-budget-new-requester"
              onInput={(e) => setRequester(e.currentTarget.value)}
            />
          </span>
          <BudgetFields idPrefix="requester-budget-new" amount={form.amount} period={form.period} onAmount={form.setAmount} onPeriod={form.setPeriod} />
          <span class="budget-actions">
            <button type="submit" class="button button-primary button-small" disabled={busy} data-testid="requester-budget-new-save">
              {busy ? 'Saving…' : 'Add budget'}
            </button>
          </span>
        </form>
        <ErrorMessage error={error} testId="requester-budget-new-error" />
        <ErrorMessage error={budgets.error} testId="requester-budgets-load-error" onRetry={budgets.reload} />
        {!list ? (
          <SkeletonRows rows={2} label="Loading requester budgets…" />
        ) : list.length === 0 ? (
          <EmptyState title="No requester budgets yet." testId="requester-budgets-empty" />
        ) : (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Requester budgets">
            <table class="table" data-testid="requester-budgets-table">
              <thead>
                <tr>
                  <th scope="col">Requester</th>
                  <th scope="col">Budget</th>
                </tr>
              </thead>
              <tbody>
                {list.map((entry) => (
                  <tr key={entry.requester} data-testid="requester-budget-row" data-requester={entry.requester}>
                    <td data-label="Requester" class="break mono">
                      {entry.requester}
                    </td>
                    <td data-label="Budget">
                      <BudgetEditor
                        budget={entry}
                        label={`requester “${entry.requester}”`}
                        testId="requester-budget"
                        onSave={async (input) => {
                          await api.setRequesterBudget(entry.requester, input);
                          budgets.reload();
                        }}
                        onRemove={async () => {
                          await api.removeRequesterBudget(entry.requester);
                          budgets.reload();
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <TagBudgets budgets={budgets.data?.tags} onChanged={budgets.reload} />
    </>
  );
}
