import { Allowed } from '../../caller';
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useState } from 'preact/hooks';
import type { Api } from '../../api';
import { useApi } from '../../api-context';
import { useAction } from '../../use-action';
import { EmptyState } from '../../components/empty-state';
import { ErrorMessage } from '../../components/error-message';
import { SkeletonRows } from '../../components/skeleton';
import type { Budget, BudgetInput } from '../../types';
import { BudgetEditor } from './budget-editor';
import { BudgetFields, useBudgetForm } from './budget-form';
import { SaveButton } from '../../components/form-fields';

/** What one kind of account-wide budget (per requester, per tag) differs in: its subject, how it is typed, shown and saved. */
export interface BudgetSubject<S> {
  /** Prefix of the element ids and test ids: `tag` gives `tag-budget-row`, `tag-budget-new-tag`. */
  name: string;
  /** The card's heading, also the table's name for screen readers. */
  title: string;
  intro: ComponentChildren;
  /** The subject column's heading and the add form's field label. */
  column: string;
  placeholder: string;
  /** Attributes of the add form's text field beyond the common ones. */
  inputAttributes?: InputHTMLAttributes<HTMLInputElement>;
  /** The typed text as a subject; undefined shows `hint`. */
  parse: (text: string) => S | undefined;
  hint: string;
  /** The row: its key and data attribute, the subject cell, and what the budget limits for screen readers. */
  row: (subject: S) => {
    key: string;
    attributes: Record<string, string>;
    cellClass: string;
    cell: ComponentChildren;
    label: string;
  };
  save: (api: Api, subject: S, input: BudgetInput) => Promise<unknown>;
  remove: (api: Api, subject: S) => Promise<unknown>;
}

interface Props<S> {
  subject: BudgetSubject<S>;
  /** The budgets, undefined while loading. */
  budgets: (Budget & S)[] | undefined;
  onChanged: () => void;
  /** The load error of the budgets, with its retry, when this card shows it. */
  load?: { error: unknown; onRetry: () => void };
}

/** A card of budgets per subject: an add form, then a table of the subjects with their budgets editable in place. */
export function SubjectBudgets<S>({ subject, budgets, onChanged, load }: Props<S>) {
  const api = useApi();
  const [text, setText] = useState('');
  const { busy, error, setError, run } = useAction();
  const form = useBudgetForm();
  const { name, title, column } = subject;

  const add = async (event: Event) => {
    event.preventDefault();
    const parsed = subject.parse(text);
    if (parsed === undefined) {
      setError(new Error(subject.hint));
      return;
    }
    await run(async () => {
      await subject.save(api, parsed, form.input());
      setText('');
      form.reset();
      onChanged();
    });
  };

  return (
    <section class="card table-card" data-testid={`${name}-budgets`} aria-labelledby={`${name}-budgets-title`}>
      <h2 class="card-title" id={`${name}-budgets-title`}>
        {title}
      </h2>
      <p class="muted token-intro">{subject.intro}</p>
      <Allowed role="admin">
        <form class="budget-form budget-add" onSubmit={(event) => void add(event)} data-testid={`${name}-budget-add`}>
          <span class="budget-field">
            <label for={`${name}-budget-new-${name}`}>{column}</label>
            <input
              id={`${name}-budget-new-${name}`}
              type="text"
              value={text}
              autoComplete="off"
              {...subject.inputAttributes}
              placeholder={subject.placeholder}
              data-testid={`${name}-budget-new-${name}`}
              onInput={(e) => setText(e.currentTarget.value)}
            />
          </span>
          <BudgetFields
            idPrefix={`${name}-budget-new`}
            amount={form.amount}
            period={form.period}
            onAmount={form.setAmount}
            onPeriod={form.setPeriod}
            alertAt={form.alertAt}
            onAlertAt={form.setAlertAt}
          />
          <span class="budget-actions">
            <SaveButton busy={busy} testId={`${name}-budget-new-save`}>
              Add budget
            </SaveButton>
          </span>
        </form>
      </Allowed>
      <ErrorMessage error={error} testId={`${name}-budget-new-error`} />
      {load && <ErrorMessage error={load.error} testId={`${name}-budgets-load-error`} onRetry={load.onRetry} />}
      {!budgets ? (
        <SkeletonRows rows={2} label={`Loading ${title.toLowerCase()}…`} />
      ) : budgets.length === 0 ? (
        <EmptyState title={`No ${title.toLowerCase()} yet.`} testId={`${name}-budgets-empty`} />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={title}>
          <table class="table" data-testid={`${name}-budgets-table`}>
            <thead>
              <tr>
                <th scope="col">{column}</th>
                <th scope="col">Budget</th>
              </tr>
            </thead>
            <tbody>
              {budgets.map((entry) => {
                const row = subject.row(entry);
                return (
                  <tr key={row.key} data-testid={`${name}-budget-row`} {...row.attributes}>
                    <td data-label={column} class={row.cellClass}>
                      {row.cell}
                    </td>
                    <td data-label="Budget">
                      <BudgetEditor
                        budget={entry}
                        label={row.label}
                        testId={`${name}-budget`}
                        onSave={async (input) => {
                          await subject.save(api, entry, input);
                          onChanged();
                        }}
                        onRemove={async () => {
                          await subject.remove(api, entry);
                          onChanged();
                        }}
                      />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
