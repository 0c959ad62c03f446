import { useEffect, useRef, useState } from 'preact/hooks';
import { API_PATHS } from '../../../api/paths';
import { request, signInMessage, signInOptions } from '../api';
import { useAction } from '../use-action';

interface Props {
  onSignedIn: (token: string) => void;
  /** Why the previous session ended, if it did not end by signing out. */
  notice: string | null;
}

export function SignIn({ onSignedIn, notice }: Props) {
  const [token, setToken] = useState('');
  const { busy, error: failure, setError, run } = useAction();
  // A problem found before sending is shown as it is; the server's answers get the sign-in wording.
  const error = typeof failure === 'string' || failure === undefined ? failure : signInMessage(failure);
  const input = useRef<HTMLInputElement>(null);
  const [oidc, setOidc] = useState(false);
  useEffect(() => {
    void signInOptions().then((options) => setOidc(options.oidc));
  }, []);
  useEffect(() => {
    document.title = 'Sign in · AI Usage Proxy';
    input.current?.focus();
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    const value = token.trim();
    if (!value) {
      setError('Paste your proxy token to sign in.');
      input.current?.focus();
      return;
    }
    // Reading the key list needs the manage scope, so it checks both that the token is valid and that it may sign in.
    const signedIn = await run(() => request(value, 'GET', API_PATHS.keys).then(() => undefined));
    if (signedIn) onSignedIn(value);
    else input.current?.select();
  };

  return (
    <main class="signin" data-testid="page-signin">
      <form class="card signin-card" onSubmit={(event) => void submit(event)} data-testid="signin-form" noValidate>
        <h1>AI Usage Proxy</h1>
        <p class="muted">
          Sign in with a proxy token that has the manage scope. The first one is printed when the server starts for the
          first time.
        </p>
        {oidc && (
          <>
            <a class="button button-primary button-block" href={API_PATHS.signIn} data-testid="signin-oidc">
              Sign in with your identity provider
            </a>
            <p class="hint">Or, for automation and tokens with the manage scope:</p>
          </>
        )}
        {notice && !error && (
          <p class="notice notice-info" role="status" data-testid="signin-notice">
            {notice}
          </p>
        )}
        <label for="signin-token">Proxy token</label>
        <input
          id="signin-token"
          ref={input}
          type="password"
          value={token}
          autoComplete="current-password"
          spellcheck={false}
          placeholder="sk-proxy-…"
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'signin-error' : 'signin-help'}
          data-testid="signin-token"
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <p id="signin-help" class="hint">
          Kept in this browser tab only (session storage) and sent as a bearer header — never in the address bar.
        </p>
        <div aria-live="assertive">
          {error && (
            <p id="signin-error" class="notice notice-error" data-testid="signin-error">
              {error}
            </p>
          )}
        </div>
        <button type="submit" class="button button-primary button-block" disabled={busy} data-testid="signin-submit">
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
