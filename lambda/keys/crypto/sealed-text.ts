import type { EncryptedSecret, SecretSealer } from '../ports';

/**
 * A secret other than a provider key, sealed with the same envelope encryption and stored as one
 * text attribute. Its encryption context is `{account_id, provider: <purpose>}`: the key names IAM
 * requires of every use of the key, with a purpose no provider has, so a sealed webhook secret can
 * neither be opened as a provider key nor moved to another account.
 */
export interface TextSealer {
  seal(accountId: string, text: string): Promise<string>;
  open(accountId: string, sealed: string): Promise<string>;
}

interface SealedJson {
  ciphertext: string;
  iv: string;
  wrapped_key: string;
  key_ref: string;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export function textSealer(sealer: SecretSealer, purpose: string): TextSealer {
  const context = (accountId: string) => ({ account_id: accountId, provider: purpose });
  return {
    async seal(accountId, text) {
      const secret = await sealer.seal(text, context(accountId));
      const json: SealedJson = {
        ciphertext: b64(secret.ciphertext),
        iv: b64(secret.iv),
        wrapped_key: b64(secret.wrappedKey),
        key_ref: secret.keyRef,
      };
      return JSON.stringify(json);
    },
    async open(accountId, sealed) {
      const json = JSON.parse(sealed) as SealedJson;
      const secret: EncryptedSecret = {
        ciphertext: Buffer.from(json.ciphertext, 'base64'),
        iv: Buffer.from(json.iv, 'base64'),
        wrappedKey: Buffer.from(json.wrapped_key, 'base64'),
        keyRef: json.key_ref,
      };
      return sealer.open(secret, context(accountId));
    },
  };
}
