import { Allowed } from '../../caller';
import { useAction } from '../../use-action';
import { useState } from 'preact/hooks';
import { ConfirmButton } from '../../components/confirm-button';
import { ErrorMessage } from '../../components/error-message';
import type { Budget, BudgetInput } from '../../types';
import { BudgetBar } from './budget-bar';
import { BudgetFields, useBudgetForm } from './budget-form';
import { SaveButton } from '../../components/form-fields';

interface Props {
  budget: Budget | null | undefined;
  /** What the budget limits, for screen readers: `token “ci”`. */
  label: string;
  testId: string;
  onSave: (input: BudgetInput) => Promise<void>;
  onRemove: () => Promise<void>;
}

/** A budget shown as a bar, with set / change / remove in place. */
export function BudgetEditor({ budget, label, testId, onSave, onRemove }: Props) {
  const [editing, setEditing] = useState(false);
  const { busy, error, setError, run } = useAction();
  const form = useBudgetForm(budget ?? undefined);

  const open = () => {
    form.reset(budget ?? undefined);
    setError(undefined);
    setEditing(true);
  };

  const save = async (event: Event) => {
    event.preventDefault();
    await run(async () => {
      await onSave(form.input());
      setEditing(false);
    });
  };

  const remove = async () => {
    await run(onRemove, false);
  };

  if (editing) {
    return (
      <form
        class="budget-form"
        onSubmit={(event) => void save(event)}
        aria-label={`Budget for ${label}`}
        data-testid={`${testId}-form`}
      >
        <BudgetFields
          idPrefix={testId}
          amount={form.amount}
          period={form.period}
          onAmount={form.setAmount}
          onPeriod={form.setPeriod}
          alertAt={form.alertAt}
          onAlertAt={form.setAlertAt}
        />
        <span class="budget-actions">
          <SaveButton busy={busy} testId={`${testId}-save`}>
            Save
          </SaveButton>
          <button
            type="button"
            class="button button-small"
            onClick={() => setEditing(false)}
            data-testid={`${testId}-cancel`}
          >
            Cancel
          </button>
        </span>
        <ErrorMessage error={error} testId={`${testId}-error`} />
      </form>
    );
  }
  return (
    <div class="budget-cell">
      {budget ? (
        <BudgetBar budget={budget} testId={`${testId}-bar`} label={`Budget of ${label}`} />
      ) : (
        <span class="muted" data-testid={`${testId}-none`}>
          No budget
        </span>
      )}
      <Allowed role="admin">
        <span class="budget-actions">
          <button type="button" class="button button-small" onClick={open} data-testid={`${testId}-edit`}>
            {budget ? 'Change' : 'Set budget'}
          </button>
          {budget && (
            <ConfirmButton
              label="Remove"
              confirmLabel="Remove budget"
              question="Spending is no longer limited."
              testId={`${testId}-remove`}
              onConfirm={remove}
            />
          )}
        </span>
      </Allowed>
      <ErrorMessage error={error} testId={`${testId}-error`} />
    </div>
  );
}
