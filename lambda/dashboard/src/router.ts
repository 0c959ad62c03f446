import { useEffect, useState } from 'preact/hooks';

export type RouteName = 'overview' | 'logs' | 'integrations' | 'tokens';

export const ROUTES: readonly { name: RouteName; label: string }[] = [
  { name: 'overview', label: 'Overview' },
  { name: 'logs', label: 'Logs' },
  { name: 'integrations', label: 'Integrations' },
  { name: 'tokens', label: 'Tokens' },
];

export interface Route {
  name: RouteName;
  params: URLSearchParams;
}

/** `#/logs?model=x` → logs with its query. Anything unknown lands on the overview. */
export function parseHash(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?');
  const known = ROUTES.find((r) => r.name === path);
  return { name: known ? known.name : 'overview', params: new URLSearchParams(query) };
}

export function hrefFor(name: RouteName, params?: Record<string, string>): string {
  const query = params ? new URLSearchParams(params).toString() : '';
  return `#/${name}${query ? `?${query}` : ''}`;
}

export function useHashRoute(): Route {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return parseHash(hash);
}
