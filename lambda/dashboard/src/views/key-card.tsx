import { useAction } from '../use-action';
import { useRef, useState } from 'preact/hooks';
import { useApi } from '../api-context';
import { Allowed } from '../caller';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';
import { formatDateTime } from '../format';
import type { ProviderInfo } from '../providers';
import type { Signing, StoredKey } from '../types';
import { SnippetBlock } from './snippet-block';
import { snippet, SNIPPET_LANGUAGES, type SnippetLanguage } from '../snippets';

interface Props {
  provider: ProviderInfo;
  stored: StoredKey | undefined;
  /** Every key of the provider's pool as the page loaded it, with its state. */
  pool: StoredKey[];
  /** False while the list of saved keys is still loading: the status line keeps its height. */
  known: boolean;
  /** Where the proxy's own AWS signing credentials come from (for a provider reached through AWS). */
  signing: Signing | undefined;
  onChanged: (provider: string, key: StoredKey | undefined) => void;
}

export function KeyCard({ provider, stored, pool, known, signing, onChanged }: Props) {
  const api = useApi();
  const [key, setKey] = useState('');
  const [language, setLanguage] = useState<SnippetLanguage>('typescript');
  const { busy, error, setError, run } = useAction();
  const [notice, setNotice] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const inputId = `key-${provider.id}`;
  const id = provider.id;

  const save = async (event: Event) => {
    event.preventDefault();
    const value = key.trim();
    if (!value) {
      setError(new Error(`Paste your ${provider.name} API key first.`));
      return;
    }
    setNotice('');
    await run(async () => {
      const saved = await api.saveKey(id, value);
      // The key leaves the page as soon as it is saved; only the server's hint remains.
      setKey('');
      onChanged(id, { provider: id, label: 'default', hint: saved.hint, updated_at: new Date().toISOString() });
      setNotice(stored ? 'Key replaced.' : 'Key saved.');
    });
  };

  const remove = async () => {
    setNotice('');
    await run(async () => {
      await api.deleteKey(id);
      onChanged(id, undefined);
      setNotice('Key deleted.');
      // The delete button disappears with the key; keep keyboard focus in this card.
      input.current?.focus();
    }, false);
  };

  return (
    <section class="card key-card" data-testid={`key-card-${id}`} aria-labelledby={`${inputId}-title`}>
      <div class="key-head">
        <h2 id={`${inputId}-title`} class="card-title">
          {provider.name}
        </h2>
        {known && (
          <span class={`badge ${stored ? 'badge-ok' : ''}`} data-testid={`key-badge-${id}`}>
            {stored ? 'Key saved' : provider.signsWithRole ? signedBy(signing) : 'No key'}
          </span>
        )}
      </div>
      <p class="key-status" data-testid={`key-status-${id}`}>
        {!known ? (
          '\u00a0'
        ) : stored ? (
          <>
            Saved key <code data-testid={`key-hint-${id}`}>{stored.hint}</code>, saved{' '}
            {formatDateTime(stored.updated_at)}
          </>
        ) : provider.signsWithRole ? (
          signingStatus(provider.name, signing)
        ) : (
          <>No key saved yet.</>
        )}
      </p>
      <KeyPool id={id} pool={pool} />
      <Allowed role="admin">
        <form class="key-form" onSubmit={(event) => void save(event)}>
          <label for={inputId}>{stored ? `Replace the ${provider.name} API key` : `${provider.name} API key`}</label>
          <div class="key-form-row">
            <input
              id={inputId}
              ref={input}
              type="password"
              value={key}
              autoComplete="off"
              spellcheck={false}
              placeholder={stored ? 'Paste a new key to replace the saved one' : 'Paste the key'}
              data-testid={`key-input-${id}`}
              onInput={(e) => setKey(e.currentTarget.value)}
            />
            <button type="submit" class="button button-primary" disabled={busy} data-testid={`key-save-${id}`}>
              {busy ? 'Saving…' : stored ? 'Replace key' : 'Save key'}
            </button>
            {stored && (
              <ConfirmButton
                label="Delete key"
                confirmLabel="Delete"
                question={`Delete the ${provider.name} key?`}
                testId={`key-delete-${id}`}
                onConfirm={remove}
              />
            )}
          </div>
        </form>
      </Allowed>
      <p class="notice-ok" aria-live="polite" data-testid={`key-notice-${id}`}>
        {notice}
      </p>
      <ErrorMessage error={error} testId={`key-error-${id}`} />
      <details class="snippets">
        <summary data-testid={`snippets-${id}`}>Code snippets for {provider.name}</summary>
        <div class="segmented snippet-languages" role="group" aria-label="Language">
          {SNIPPET_LANGUAGES.map((l) => (
            <button
              type="button"
              key={l.id}
              class="segment"
              aria-pressed={language === l.id}
              data-testid={`snippet-language-${l.id}-${id}`}
              onClick={() => setLanguage(l.id)}
            >
              {l.label}
            </button>
          ))}
        </div>
        <SnippetBlock
          title="Stored key"
          description={
            provider.signsWithRole
              ? `The proxy signs with its own AWS credentials (in AWS, its role), or adds your saved ${provider.name} key. Your code only holds a proxy token.`
              : `The proxy adds your saved ${provider.name} key. Your code only holds a proxy token.`
          }
          code={snippet(provider, language, 'stored')}
          testId={`snippet-stored-${id}`}
        />
        <SnippetBlock
          title="Pass-through"
          description={`Your code sends its own ${provider.name} key; the proxy forwards it and logs usage under your proxy token.`}
          code={snippet(provider, language, 'pass-through')}
          testId={`snippet-pass-through-${id}`}
        />
      </details>
    </section>
  );
}

/**
 * The provider's pool when it has more than one key or a key the provider set aside: each key's
 * label, last characters and state (docs/fallbacks.md, "Key pools"), as the page loaded them.
 */
function KeyPool({ id, pool }: { id: string; pool: StoredKey[] }) {
  if (pool.length < 2 && pool.every((k) => (k.state ?? 'ok') === 'ok')) return null;
  return (
    <ul class="key-pool" data-testid={`key-pool-${id}`}>
      {pool.map((k) => (
        <li key={k.label} data-testid={`key-pool-${id}-${k.label}`}>
          {k.label} <code>{k.hint}</code>{' '}
          <span
            class={`badge ${k.state === 'failing' ? 'badge-failing' : k.state === 'cooling' ? 'badge-estimated' : 'badge-ok'}`}
          >
            {k.state === 'failing'
              ? 'failing'
              : k.state === 'cooling' && k.cooling_until
                ? `cooling down until ${formatDateTime(k.cooling_until)}`
                : 'ok'}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** The badge of a provider the proxy signs for itself when no key is saved. */
function signedBy(signing: Signing | undefined): string {
  if (signing?.source !== 'local-credential-chain') return 'Signed by AWS role';
  return signing.credentials === 'none-found' ? 'No AWS credentials found' : 'Signed by local AWS credentials';
}

/** Where the signing credentials come from: in AWS the function's role; locally the machine's AWS credential chain. */
function signingStatus(name: string, signing: Signing | undefined): string {
  if (signing?.source !== 'local-credential-chain')
    return `No key saved: the proxy signs ${name} requests with its own AWS role. A key saved here is used instead.`;
  if (signing.credentials === 'none-found')
    return `No key saved, and the proxy found no AWS credentials on this machine to sign ${name} requests with: start it with AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, set, or save an API key for ${name} here.`;
  return `No key saved: the proxy signs ${name} requests with this machine's AWS credentials (the AWS SDK's credential chain: AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or ~/.aws). A key saved here is used instead.`;
}
