import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from '../auth/issue';
import type { AccountStore } from '../store/ports';

/** The admin key: `ADMIN_KEY` if set, else generated once and kept (owner-only) under DATA_DIR. */
export function localAdminKey(dataDir: string, fromEnv?: string): { key: string; generated: boolean } {
  if (fromEnv) return { key: fromEnv, generated: false };
  const path = join(dataDir, 'admin.key');
  if (existsSync(path)) return { key: readFileSync(path, 'utf8').trim(), generated: false };
  mkdirSync(dataDir, { recursive: true });
  const key = `admin-${randomBytes(24).toString('base64url')}`;
  writeFileSync(path, key, { mode: 0o600 });
  return { key, generated: true };
}

/**
 * On the first start with an empty DATA_DIR, an account is created so a
 * newcomer can send a request at once. Its token is printed once and never
 * stored in plain text; the marker file records only the account id.
 */
export async function firstRunAccount(dataDir: string, accounts: AccountStore): Promise<{ accountId: string; token: string } | undefined> {
  const marker = join(dataDir, 'first-account.json');
  if (existsSync(marker)) return undefined;
  const created = await createAccount(accounts, { name: 'local', now: new Date() });
  writeFileSync(marker, JSON.stringify({ account_id: created.accountId, token_id: created.tokenId }, null, 2));
  return { accountId: created.accountId, token: created.token };
}
