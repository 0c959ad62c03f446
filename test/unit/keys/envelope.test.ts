import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { EnvelopeSealer, type KeyWrapper } from '../../../lambda/keys/crypto/envelope';
import { KmsKeyWrapper } from '../../../lambda/keys/crypto/kms-key-wrapper';
import { LocalKeyWrapper } from '../../../lambda/keys/crypto/local-key-wrapper';
import type { EncryptedSecret, EncryptionContext } from '../../../lambda/keys/ports';

const CONTEXT: EncryptionContext = { account_id: 'acct0000000000001', provider: 'prov-b' };
const PROVIDER_KEY = 'sk-live-provider-key-ÄÖÜ-😀-0123456789';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'envelope-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const localWrapper = (name: string) => LocalKeyWrapper.fromFile(join(dir, name, 'master.key'));

/** A real wrapper that counts how often the sealer asks it to unwrap. */
function counting(wrapper: KeyWrapper): KeyWrapper & { unwraps: number } {
  const counter = {
    keyRef: wrapper.keyRef,
    unwraps: 0,
    newDataKey: (context: EncryptionContext) => wrapper.newDataKey(context),
    unwrap: (wrapped: Uint8Array, context: EncryptionContext) => {
      counter.unwraps++;
      return wrapper.unwrap(wrapped, context);
    },
  };
  return counter;
}

function flipByte(bytes: Uint8Array, at: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[at] ^= 0x01;
  return copy;
}

describe('LocalKeyWrapper key file', () => {
  it('is created with mode 0600 under a missing directory, and reused on the next start', () => {
    const path = join(dir, 'fresh', 'nested', 'master.key');
    const first = LocalKeyWrapper.fromFile(path);
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(LocalKeyWrapper.fromFile(path).keyRef).toBe(first.keyRef);
    expect(first.keyRef).toMatch(/^local:[0-9a-f]{12}$/);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new LocalKeyWrapper(randomBytes(16))).toThrow(/32 bytes/);
    const path = join(dir, 'short.key');
    writeFileSync(path, randomBytes(8).toString('base64'), { mode: 0o600 });
    expect(() => LocalKeyWrapper.fromFile(path)).toThrow(/32 bytes/);
  });
});

describe('EnvelopeSealer with the local key', () => {
  it('seals and opens, for any text, without the plaintext in what is stored', async () => {
    const sealer = new EnvelopeSealer(localWrapper('round-trip'));
    for (const text of [PROVIDER_KEY, '', 'x'.repeat(5000)]) {
      const sealed = await sealer.seal(text, CONTEXT);
      expect(await sealer.open(sealed, CONTEXT)).toBe(text);
      if (text) expect(Buffer.from(sealed.ciphertext).includes(Buffer.from(text))).toBe(false);
    }
    const a = await sealer.seal(PROVIDER_KEY, CONTEXT);
    const b = await sealer.seal(PROVIDER_KEY, CONTEXT);
    expect(Buffer.from(a.ciphertext).equals(Buffer.from(b.ciphertext))).toBe(false);
  });

  it.each<[string, EncryptionContext]>([
    ['another account', { ...CONTEXT, account_id: 'acct0000000000002' }],
    ['another provider', { ...CONTEXT, provider: 'prov-a' }],
  ])('refuses to open under %s', async (_title, other) => {
    const sealer = new EnvelopeSealer(localWrapper('context'));
    const sealed = await sealer.seal(PROVIDER_KEY, CONTEXT);
    await expect(sealer.open(sealed, other)).rejects.toThrow();
    // Even after a successful open has cached the data key, the other context stays refused.
    await expect(sealer.open(sealed, CONTEXT)).resolves.toBe(PROVIDER_KEY);
    await expect(sealer.open(sealed, other)).rejects.toThrow();
  });

  it.each<[string, (s: EncryptedSecret) => EncryptedSecret]>([
    ['ciphertext body', (s) => ({ ...s, ciphertext: flipByte(s.ciphertext, 0) })],
    ['authentication tag', (s) => ({ ...s, ciphertext: flipByte(s.ciphertext, s.ciphertext.length - 1) })],
    ['iv', (s) => ({ ...s, iv: flipByte(s.iv, 3) })],
    ['wrapped data key', (s) => ({ ...s, wrappedKey: flipByte(s.wrappedKey, 20) })],
  ])('refuses a tampered %s', async (_title, tamper) => {
    const sealer = new EnvelopeSealer(localWrapper('tamper'));
    const sealed = await sealer.seal(PROVIDER_KEY, CONTEXT);
    await expect(sealer.open(tamper(sealed), CONTEXT)).rejects.toThrow();
  });

  it('a different master key cannot open it: a clear keyRef error, and the crypto fails too', async () => {
    const sealed = await new EnvelopeSealer(localWrapper('master-one')).seal(PROVIDER_KEY, CONTEXT);
    const other = localWrapper('master-two');
    expect(other.keyRef).not.toBe(sealed.keyRef);
    const error = await new EnvelopeSealer(other).open(sealed, CONTEXT).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(sealed.keyRef);
    expect((error as Error).message).toContain(other.keyRef);
    expect((error as Error).message).toMatch(/save the provider key again/);
    // Pretending the reference matches still fails: the wrapped key does not open under another master key.
    await expect(new EnvelopeSealer(other).open({ ...sealed, keyRef: other.keyRef }, CONTEXT)).rejects.toThrow();
  });

  it('caches an unwrapped data key for five minutes, per wrapped key and context', async () => {
    let now = 1_000_000;
    const wrapper = counting(localWrapper('cache'));
    const sealer = new EnvelopeSealer(wrapper, () => now);
    const sealed = await sealer.seal(PROVIDER_KEY, CONTEXT);
    for (const at of [0, 1, 60_000, 299_999]) {
      now = 1_000_000 + at;
      expect(await sealer.open(sealed, CONTEXT)).toBe(PROVIDER_KEY);
    }
    expect(wrapper.unwraps).toBe(1);
    now = 1_000_000 + 300_000;
    expect(await sealer.open(sealed, CONTEXT)).toBe(PROVIDER_KEY);
    expect(wrapper.unwraps).toBe(2);
    now += 1000;
    await sealer.open(sealed, CONTEXT);
    expect(wrapper.unwraps).toBe(2);
    // Another secret has its own data key.
    await sealer.open(await sealer.seal('second', CONTEXT), CONTEXT);
    expect(wrapper.unwraps).toBe(3);
  });
});

