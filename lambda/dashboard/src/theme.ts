import { useEffect, useState } from 'preact/hooks';

/** `system` follows the operating system's light or dark setting (prefers-color-scheme). */
export type ThemeChoice = 'system' | 'light' | 'dark';

const STORAGE_KEY = 'ai-usage-proxy.theme';
const CHANGED = 'themechange';

export function loadTheme(): ThemeChoice {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

/** The stylesheet picks the colours from `data-theme` on <html>; none means "follow the system". */
export function applyTheme(choice: ThemeChoice): void {
  if (choice === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = choice;
  try {
    if (choice === 'system') localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, choice);
  } catch {
    // Storage may be off (private mode): the choice then lasts for this page only.
  }
  dispatchEvent(new Event(CHANGED));
}

/**
 * A colour of the current theme, for drawing on a canvas, which cannot read CSS variables. The
 * variables hold `light-dark(…)`, resolved only where a colour is used, so a probe element resolves it.
 */
export function themeColor(name: string, fallback: string): string {
  const probe = document.createElement('span');
  probe.style.color = `var(${name}, ${fallback})`;
  document.documentElement.append(probe);
  const resolved = getComputedStyle(probe).color;
  probe.remove();
  return hexColor(resolved) ?? fallback;
}

function hexColor(rgb: string): string | undefined {
  const channels = /^rgba?\((\d+), (\d+), (\d+)/.exec(rgb);
  return channels
    ? `#${channels
        .slice(1, 4)
        .map((c) => Number(c).toString(16).padStart(2, '0'))
        .join('')}`
    : undefined;
}

/** Changes whenever the colours may have changed: the toggle, or the system switching light/dark. */
export function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((v) => v + 1);
    const media = matchMedia('(prefers-color-scheme: dark)');
    addEventListener(CHANGED, bump);
    media.addEventListener('change', bump);
    return () => {
      removeEventListener(CHANGED, bump);
      media.removeEventListener('change', bump);
    };
  }, []);
  return version;
}

const NEXT: Record<ThemeChoice, ThemeChoice> = { system: 'light', light: 'dark', dark: 'system' };
const LABEL: Record<ThemeChoice, string> = { system: 'Theme: auto', light: 'Theme: light', dark: 'Theme: dark' };

export function useThemeChoice(): { choice: ThemeChoice; label: string; next: () => void } {
  const [choice, setChoice] = useState<ThemeChoice>(loadTheme);
  return {
    choice,
    label: LABEL[choice],
    next: () => {
      const value = NEXT[choice];
      applyTheme(value);
      setChoice(value);
    },
  };
}
