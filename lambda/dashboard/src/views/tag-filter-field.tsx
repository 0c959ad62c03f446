import { useState } from 'preact/hooks';
import { splitPair } from '../tags';

interface Props {
  /** `key=value` pairs already chosen. */
  tags: string[];
  onTags: (tags: string[]) => void;
  /** What is typed and not added yet (the form adds it on Apply too). */
  text: string;
  onText: (text: string) => void;
  suggestions: string[];
}

/**
 * Tags a row must all carry, one `key=value` at a time, shown as removable chips. Only the shape is
 * checked here; the server names any other problem (a key with capitals, say) when the filters apply.
 */
export function TagFilterField({ tags, onTags, text, onText, suggestions }: Props) {
  const [problem, setProblem] = useState<string | null>(null);
  const add = () => {
    const typed = text.trim();
    if (typed === '') return;
    const pair = splitPair(typed);
    if (!pair || pair[0] === '' || pair[1] === '') {
      setProblem('Write a tag as key=value, for example team=search.');
      return;
    }
    setProblem(null);
    onText('');
    if (!tags.includes(typed)) onTags([...tags, typed]);
  };
  // The chips take a grid row of their own below, so the fields beside this one keep their inputs in line.
  return (
    <>
      <div class="field tag-filter">
        <label for="logs-filter-tag">Tags (all must match)</label>
        <div class="tag-filter-row">
          <input
            id="logs-filter-tag"
            type="text"
            value={text}
            placeholder="team=search"
            autoComplete="off"
            autoCapitalize="off"
            spellcheck={false}
            list="log-tag-suggestions"
            aria-invalid={problem !== null}
            data-testid="logs-filter-tag"
            onInput={(e) => {
              onText(e.currentTarget.value);
              setProblem(null);
            }}
            onKeyDown={(e) => {
              // Enter adds the tag here; Apply is one Tab away.
              if (e.key === 'Enter') {
                e.preventDefault();
                add();
              }
            }}
          />
          <button type="button" class="button" data-testid="logs-filter-tag-add" onClick={add}>
            Add
          </button>
          <datalist id="log-tag-suggestions" data-testid="logs-tag-suggestions">
            {suggestions.map((tag) => (
              <option key={tag} value={tag} />
            ))}
          </datalist>
        </div>
        {problem && (
          <span class="field-error" role="alert" data-testid="logs-filter-tag-error">
            {problem}
          </span>
        )}
      </div>
      {tags.length > 0 && (
        <ul class="tag-chips filters-tags" aria-label="Tag filters">
          {tags.map((tag) => (
            <li key={tag} class="tag-chip" data-testid="logs-filter-tag-chip" data-tag={tag}>
              <span class="mono">{tag}</span>
              <button
                type="button"
                class="tag-chip-remove"
                aria-label={`Remove tag filter ${tag}`}
                data-testid="logs-filter-tag-remove"
                onClick={() => onTags(tags.filter((t) => t !== tag))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