/**
 * KMS has no local version, so this stand-in answers with the shapes the SDK documents
 * (GenerateDataKey → Plaintext + CiphertextBlob; Decrypt → Plaintext) and, like KMS,
 * refuses to decrypt under any other encryption context.
 */
function kmsStandIn() {
  const calls: { name: string; input: Record<string, unknown>; command: unknown }[] = [];
  const issued = new Map<string, { plaintext: Uint8Array; context: string }>();
  const client = {
    async send(command: { input: Record<string, unknown> }) {
      calls.push({ name: command.constructor.name, input: command.input, command });
      if (command instanceof GenerateDataKeyCommand) {
        const plaintext = new Uint8Array(randomBytes(32));
        const blob = new Uint8Array(randomBytes(184));
        issued.set(Buffer.from(blob).toString('base64'), {
          plaintext,
          context: JSON.stringify(command.input.EncryptionContext),
        });
        return {
          KeyId: 'arn:aws:kms:eu-west-1:111122223333:key/test',
          Plaintext: plaintext,
          CiphertextBlob: blob,
          $metadata: {},
        };
      }
      if (command instanceof DecryptCommand) {
        const found = issued.get(Buffer.from(command.input.CiphertextBlob as Uint8Array).toString('base64'));
        if (!found || found.context !== JSON.stringify(command.input.EncryptionContext)) {
          throw Object.assign(new Error('InvalidCiphertextException'), { name: 'InvalidCiphertextException' });
        }
        return {
          KeyId: 'arn:aws:kms:eu-west-1:111122223333:key/test',
          Plaintext: found.plaintext,
          EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
          $metadata: {},
        };
      }
      throw new Error(`unexpected command ${command.constructor.name}`);
    },
  };
  return { calls, client: client as unknown as Pick<KMSClient, 'send'> };
}

describe('KmsKeyWrapper', () => {
  const KEY_ID = 'alias/ai-usage-proxy-test';

  it('sends GenerateDataKey and Decrypt in the documented shapes, bound to the account and provider', async () => {
    const kms = kmsStandIn();
    const wrapper = new KmsKeyWrapper(kms.client, KEY_ID);
    expect(wrapper.keyRef).toBe(`kms:${KEY_ID}`);
    const sealer = new EnvelopeSealer(wrapper);
    const sealed = await sealer.seal(PROVIDER_KEY, CONTEXT);
    expect(sealed.keyRef).toBe(`kms:${KEY_ID}`);
    expect(await sealer.open(sealed, CONTEXT)).toBe(PROVIDER_KEY);

    expect(kms.calls.map((c) => c.name)).toEqual(['GenerateDataKeyCommand', 'DecryptCommand']);
    expect(kms.calls[0].command).toBeInstanceOf(GenerateDataKeyCommand);
    expect(kms.calls[0].input).toEqual({
      KeyId: KEY_ID,
      KeySpec: 'AES_256',
      EncryptionContext: { account_id: CONTEXT.account_id, provider: CONTEXT.provider },
    });
    expect(kms.calls[1].command).toBeInstanceOf(DecryptCommand);
    expect(kms.calls[1].input).toEqual({
      KeyId: KEY_ID,
      CiphertextBlob: sealed.wrappedKey,
      EncryptionContext: { account_id: CONTEXT.account_id, provider: CONTEXT.provider },
    });
  });

  it('another context is refused by KMS itself, and decrypts are cached like the local ones', async () => {
    const kms = kmsStandIn();
    let now = 0;
    const sealer = new EnvelopeSealer(new KmsKeyWrapper(kms.client, KEY_ID), () => now);
    const sealed = await sealer.seal(PROVIDER_KEY, CONTEXT);
    await expect(sealer.open(sealed, { ...CONTEXT, provider: 'prov-c' })).rejects.toThrow();
    await sealer.open(sealed, CONTEXT);
    await sealer.open(sealed, CONTEXT);
    expect(kms.calls.filter((c) => c.name === 'DecryptCommand')).toHaveLength(2);
    now = 5 * 60_000;
    await sealer.open(sealed, CONTEXT);
    expect(kms.calls.filter((c) => c.name === 'DecryptCommand')).toHaveLength(3);
  });

  it('fails clearly when KMS answers without key material', async () => {
    const empty = { send: async () => ({ $metadata: {} }) } as unknown as Pick<KMSClient, 'send'>;
    const wrapper = new KmsKeyWrapper(empty, KEY_ID);
    await expect(wrapper.newDataKey(CONTEXT)).rejects.toThrow(/no data key/);
    await expect(wrapper.unwrap(new Uint8Array(8), CONTEXT)).rejects.toThrow(/no plaintext/);
  });
});
