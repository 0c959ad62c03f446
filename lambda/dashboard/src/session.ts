/**
 * The signed-in token lives in sessionStorage: it survives a reload but not closing the tab,
 * and it never appears in a URL (where it would end up in history and server logs).
 */
export const STORAGE_KEY = 'proxy-dashboard-token';

export function loadToken(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function saveToken(token: string): void {
  try {
    sessionStorage.setItem(STORAGE_KEY, token);
  } catch {
    // Storage disabled: the session then lasts until the page is reloaded.
  }
}

export function clearToken(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
}
