import { useEffect, useState } from 'preact/hooks';

/** How often an auto-refreshing page reloads its data. */
export const AUTO_REFRESH_MS = 15_000;
const STORAGE_KEY = 'ai-usage-proxy.auto-refresh';

/**
 * An on/off switch, remembered across visits, that calls `reload` every AUTO_REFRESH_MS while on and
 * the tab is visible (a hidden tab does not poll the API).
 */
export function useAutoRefresh(reload: () => void): { on: boolean; toggle: () => void } {
  const [on, setOn] = useState(() => {
    try {
      return localStorage.getItem(STORAGE_KEY) === 'on';
    } catch {
      return false;
    }
  });
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, AUTO_REFRESH_MS);
    return () => clearInterval(timer);
  }, [on, reload]);
  return {
    on,
    toggle: () => {
      const next = !on;
      setOn(next);
      try {
        localStorage.setItem(STORAGE_KEY, next ? 'on' : 'off');
      } catch {
        // Not remembered without storage; it still works for this page.
      }
    },
  };
}

export function AutoRefreshToggle({ on, toggle, testId }: { on: boolean; toggle: () => void; testId: string }) {
  return (
    <label class="toggle" title={`Reload every ${AUTO_REFRESH_MS / 1000} seconds while this tab is open`}>
      <input type="checkbox" checked={on} onChange={toggle} data-testid={testId} />
      <span>Auto-refresh</span>
    </label>
  );
}
