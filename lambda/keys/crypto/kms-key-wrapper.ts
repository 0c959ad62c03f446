import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { EncryptionContext } from '../ports';
import type { KeyWrapper } from './envelope';

/**
 * KMS wraps the data keys. The encryption context {account_id, provider} is
 * part of every call, so IAM can require it and a ciphertext moved to another
 * account or provider fails to decrypt.
 */
export class KmsKeyWrapper implements KeyWrapper {
  readonly keyRef: string;

  constructor(
    private readonly kms: Pick<KMSClient, 'send'>,
    private readonly keyId: string,
  ) {
    this.keyRef = `kms:${keyId}`;
  }

  async newDataKey(context: EncryptionContext): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }> {
    const result = await this.kms.send(
      new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: { ...context } }),
    );
    if (!result.Plaintext || !result.CiphertextBlob) throw new Error('KMS returned no data key');
    return { plaintext: result.Plaintext, wrapped: result.CiphertextBlob };
  }

  async unwrap(wrapped: Uint8Array, context: EncryptionContext): Promise<Uint8Array> {
    const result = await this.kms.send(
      new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: wrapped, EncryptionContext: { ...context } }),
    );
    if (!result.Plaintext) throw new Error('KMS returned no plaintext');
    return result.Plaintext;
  }
}
