import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/** The encryption context the runtime binds every provider key to (lambda/keys/ports.ts `EncryptionContext`). */
export const ENCRYPTION_CONTEXT_KEYS = ['account_id', 'provider'] as const;

/**
 * Condition that only admits requests whose encryption context has exactly the keys
 * `account_id` and `provider`:
 * - `ForAllValues:StringEquals` on `kms:EncryptionContextKeys` forbids any other key, but on its
 *   own it is also satisfied by a request with no context at all (an empty set passes "for all");
 * - the `Null` check (`"false"` = the key must be present) closes that gap by requiring both keys.
 * The values can't be pinned in IAM (they vary per request); binding them is what makes a
 * ciphertext copied into another account's row fail to decrypt.
 */
export const ENCRYPTION_CONTEXT_CONDITION = {
  'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [...ENCRYPTION_CONTEXT_KEYS] },
  Null: Object.fromEntries(ENCRYPTION_CONTEXT_KEYS.map((k) => [`kms:EncryptionContext:${k}`, 'false'])),
};

/** The customer-managed key that wraps the data keys of stored provider keys (envelope encryption). */
export class ProviderKeyEncryption extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string, props: { stage: string }) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      alias: `alias/${props.stage}-ai-usage-proxy-provider-keys`,
      description: `Wraps the data keys of stored provider API keys (ai-usage-proxy, stage ${props.stage})`,
      enableKeyRotation: true,
      // Every provider key in the retained accounts table is unreadable without this key, so it
      // outlives the stack like the table does; schedule its deletion by hand after the table's.
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(30),
    });
  }

  /**
   * The proxy path opens stored keys (`Decrypt`); the management path seals new ones
   * (`GenerateDataKey`). Both live in one function, so its role gets both, each on this key only
   * and only with the account/provider encryption context. No `Encrypt`, no `ReEncrypt*`, no
   * `GenerateDataKeyWithoutPlaintext`: the runtime doesn't call them.
   */
  /** Opening only, with the same encryption-context condition: the stream consumer opens webhook secrets the proxy sealed. */
  grantOpen(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'OpenWebhookSecrets',
        actions: ['kms:Decrypt'],
        resources: [this.key.keyArn],
        conditions: ENCRYPTION_CONTEXT_CONDITION,
      }),
    );
  }

  grantEnvelopeUse(grantee: IGrantable): void {
    for (const [sid, action] of [
      ['OpenStoredProviderKeys', 'kms:Decrypt'],
      ['SealNewProviderKeys', 'kms:GenerateDataKey'],
    ] as const) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new PolicyStatement({
          sid,
          actions: [action],
          resources: [this.key.keyArn],
          conditions: ENCRYPTION_CONTEXT_CONDITION,
        }),
      );
    }
  }
}
