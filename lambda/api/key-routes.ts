import * as z from 'zod/mini';
import { NotFoundError, ValidationError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { isSendableCredential } from '../base/plain-text';
import { keyContext, DEFAULT_KEY_LABEL, type StoredProviderKey } from '../keys/ports';
import { catalogEntry, PROVIDER_IDS, type ProviderId } from '../providers/catalog';
import { jsonBody, parseBody, strictBody } from './request-body';
import type { ApiRoute, ManageCall } from './route-types';
import { API_PATHS } from './paths';
import { recordCallerChange } from './audit-trail';

const KEY_ERROR = 'key must be the provider API key as a string.';
const UNSENDABLE_KEY =
  'key must be visible ASCII characters only (what an HTTP header carries): no spaces inside, line breaks, NUL or non-ASCII characters.';
/** Labels name keys in URLs, rows and the dashboard: short, plain, and never mistaken for a key. */
const LABEL = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** Keys per provider and account: each request may try them all. */
export const MAX_POOL_KEYS = 10;

/** `{"key": "…"}`: the provider key, stored without surrounding whitespace. */
const providerKeyBody = strictBody(
  {
    key: z.pipe(
      z.string({ error: KEY_ERROR }).check(
        z.maxLength(4096, KEY_ERROR),
        z.refine((key) => key.trim().length >= 8, KEY_ERROR),
        // Saved as it is, a key no header can carry would break every request of the provider.
        z.refine((key) => isSendableCredential(key.trim()), UNSENDABLE_KEY),
      ),
      z.transform((key) => key.trim()),
    ),
  },
  '"key"',
);

function providerParam(value: string): ProviderId {
  const provider = catalogEntry(value);
  if (!provider) throw new NotFoundError(`Unknown provider "${value}". Providers: ${PROVIDER_IDS.join(', ')}.`);
  return provider.id;
}

function labelParam(value: string | undefined): string {
  if (value === undefined) return DEFAULT_KEY_LABEL;
  if (!LABEL.test(value))
    throw new ValidationError(
      'label must be 1 to 32 lower-case letters, digits, "-" or "_", starting with a letter or digit.',
      'label',
    );
  return value;
}

/** Only the last four characters are ever shown again. */
const hintOf = (key: string) => `…${key.slice(-4)}`;

/** How a key is named in the audit log: its provider, and its label unless it is the default one. */
const auditTarget = (provider: ProviderId, label: string) =>
  label === DEFAULT_KEY_LABEL ? provider : `${provider}/${label}`;

/** A key's state as the API and the dashboard show it: the mark the store has (docs/fallbacks.md, "Key pools"). */
function keyState(key: StoredProviderKey, now: number): { state: string; cooling_until?: string } {
  if (key.mark?.state === 'failing') return { state: 'failing' };
  if (key.mark?.state === 'cooling' && key.mark.until > now)
    return { state: 'cooling', cooling_until: new Date(key.mark.until).toISOString() };
  return { state: 'ok' };
}

async function saveKey(call: ManageCall) {
  const { deps, params, caller } = call;
  const provider = providerParam(params.provider);
  const label = labelParam(params.label);
  const { key } = parseBody(jsonBody(call), providerKeyBody);
  const pool = await deps.providerKeys.pool(caller.accountId, provider);
  const before = pool.find((stored) => stored.label === label);
  if (!before && pool.length >= MAX_POOL_KEYS)
    throw new ValidationError(`A provider holds at most ${MAX_POOL_KEYS} keys: remove one first.`, 'label');
  const secret = await deps.sealer.seal(key, keyContext(caller.accountId, { provider, label }));
  const hint = hintOf(key);
  await deps.providerKeys.put(caller.accountId, {
    provider,
    label,
    secret,
    hint,
    updatedAt: new Date(deps.now()).toISOString(),
  });
  // The key's last four characters only, as the API shows it: never the key.
  await recordCallerChange(call, {
    action: 'key.saved',
    target: auditTarget(provider, label),
    before: before ? { hint: before.hint } : null,
    after: { hint },
  });
  return jsonResponse(200, { provider, label, hint });
}

async function removeKey(call: ManageCall) {
  const { deps, params, caller } = call;
  const provider = providerParam(params.provider);
  const label = labelParam(params.label);
  const pool = await deps.providerKeys.pool(caller.accountId, provider);
  const before = pool.find((stored) => stored.label === label);
  await deps.providerKeys.delete(caller.accountId, provider, label);
  if (before)
    await recordCallerChange(call, {
      action: 'key.removed',
      target: auditTarget(provider, label),
      before: { hint: before.hint },
    });
  return { statusCode: 204, headers: {}, body: '' };
}

/** Stored provider keys of the caller's account: written once, never read back. */
export const keyRoutes: ApiRoute[] = [
  { method: 'PUT', path: API_PATHS.key, access: 'manage', role: 'admin', handle: saveKey },
  { method: 'PUT', path: API_PATHS.labelledKey, access: 'manage', role: 'admin', handle: saveKey },
  {
    method: 'GET',
    path: API_PATHS.keys,
    access: 'manage',
    role: 'viewer',
    async handle({ deps, caller }) {
      const keys = await deps.providerKeys.list(caller.accountId);
      const now = deps.now();
      return jsonResponse(200, {
        keys: keys.map((k) => ({
          provider: k.provider,
          label: k.label,
          hint: k.hint,
          updated_at: k.updatedAt,
          ...keyState(k, now),
        })),
        // Where a provider reached through AWS is signed from when no key is saved (no credential lookup of its own).
        signing: deps.awsCredentials.status(),
      });
    },
  },
  { method: 'DELETE', path: API_PATHS.key, access: 'manage', role: 'admin', handle: removeKey },
  { method: 'DELETE', path: API_PATHS.labelledKey, access: 'manage', role: 'admin', handle: removeKey },
];
