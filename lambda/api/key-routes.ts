import * as z from 'zod/mini';
import { NotFoundError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { isSendableCredential } from '../base/plain-text';
import { catalogEntry, PROVIDER_IDS, type ProviderId } from '../providers/catalog';
import { jsonBody, parseBody, strictBody } from './request-body';
import type { ApiRoute } from './route-types';
import { API_PATHS } from './paths';

const KEY_ERROR = 'key must be the provider API key as a string.';
const UNSENDABLE_KEY =
  'key must be visible ASCII characters only (what an HTTP header carries): no spaces inside, line breaks, NUL or non-ASCII characters.';

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

/** Only the last four characters are ever shown again. */
const hintOf = (key: string) => `…${key.slice(-4)}`;

/** Stored provider keys of the caller's account: written once, never read back. */
export const keyRoutes: ApiRoute[] = [
  {
    method: 'PUT',
    path: API_PATHS.key,
    access: 'manage',
    async handle(call) {
      const { deps, params, caller } = call;
      const provider = providerParam(params.provider);
      const { key } = parseBody(jsonBody(call), providerKeyBody);
      const secret = await deps.sealer.seal(key, { account_id: caller.accountId, provider });
      const hint = hintOf(key);
      await deps.providerKeys.put(caller.accountId, {
        provider,
        secret,
        hint,
        updatedAt: new Date(deps.now()).toISOString(),
      });
      return jsonResponse(200, { provider, hint });
    },
  },
  {
    method: 'GET',
    path: API_PATHS.keys,
    access: 'manage',
    async handle({ deps, caller }) {
      const keys = await deps.providerKeys.list(caller.accountId);
      return jsonResponse(200, {
        keys: keys.map((k) => ({ provider: k.provider, hint: k.hint, updated_at: k.updatedAt })),
        // Where a provider reached through AWS is signed from when no key is saved (no credential lookup of its own).
        signing: deps.awsCredentials.status(),
      });
    },
  },
  {
    method: 'DELETE',
    path: API_PATHS.key,
    access: 'manage',
    async handle({ deps, params, caller }) {
      await deps.providerKeys.delete(caller.accountId, providerParam(params.provider));
      return { statusCode: 204, headers: {}, body: '' };
    },
  },
];
