import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { EncryptedSecret, EncryptionContext, SecretSealer } from '../ports';

/**
 * Wraps and unwraps the per-secret data key. KMS does it in AWS, a local
 * master key does it on a developer machine. The context is bound to the
 * wrapped key, so a ciphertext copied to another account or provider won't open.
 */
export interface KeyWrapper {
  readonly keyRef: string;
  newDataKey(context: EncryptionContext): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }>;
  unwrap(wrapped: Uint8Array, context: EncryptionContext): Promise<Uint8Array>;
}

/** The context as additional authenticated data: stable key order. */
export function contextAad(context: EncryptionContext): Buffer {
  return Buffer.from(`account_id=${context.account_id};provider=${context.provider}`, 'utf8');
}

const DATA_KEY_CACHE_MS = 5 * 60_000;
const DATA_KEY_CACHE_MAX = 1000;

/**
 * AES-256-GCM envelope encryption. Unwrapped data keys are cached in memory for
 * a few minutes (as the AWS Encryption SDK's caching does) so a stored-mode
 * request doesn't pay a KMS round trip each time.
 */
export class EnvelopeSealer implements SecretSealer {
  private readonly dataKeys = new Map<string, { key: Uint8Array; until: number }>();

  constructor(
    private readonly wrapper: KeyWrapper,
    private readonly now: () => number = Date.now,
  ) {}

  async seal(plaintext: string, context: EncryptionContext): Promise<EncryptedSecret> {
    const { plaintext: dataKey, wrapped } = await this.wrapper.newDataKey(context);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
    cipher.setAAD(contextAad(context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { ciphertext, iv, wrappedKey: wrapped, keyRef: this.wrapper.keyRef };
  }

  async open(secret: EncryptedSecret, context: EncryptionContext): Promise<string> {
    if (secret.keyRef !== this.wrapper.keyRef) {
      throw new Error(
        `This key was sealed by ${secret.keyRef}, but the proxy is configured with ${this.wrapper.keyRef}; save the provider key again.`,
      );
    }
    const dataKey = await this.dataKey(secret.wrappedKey, context);
    const body = Buffer.from(secret.ciphertext);
    const decipher = createDecipheriv('aes-256-gcm', dataKey, secret.iv);
    decipher.setAAD(contextAad(context));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
  }

  private async dataKey(wrapped: Uint8Array, context: EncryptionContext): Promise<Uint8Array> {
    // The cache key covers the context too: a wrapped key is only reused for the context it was opened with.
    const id = createHash('sha256').update(wrapped).update(contextAad(context)).digest('base64');
    const now = this.now();
    const cached = this.dataKeys.get(id);
    if (cached && cached.until > now) return cached.key;
    const key = await this.wrapper.unwrap(wrapped, context);
    if (this.dataKeys.size >= DATA_KEY_CACHE_MAX) this.dataKeys.clear();
    this.dataKeys.set(id, { key, until: now + DATA_KEY_CACHE_MS });
    return key;
  }
}
