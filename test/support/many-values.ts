import { createDynamoClients } from '../../lambda/store/dynamodb/client';
import type { DocumentClient } from '../../lambda/store/dynamodb/document-client';
import { tableNames } from '../../lambda/store/tables';
import type { DailyCaps } from '../../lambda/usage/dynamodb/daily-caps';
import { DynamoUsageStats } from '../../lambda/usage/dynamodb/usage-stats';
import type { UsageRow } from '../../lambda/usage/usage-row';

/** A document client on the run's DynamoDB Local. */
export function storeClient(): DocumentClient {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: it needs the run’s DynamoDB Local');
  return createDynamoClients({ region: 'eu-west-1', endpoint }).doc;
}

/**
 * Rows of one account, each with its own requester label and one of `models` distinct model ids
 * (with `pairs`, one row for each requester and model: `requesters × models` rows; with `tags`,
 * the first `keys × values` rows one tag each, every value of every key once),
 * folded into the rollups of the tables under `tablePrefix` exactly as the stream consumer folds
 * them (a local server on those tables then answers `/api/stats` from them), under `caps` when
 * given (the product's otherwise). Thousands of rows through the proxy would take minutes; what is
 * tested is what the stats do with the values.
 */
export async function foldDistinctValues(
  tablePrefix: string,
  accountId: string,
  counts: {
    requesters: number;
    models: number;
    pairs?: boolean;
    tags?: { keys: number; values: number };
    caps?: DailyCaps;
  },
): Promise<UsageRow[]> {
  const stats = new DynamoUsageStats(storeClient(), tableNames({}, tablePrefix).usageStats, Date.now, {
    caps: counts.caps,
  });
  const now = Date.now();
  const length = counts.pairs ? counts.requesters * counts.models : counts.requesters;
  const requesterOf = (i: number) => (counts.pairs ? Math.floor(i / counts.models) : i);
  const rows = Array.from({ length }, (_, i): UsageRow => {
    // Distinct costs, so the order (and thus which values are listed) is the same on every read.
    const cost = 1_000 + i * 7;
    return {
      account_id: accountId,
      id: `many-${i}`,
      ts: new Date(now - 60_000 - (i % 600) * 1_000).toISOString(),
      provider: 'prov-b',
      kind: 'chat',
      model: `model-${i % counts.models}`,
      requester: `user-${String(requesterOf(i)).padStart(5, '0')}`,
      input_tokens: 10 + (i % 13),
      output_tokens: 3 + (i % 5),
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: cost / 1e9,
      cost_nanos: cost,
      priced: true,
      latency_ms: 50 + (i % 400),
      status_code: 200,
      cached: false,
      saved_usd: 0,
      saved_nanos: 0,
      stream: false,
      mode: 'stored',
      token_id: 'tok-many',
      ...(counts.tags && i < counts.tags.keys * counts.tags.values
        ? {
            tags: {
              [`key-${i % counts.tags.keys}`]: `value-${Math.floor(i / counts.tags.keys) % counts.tags.values}`,
            },
          }
        : {}),
    };
  });
  let position = 0;
  for (let i = 0; i < rows.length; i += 200) {
    const batch = rows
      .slice(i, i + 200)
      .map((row) => ({ row, lineage: 'shard-many', sequence: String(++position).padStart(21, '0') }));
    const { failed } = await stats.fold(batch);
    if (failed.length > 0) throw new Error(`${failed.length} rows were not folded`);
  }
  return rows;
}
