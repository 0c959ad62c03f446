import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_SCOPES, createAccount, issueToken } from '../auth/issue';
import type { AccountStore } from '../auth/ports';

/** The admin key: `ADMIN_KEY` if set, else generated once and kept (owner-only) under DATA_DIR. */
export function localAdminKey(dataDir: string, fromEnv?: string): { key: string; generated: boolean; path?: string } {
  if (fromEnv) return { key: fromEnv, generated: false };
  const path = join(dataDir, 'admin.key');
  if (existsSync(path)) return { key: readFileSync(path, 'utf8').trim(), generated: false, path };
  mkdirSync(dataDir, { recursive: true });
  const key = `admin-${randomBytes(24).toString('base64url')}`;
  writeFileSync(path, key, { mode: 0o600 });
  return { key, generated: true, path };
}

/** What `first-account.json` records: ids only, never the token. */
interface Marker {
  account_id: string;
  token_id: string;
  /** False until the banner showing the token has been printed. */
  token_shown?: boolean;
}

export interface FirstAccount {
  accountId: string;
  /** Present when this start minted a token to show. */
  token?: string;
  /** Why a token is shown: a new account, an earlier start that stopped before showing it, or `--new-token`. */
  reason: 'created' | 'not-shown' | 'asked' | 'shown-before';
}

/**
 * The first account of a local install, so a newcomer can send a request at once. Its token is
 * printed once and never stored in plain text. A start that stopped before the banner was printed
 * leaves `token_shown: false`, and the next start mints and shows a fresh token for the same
 * account; `npm start -- --new-token` does the same on demand (docs/operations.md, "First start").
 */
export async function firstRunAccount(
  dataDir: string,
  accounts: AccountStore,
  options: { newToken: boolean; now?: Date },
): Promise<FirstAccount> {
  const now = options.now ?? new Date();
  const marker = readMarker(dataDir);
  if (!marker || !(await accounts.accountExists(marker.account_id))) {
    const created = await createAccount(accounts, { name: 'local', now });
    writeMarker(dataDir, { account_id: created.accountId, token_id: created.tokenId, token_shown: false });
    return { accountId: created.accountId, token: created.token, reason: 'created' };
  }
  const notShown = marker.token_shown === false;
  if (!notShown && !options.newToken) return { accountId: marker.account_id, reason: 'shown-before' };
  const issued = await issueToken(accounts, {
    accountId: marker.account_id,
    name: `local (${now.toISOString().slice(0, 10)})`,
    scopes: [...ALL_SCOPES],
    now,
  });
  writeMarker(dataDir, { ...marker, token_id: issued.tokenId, token_shown: false });
  return { accountId: marker.account_id, token: issued.token, reason: notShown ? 'not-shown' : 'asked' };
}

/** Called once the banner with the token is out. */
export function markTokenShown(dataDir: string): void {
  const marker = readMarker(dataDir);
  if (marker && marker.token_shown === false) writeMarker(dataDir, { ...marker, token_shown: true });
}

function readMarker(dataDir: string): Marker | undefined {
  const path = join(dataDir, 'first-account.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Marker) : undefined;
}

function writeMarker(dataDir: string, marker: Marker): void {
  writeFileSync(join(dataDir, 'first-account.json'), JSON.stringify(marker, null, 2));
}
