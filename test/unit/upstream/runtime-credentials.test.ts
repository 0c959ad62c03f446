import { RuntimeCredentials } from '../../../lambda/upstream/runtime-credentials';

const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

it('reports what the last lookup found, and makes none of its own', async () => {
  let lookups = 0;
  let available = false;
  const credentials = new RuntimeCredentials('local-credential-chain', () => {
    lookups += 1;
    return available
      ? Promise.resolve(KEYS)
      : Promise.reject(new Error('Could not load credentials from any providers'));
  });
  expect(credentials.status()).toEqual({ source: 'local-credential-chain', credentials: 'not-looked-up' });
  expect(lookups).toBe(0);

  await expect(credentials.get()).rejects.toThrow('Could not load credentials');
  expect(credentials.status().credentials).toBe('none-found');

  available = true;
  await expect(credentials.get()).resolves.toEqual(KEYS);
  expect(credentials.status()).toEqual({ source: 'local-credential-chain', credentials: 'found' });
  expect(lookups).toBe(2);
});
