import type { AccountStore, Scope } from './ports';
import type { Role } from './roles';
import { hashSecret, newAccountId, newToken } from './proxy-token';

export const ALL_SCOPES: readonly Scope[] = ['proxy', 'manage'];

/** Issues a token; only its hash is stored, so the returned token is the one chance to see it. */
export async function issueToken(
  accounts: AccountStore,
  input: { accountId: string; name?: string; scopes: Scope[]; now: Date; role?: Role; createdBy?: string },
): Promise<{ tokenId: string; token: string }> {
  const { token, parsed } = newToken(input.accountId);
  await accounts.putToken({
    accountId: input.accountId,
    tokenId: parsed.tokenId,
    name: input.name,
    scopes: input.scopes,
    secretHash: hashSecret(parsed.secret),
    createdAt: input.now.toISOString(),
    role: input.role,
    createdBy: input.createdBy,
  });
  return { tokenId: parsed.tokenId, token };
}

/** A new account and its first token, which may both proxy and manage. */
export async function createAccount(
  accounts: AccountStore,
  input: { name?: string; now: Date },
): Promise<{ accountId: string; tokenId: string; token: string }> {
  const accountId = newAccountId();
  await accounts.createAccount({ accountId, name: input.name, createdAt: input.now.toISOString() });
  const issued = await issueToken(accounts, {
    accountId,
    name: input.name ? `${input.name} (first token)` : 'first token',
    scopes: [...ALL_SCOPES],
    now: input.now,
  });
  return { accountId, ...issued };
}
