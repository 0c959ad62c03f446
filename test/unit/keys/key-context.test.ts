/**
 * A stored key's encryption context (lambda/keys/ports.ts `keyContext`): a `default` key keeps the
 * context every key had before pools, so those still open; a labelled key's label is bound too, so
 * its ciphertext copied under another label or provider does not open.
 */
import { randomBytes } from 'node:crypto';
import { EnvelopeSealer } from '../../../lambda/keys/crypto/envelope';
import { LocalKeyWrapper } from '../../../lambda/keys/crypto/local-key-wrapper';
import { keyContext } from '../../../lambda/keys/ports';

const sealer = new EnvelopeSealer(new LocalKeyWrapper(randomBytes(32)));
const KEY = 'sk-pooled-key-0123456789';

test('a default key opens under the context keys had before pools: {account_id, provider}', async () => {
  const before = await sealer.seal(KEY, { account_id: 'acct1', provider: 'prov-b' });
  expect(keyContext('acct1', { provider: 'prov-b', label: 'default' })).toEqual({
    account_id: 'acct1',
    provider: 'prov-b',
  });
  await expect(sealer.open(before, keyContext('acct1', { provider: 'prov-b', label: 'default' }))).resolves.toBe(KEY);
});

test("a labelled key opens only under its own label, provider and account; the context's key names stay the two KMS allows", async () => {
  const context = keyContext('acct1', { provider: 'prov-b', label: 'backup' });
  expect(Object.keys(context).sort()).toEqual(['account_id', 'provider']);
  const sealed = await sealer.seal(KEY, context);
  await expect(sealer.open(sealed, context)).resolves.toBe(KEY);
  for (const elsewhere of [
    keyContext('acct1', { provider: 'prov-b', label: 'default' }),
    keyContext('acct1', { provider: 'prov-b', label: 'other' }),
    keyContext('acct1', { provider: 'prov-d', label: 'backup' }),
    keyContext('acct2', { provider: 'prov-b', label: 'backup' }),
  ])
    await expect(sealer.open(sealed, elsewhere)).rejects.toThrow();
});
