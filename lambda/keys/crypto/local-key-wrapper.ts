import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EncryptionContext } from '../ports';
import { contextAad, type KeyWrapper } from './envelope';

/** Stands in for KMS on a developer machine: a 256-bit master key in a file readable only by its owner. */
export class LocalKeyWrapper implements KeyWrapper {
  readonly keyRef: string;

  constructor(private readonly masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('The local master key must be 32 bytes');
    this.keyRef = `local:${createHash('sha256').update(masterKey).digest('hex').slice(0, 12)}`;
  }

  static fromFile(path: string): LocalKeyWrapper {
    if (!existsSync(path)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, randomBytes(32).toString('base64'), { mode: 0o600 });
    }
    return new LocalKeyWrapper(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64'));
  }

  async newDataKey(context: EncryptionContext): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }> {
    const plaintext = randomBytes(32);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.masterKey, iv);
    cipher.setAAD(contextAad(context));
    const wrapped = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return { plaintext, wrapped };
  }

  async unwrap(wrapped: Uint8Array, context: EncryptionContext): Promise<Uint8Array> {
    const bytes = Buffer.from(wrapped);
    const decipher = createDecipheriv('aes-256-gcm', this.masterKey, bytes.subarray(0, 12));
    decipher.setAAD(contextAad(context));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]);
  }
}
