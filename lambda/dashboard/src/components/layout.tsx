import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { hrefFor, ROUTES, type RouteName } from '../router';
import { useThemeChoice } from '../theme';
import type { SessionInfo } from '../types';

interface Props {
  route: RouteName;
  version: string | undefined;
  /** Who is signed in, once known: shown beside Sign out. */
  caller: SessionInfo | null;
  onSignOut: () => void;
  children: ComponentChildren;
}

export function Layout({ route, version, caller, onSignOut, children }: Props) {
  const main = useRef<HTMLElement>(null);
  const firstRender = useRef(true);
  const theme = useThemeChoice();

  useEffect(() => {
    const label = ROUTES.find((r) => r.name === route)?.label ?? '';
    document.title = `${label} · AI Usage Proxy`;
    // After navigating, screen readers and keyboard users start at the new page's heading, not the old link.
    if (firstRender.current) firstRender.current = false;
    else main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [route]);

  return (
    <div class="shell">
      <button type="button" class="skip-link" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="topbar">
        <a class="brand" href={hrefFor('overview')}>
          AI Usage Proxy
        </a>
        <nav class="nav" aria-label="Main">
          {ROUTES.map((r) => (
            <a
              key={r.name}
              href={hrefFor(r.name)}
              class="nav-link"
              aria-current={r.name === route ? 'page' : undefined}
              data-testid={`nav-${r.name}`}
            >
              {r.label}
            </a>
          ))}
        </nav>
        <button
          type="button"
          class="button button-small button-quiet"
          onClick={theme.next}
          data-testid="theme-toggle"
          data-theme-choice={theme.choice}
          title="Colours: follow the system, light or dark"
        >
          {theme.label}
        </button>
        {caller && (
          <span class="muted caller" data-testid="caller" data-role={caller.role}>
            {caller.actor_name ?? caller.actor} · {caller.role}
          </span>
        )}
        <button type="button" class="button button-small button-quiet" onClick={onSignOut} data-testid="signout">
          Sign out
        </button>
      </header>
      <main class="main" ref={main} tabIndex={-1}>
        {children}
      </main>
      <footer class="footer">
        <span>AI Usage Proxy{version ? ` v${version}` : ''}</span>
      </footer>
    </div>
  );
}
