import { Allowed } from '../caller';
import { useState } from 'preact/hooks';
import { useApi } from '../api-context';
import { useAction } from '../use-action';
import { ConfirmButton } from '../components/confirm-button';
import { EmptyState } from '../components/empty-state';
import { ErrorMessage } from '../components/error-message';
import { SkeletonRows } from '../components/skeleton';
import { PROVIDERS, providerName } from '../providers';
import { useAsync } from '../use-async';
import { SaveButton, TextField } from '../components/form-fields';

/** `gpt-4o-mini, prov-d/mistral-small-latest` → the list, in order. */
const parseList = (text: string) =>
  text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

/** Seconds as typed: a number is sent as one, anything else as typed so the server's message names the field. */
const parseSeconds = (text: string): number | string | null =>
  text.trim() === '' ? null : /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text.trim();

/**
 * The account's default fallbacks per model and its first-token and stall limits (docs/fallbacks.md,
 * "Defaults"): what a request gets when it names no `x-proxy-fallback` of its own.
 */
export function DefaultFallbacks() {
  const api = useApi();
  const settings = useAsync(() => api.fallbackSettings(), []);
  const [provider, setProvider] = useState<string>(PROVIDERS[0].id);
  const [model, setModel] = useState('');
  const [list, setList] = useState('');
  const [limits, setLimits] = useState<{ first: string; stall: string } | undefined>();
  const { busy, error, setError, run } = useAction();

  const add = async (event: Event) => {
    event.preventDefault();
    if (!model.trim()) {
      setError(new Error('Enter the model the requests name.'));
      return;
    }
    await run(async () => {
      await api.setFallbacks(provider, model.trim(), parseList(list));
      setModel('');
      setList('');
      settings.reload();
    });
  };

  const saveLimits = async (event: Event) => {
    event.preventDefault();
    if (!limits) return;
    await run(async () => {
      await api.setFallbackLimits({
        first_token_timeout: parseSeconds(limits.first),
        stall_timeout: parseSeconds(limits.stall),
      });
      setLimits(undefined);
      settings.reload();
    });
  };

  const data = settings.data;
  const limitText = (seconds: number | null | undefined) => (seconds == null ? '' : String(seconds));
  return (
    <section class="card table-card" data-testid="default-fallbacks" aria-labelledby="default-fallbacks-title">
      <h2 class="card-title" id="default-fallbacks-title">
        Default fallbacks
      </h2>
      <p class="muted token-intro">
        Models tried in order when a model fails, for requests that send no <code>x-proxy-fallback</code> header. A
        token's own defaults win over these; <code>x-proxy-fallback: none</code> turns them off for one request.
      </p>
      <Allowed role="admin">
        <form class="budget-form budget-add" onSubmit={(event) => void add(event)} data-testid="fallback-add">
          <span class="budget-field">
            <label for="fallback-new-provider">Provider</label>
            <select
              id="fallback-new-provider"
              value={provider}
              data-testid="fallback-new-provider"
              onChange={(e) => setProvider(e.currentTarget.value)}
            >
              {PROVIDERS.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </span>
          <TextField
            id="fallback-new-model"
            label="Model"
            value={model}
            placeholder="e.g. gpt-4o"
            literal
            testId="fallback-new-model"
            onInput={setModel}
          />
          <TextField
            id="fallback-new-list"
            label="Fallbacks, in order"
            value={list}
            placeholder="gpt-4o-mini, prov-d/mistral-small-latest"
            literal
            testId="fallback-new-list"
            onInput={setList}
          />
          <span class="budget-actions">
            <SaveButton busy={busy} testId="fallback-new-save">
              Set fallbacks
            </SaveButton>
          </span>
        </form>
      </Allowed>
      <ErrorMessage error={error} testId="fallback-error" />
      <ErrorMessage error={settings.error} testId="fallbacks-load-error" onRetry={settings.reload} />
      {!data ? (
        <SkeletonRows rows={2} label="Loading default fallbacks…" />
      ) : (
        <>
          {data.fallbacks.length === 0 ? (
            <EmptyState title="No default fallbacks yet." testId="fallbacks-empty" />
          ) : (
            <div class="table-scroll" tabIndex={0} role="region" aria-label="Default fallbacks">
              <table class="table" data-testid="fallbacks-table">
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Model</th>
                    <th scope="col">Fallbacks</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.fallbacks.map((entry) => (
                    <tr
                      key={`${entry.provider}/${entry.model}`}
                      data-testid="fallback-row"
                      data-key={`${entry.provider}/${entry.model}`}
                    >
                      <td data-label="Provider">{providerName(entry.provider)}</td>
                      <td data-label="Model" class="break mono">
                        {entry.model}
                      </td>
                      <td data-label="Fallbacks" class="break mono">
                        {entry.fallbacks.join(' → ')}
                      </td>
                      <td data-label="Actions">
                        <Allowed role="admin">
                          <ConfirmButton
                            label="Remove"
                            confirmLabel="Remove fallbacks"
                            question={`Remove the default fallbacks of ${entry.model}?`}
                            testId="fallback-remove"
                            onConfirm={async () => {
                              await run(() => api.removeFallbacks(entry.provider, entry.model), false);
                              settings.reload();
                            }}
                          />
                        </Allowed>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {limits ? (
            <form class="budget-form" onSubmit={(event) => void saveLimits(event)} data-testid="fallback-limits-form">
              <span class="budget-field">
                <label for="fallback-first-token">First-token limit (s)</label>
                <input
                  id="fallback-first-token"
                  type="text"
                  inputMode="decimal"
                  value={limits.first}
                  placeholder="10"
                  data-testid="fallback-first-token"
                  onInput={(e) => setLimits({ ...limits, first: e.currentTarget.value })}
                />
              </span>
              <span class="budget-field">
                <label for="fallback-stall">Stall limit (s)</label>
                <input
                  id="fallback-stall"
                  type="text"
                  inputMode="decimal"
                  value={limits.stall}
                  placeholder="10"
                  data-testid="fallback-stall"
                  onInput={(e) => setLimits({ ...limits, stall: e.currentTarget.value })}
                />
              </span>
              <span class="budget-actions">
                <SaveButton busy={busy} testId="fallback-limits-save">
                  Save limits
                </SaveButton>
                <button type="button" class="button button-small" onClick={() => setLimits(undefined)}>
                  Cancel
                </button>
              </span>
            </form>
          ) : (
            <p class="settings-cell" data-testid="fallback-limits">
              <span class="settings-summary">
                First token within {data.first_token_timeout ?? 10} s, no stall over {data.stall_timeout ?? 10} s while
                a fallback is left.
              </span>
              <Allowed role="admin">
                <button
                  type="button"
                  class="button button-small"
                  data-testid="fallback-limits-edit"
                  onClick={() =>
                    setLimits({ first: limitText(data.first_token_timeout), stall: limitText(data.stall_timeout) })
                  }
                >
                  Edit
                </button>
              </Allowed>
            </p>
          )}
        </>
      )}
    </section>
  );
}
