import { useEffect, useMemo, useState } from 'preact/hooks';
import { cookieSession, createApi, endSession, health, type Credential } from './api';
import { ApiContext } from './api-context';
import { CallerContext } from './caller';
import { Layout } from './components/layout';
import { useHashRoute, type Route } from './router';
import { clearToken, loadToken, saveToken } from './session';
import type { SessionInfo } from './types';
import { Audit } from './views/audit';
import { Integrations } from './views/integrations';
import { Logs } from './views/logs';
import { Overview } from './views/overview';
import { SignIn } from './views/sign-in';
import { Tokens } from './views/tokens';

function Page({ route }: { route: Route }) {
  switch (route.name) {
    case 'logs':
      return <Logs params={route.params} detail={route.detail} />;
    case 'integrations':
      return <Integrations />;
    case 'tokens':
      return <Tokens params={route.params} />;
    case 'audit':
      return <Audit params={route.params} />;
    default:
      return <Overview params={route.params} />;
  }
}

/** A token kept in the tab, or the session cookie the identity provider's sign-in left (checked at start). */
function initialCredential(): Credential | null | 'checking' {
  const token = loadToken();
  return token ? { token } : 'checking';
}

export function App() {
  const route = useHashRoute();
  const [credential, setCredential] = useState<Credential | null | 'checking'>(initialCredential);
  const [caller, setCaller] = useState<SessionInfo | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [version, setVersion] = useState<string | undefined>(undefined);

  useEffect(() => {
    health().then(
      (h) => setVersion(h.version),
      () => undefined,
    );
  }, []);

  // Back from the identity provider (or reloaded): the cookie's session, with its CSRF token, if there is one.
  useEffect(() => {
    if (credential !== 'checking') return;
    void cookieSession().then((session) => {
      setCaller(session);
      setCredential(session ? { csrf: session.csrf_token } : null);
    });
  }, [credential]);

  const api = useMemo(() => {
    if (!credential || credential === 'checking') return null;
    return createApi(credential, () => {
      clearToken();
      setCredential(null);
      setCaller(null);
      setNotice(
        'token' in credential
          ? 'Your session ended: the token was revoked or is no longer valid. Sign in with a valid token.'
          : 'Your session ended: it expired or was signed out. Sign in again.',
      );
    });
  }, [credential]);

  // The role decides which controls the pages show: known before the first page is drawn, so no control
  // appears after the page's data and moves what is already on screen.
  useEffect(() => {
    if (api && !caller)
      api.session().then(setCaller, () => {
        clearToken();
        setCredential(null);
        setNotice('Could not check who is signed in. Sign in again.');
      });
  }, [api, caller]);

  if (credential === 'checking' || (api && !caller)) return <main class="signin" data-testid="page-checking" />;
  if (!api) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(value) => {
          saveToken(value);
          setNotice(null);
          setCaller(null);
          setCredential({ token: value });
        }}
      />
    );
  }

  return (
    <ApiContext.Provider value={api}>
      <CallerContext.Provider value={caller}>
        <Layout
          route={route.name}
          version={version}
          caller={caller}
          onSignOut={() => {
            clearToken();
            if (credential && !('token' in credential)) void endSession();
            setNotice('You are signed out.');
            setCaller(null);
            setCredential(null);
          }}
        >
          <Page key={route.name} route={route} />
        </Layout>
      </CallerContext.Provider>
    </ApiContext.Provider>
  );
}
