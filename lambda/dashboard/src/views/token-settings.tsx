import { useAction } from '../use-action';
import { useState } from 'preact/hooks';
import { useApi } from '../api-context';
import { ErrorMessage } from '../components/error-message';
import { formatInt } from '../format';
import { formatTagList, parseTagList, sortedTags } from '../tags';
import type { TokenInfo } from '../types';
import { formatDefaults, parseDefaults } from '../fallback-text';
import { SaveButton, TextField } from '../components/form-fields';

/** `claude-haiku-, gpt-4.1-mini` → the list; blank → no list (any model). */
function parseModels(text: string): string[] | null {
  const models = text
    .split(/[,\n]/)
    .map((model) => model.trim())
    .filter((model) => model !== '');
  return models.length > 0 ? models : null;
}

/** A whole number is sent as a number; anything else as typed, so the server's message names the field. */
function parseRate(text: string): number | string | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  return /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
}

function Summary({ token }: { token: TokenInfo }) {
  const tags = sortedTags(token.tags);
  const rate = token.limits?.requests_per_minute ?? null;
  const models = token.limits?.models ?? null;
  return (
    <>
      {tags.length > 0 ? (
        <ul class="tag-chips" data-testid="token-tags" aria-label="Tags">
          {tags.map(([key, value]) => (
            <li key={key} class="tag-chip is-static" data-testid="token-tag" data-tag={`${key}=${value}`}>
              <span class="mono">
                {key}={value}
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <span class="muted settings-summary" data-testid="token-tags-none">
          No tags
        </span>
      )}
      <span class="settings-summary" data-testid="token-limit-rate" data-value={rate ?? ''}>
        {rate === null ? <span class="muted">Default rate limit</span> : `${formatInt(rate)} requests a minute`}
      </span>
      <span class="settings-summary break" data-testid="token-limit-models" data-value={models?.join(',') ?? ''}>
        {models === null ? (
          <span class="muted">Any model</span>
        ) : (
          <>
            Models: <span class="mono">{models.join(', ')}</span>
          </>
        )}
      </span>
      {token.fallbacks?.length ? (
        <span class="settings-summary break" data-testid="token-fallbacks" data-value={formatDefaults(token.fallbacks)}>
          Fallbacks: <span class="mono">{formatDefaults(token.fallbacks)}</span>
        </span>
      ) : null}
    </>
  );
}

/**
 * A token's own tags (added to each of its rows) and limits (its rate and its allowed models), shown
 * in the token's row and edited there. Each part is saved only when it changed; the server's
 * messages, which name the field, are shown as they come.
 */
export function TokenSettings({ token, onChanged }: { token: TokenInfo; onChanged: () => void }) {
  const api = useApi();
  const [editing, setEditing] = useState(false);
  const { busy, error, setError, run } = useAction();
  const [tagText, setTagText] = useState('');
  const [rateText, setRateText] = useState('');
  const [modelsText, setModelsText] = useState('');
  const [fallbacksText, setFallbacksText] = useState('');
  const id = `token-settings-${token.token_id}`;

  const open = () => {
    setTagText(formatTagList(token.tags));
    setRateText(token.limits?.requests_per_minute == null ? '' : String(token.limits.requests_per_minute));
    setModelsText(token.limits?.models?.join(', ') ?? '');
    setFallbacksText(formatDefaults(token.fallbacks));
    setError(undefined);
    setEditing(true);
  };

  const save = async (event: Event) => {
    event.preventDefault();
    const tags = parseTagList(tagText);
    if (!tags.ok) {
      setError(new Error(tags.message));
      return;
    }
    const fallbacks = parseDefaults(fallbacksText);
    if (typeof fallbacks === 'string') {
      setError(new Error(fallbacks));
      return;
    }
    const limits = { requests_per_minute: parseRate(rateText), models: parseModels(modelsText) };
    const before = {
      requests_per_minute: token.limits?.requests_per_minute ?? null,
      models: token.limits?.models ?? null,
    };
    await run(async () => {
      if (formatTagList(tags.tags) !== formatTagList(token.tags)) await api.setTokenTags(token.token_id, tags.tags);
      if (JSON.stringify(limits) !== JSON.stringify(before)) await api.setTokenLimits(token.token_id, limits);
      if (formatDefaults(fallbacks) !== formatDefaults(token.fallbacks))
        await api.setTokenFallbacks(token.token_id, fallbacks);
      setEditing(false);
    });
    // After a refusal too: what was saved before it shows once the list reloads; the form stays open with the message.
    onChanged();
  };

  if (token.revoked_at) {
    return (
      <div class="settings-cell">
        <Summary token={token} />
      </div>
    );
  }
  if (editing) {
    const label = token.name || token.token_id;
    return (
      <form
        class="settings-form"
        onSubmit={(event) => void save(event)}
        aria-label={`Tags and limits of token “${label}”`}
        data-testid="token-settings-form"
      >
        <TextField
          id={`${id}-tags`}
          label="Tags"
          value={tagText}
          placeholder="team=search, feature=autocomplete"
          literal
          testId="token-settings-tags"
          hint="key=value, comma-separated; added to every request of this token."
          onInput={setTagText}
        />
        <TextField
          id={`${id}-rate`}
          label="Requests a minute"
          inputMode="numeric"
          value={rateText}
          placeholder="Default"
          testId="token-settings-rate"
          hint="1 to 120,000; blank for the default."
          onInput={setRateText}
        />
        <TextField
          id={`${id}-models`}
          label="Allowed models"
          value={modelsText}
          placeholder="Any model"
          literal
          testId="token-settings-models"
          hint="Model ids or prefixes, comma-separated (claude-haiku-); blank for any."
          onInput={setModelsText}
        />
        <TextField
          id={`${id}-fallbacks`}
          label="Default fallbacks"
          value={fallbacksText}
          placeholder="Account's"
          literal
          testId="token-settings-fallbacks"
          hint="provider/model: fallback, fallback; … (prov-b/gpt-4o: gpt-4o-mini); win over the account's."
          onInput={setFallbacksText}
        />
        <span class="budget-actions">
          <SaveButton busy={busy} testId="token-settings-save">
            Save
          </SaveButton>
          <button
            type="button"
            class="button button-small"
            onClick={() => setEditing(false)}
            data-testid="token-settings-cancel"
          >
            Cancel
          </button>
        </span>
        <ErrorMessage error={error} testId="token-settings-error" />
      </form>
    );
  }
  return (
    <div class="settings-cell">
      <Summary token={token} />
      <button type="button" class="button button-small" onClick={open} data-testid="token-settings-edit">
        Edit
      </button>
    </div>
  );
}
