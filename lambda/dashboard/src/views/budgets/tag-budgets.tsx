import { useState } from 'preact/hooks';
import { useApi } from '../../api-context';
import { EmptyState } from '../../components/empty-state';
import { ErrorMessage } from '../../components/error-message';
import { SkeletonRows } from '../../components/skeleton';
import { splitPair } from '../../tags';
import type { TagBudget } from '../../types';
import { BudgetEditor } from './budget-editor';
import { BudgetFields, useBudgetForm } from './budget-form';

/** Budgets per tag value (`team=search`), across every token of the account (docs/tags.md). */
export function TagBudgets({ budgets, onChanged }: { budgets: TagBudget[] | undefined; onChanged: () => void }) {
  const api = useApi();
  const [tag, setTag] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const form = useBudgetForm();

  const add = async (event: Event) => {
    event.preventDefault();
    const pair = splitPair(tag);
    if (!pair || pair[0] === '' || pair[1] === '') {
      setError(new Error('Enter the tag as key=value, for example team=search.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await api.setTagBudget(pair[0], pair[1], form.input());
      setTag('');
      form.reset();
      onChanged();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card table-card" data-testid="tag-budgets" aria-labelledby="tag-budgets-title">
      <h2 class="card-title" id="tag-budgets-title">
        Tag budgets
      </h2>
      <p class="muted token-intro">
        Limit what one tag value may spend, for example a team: every request carrying it (in <code>x-proxy-tags</code> or from its
        token's own tags) counts. When a budget is used up, those requests are refused with 402 until the period resets (UTC).
      </p>
      <form class="budget-form budget-add" onSubmit={(event) => void add(event)} data-testid="tag-budget-add">
        <span class="budget-field">
          <label for="tag-budget-new-tag">Tag</label>
          <input
            id="tag-budget-new-tag"
            type="text"
            value={tag}
            autoComplete="off"
            autoCapitalize="off"
            spellcheck={false}
            placeholder="e.g. team=search"
            data-testid="tag-budget-new-tag"
            onInput={(e) => setTag(e.currentTarget.value)}
          />
        </span>
        <BudgetFields idPrefix="tag-budget-new" amount={form.amount} period={form.period} onAmount={form.setAmount} onPeriod={form.setPeriod} />
        <span class="budget-actions">
          <button type="submit" class="button button-primary button-small" disabled={busy} data-testid="tag-budget-new-save">
            {busy ? 'Saving…' : 'Add budget'}
          </button>
        </span>
      </form>
      <ErrorMessage error={error} testId="tag-budget-new-error" />
      {!budgets ? (
        <SkeletonRows rows={2} label="Loading tag budgets…" />
      ) : budgets.length === 0 ? (
        <EmptyState title="No tag budgets yet." testId="tag-budgets-empty" />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Tag budgets">
          <table class="table" data-testid="tag-budgets-table">
            <thead>
              <tr>
                <th scope="col">Tag</th>
                <th scope="col">Budget</th>
              </tr>
            </thead>
            <tbody>
              {budgets.map((entry) => (
                <tr key={`${entry.key}=${entry.value}`} data-testid="tag-budget-row" data-tag={`${entry.key}=${entry.value}`}>
                  <td data-label="Tag" class="tag-cell mono">
                    {entry.key}=<wbr />
                    {entry.value}
                  </td>
                  <td data-label="Budget">
                    <BudgetEditor
                      budget={entry}
                      label={`tag ${entry.key}=${entry.value}`}
                      testId="tag-budget"
                      onSave={async (input) => {
                        await api.setTagBudget(entry.key, entry.value, input);
                        onChanged();
                      }}
                      onRemove={async () => {
                        await api.removeTagBudget(entry.key, entry.value);
                        onChanged();
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
  );
}
