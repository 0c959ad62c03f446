import { splitPair } from '../../tags';
import type { TagBudget } from '../../types';
import { SubjectBudgets, type BudgetSubject } from './subject-budgets';

const TAG: BudgetSubject<{ key: string; value: string }> = {
  name: 'tag',
  title: 'Tag budgets',
  intro: (
    <>
      Limit what one tag value may spend, for example a team: every request carrying it (in <code>x-proxy-tags</code> or
      from its token's own tags) counts. When a budget is used up, those requests are refused with 402 until the period
      resets (UTC).
    </>
  ),
  column: 'Tag',
  placeholder: 'e.g. team=search',
  inputAttributes: { autoCapitalize: 'off', spellcheck: false },
  parse: (text) => {
    const pair = splitPair(text);
    return pair && pair[0] !== '' && pair[1] !== '' ? { key: pair[0], value: pair[1] } : undefined;
  },
  hint: 'Enter the tag as key=value, for example team=search.',
  row: ({ key, value }) => ({
    key: `${key}=${value}`,
    attributes: { 'data-tag': `${key}=${value}` },
    cellClass: 'tag-cell mono',
    cell: (
      <>
        {key}=<wbr />
        {value}
      </>
    ),
    label: `tag ${key}=${value}`,
  }),
  save: (api, { key, value }, input) => api.setTagBudget(key, value, input),
  remove: (api, { key, value }) => api.removeTagBudget(key, value),
};

/** Budgets per tag value (`team=search`), across every token of the account (docs/tags.md). */
export function TagBudgets({ budgets, onChanged }: { budgets: TagBudget[] | undefined; onChanged: () => void }) {
  return <SubjectBudgets subject={TAG} budgets={budgets} onChanged={onChanged} />;
}
