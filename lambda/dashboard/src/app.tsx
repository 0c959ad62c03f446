import { useEffect, useMemo, useState } from 'preact/hooks';
import { createApi, health } from './api';
import { ApiContext } from './api-context';
import { Layout } from './components/layout';
import { useHashRoute, type Route } from './router';
import { clearToken, loadToken, saveToken } from './session';
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
    default:
      return <Overview params={route.params} />;
  }
}

export function App() {
  const route = useHashRoute();
  const [token, setToken] = useState<string | null>(loadToken);
  const [notice, setNotice] = useState<string | null>(null);
  const [version, setVersion] = useState<string | undefined>(undefined);

  useEffect(() => {
    health().then(
      (h) => setVersion(h.version),
      () => undefined,
    );
  }, []);

  const api = useMemo(() => {
    if (!token) return null;
    return createApi(token, () => {
      clearToken();
      setToken(null);
      setNotice('Your session ended: the token was revoked or is no longer valid. Sign in with a valid token.');
    });
  }, [token]);

  if (!api) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(value) => {
          saveToken(value);
          setNotice(null);
          setToken(value);
        }}
      />
    );
  }

  return (
    <ApiContext.Provider value={api}>
      <Layout
        route={route.name}
        version={version}
        onSignOut={() => {
          clearToken();
          setNotice('You are signed out.');
          setToken(null);
        }}
      >
        <Page key={route.name} route={route} />
      </Layout>
    </ApiContext.Provider>
  );
}
