/**
 * A call in the token gate's shape (lambda/auth/dynamodb/token-gate.ts), for a token this instance
 * has not seen yet (gate-count.ts; the widest of its usual shapes), on gate items that always pass
 * its condition: what the benchmark's store measurements send as the request path's gate.
 */
import { countExpression, freshRing, guessedPlacement } from '../lambda/auth/dynamodb/gate-count';
import type { DocumentClient } from '../lambda/store/dynamodb/document-client';

const SECRET_HASH = 'a'.repeat(64);
const SHARE = 100;
/** 50 gate items, one per token, so no item takes every write. */
const GATES = 50;
const gateKey = (n: number) => `gate#bench-${n % GATES}#0`;

/**
 * The gates: authentication's copy, the shard's share, and a window whose count stays far below the
 * share (m is the count less the share), so every call passes its condition (a refused one would
 * measure the error path instead).
 */
export async function seedGates(doc: DocumentClient, table: string): Promise<void> {
  for (let n = 0; n < GATES; n++)
    await doc.send({
      operation: 'PutItem',
      input: {
        TableName: table,
        Item: {
          counter_key: gateKey(n),
          secret_hash: SECRET_HASH,
          m_limit: SHARE,
          n: 0,
          m: -1e12,
          ...freshRing(Date.now()),
        },
      },
    });
}

/** The gate's `UpdateItem` for call `n`, in document form. */
export function gateInput(table: string, n: number) {
  const count = countExpression(guessedPlacement(Date.now(), undefined), false);
  return {
    TableName: table,
    Key: { counter_key: gateKey(n) },
    UpdateExpression: count.update,
    ConditionExpression: `secret_hash = :hash AND attribute_not_exists(revoked_at) AND attribute_not_exists(requests_per_minute) AND m_limit = :share AND ${count.condition}`,
    ExpressionAttributeValues: { ':hash': SECRET_HASH, ':share': SHARE, ...count.values },
    ReturnValues: 'ALL_NEW' as const,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}
