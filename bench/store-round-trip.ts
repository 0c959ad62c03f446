/**
 * The store's own round trip, measured apart from any contender: one `GetItem` at a time from the
 * orchestrator to DynamoDB Local through the project's store client, for a key that is not there.
 * A proxied request waits for two such round trips (the gate's call, the row's put), so this is
 * the part of its added latency that is the store's and not the proxy's.
 */
import { createDynamoClients } from '../lambda/store/dynamodb/client';
import { percentile, round3 } from './stats';

export async function storeRoundTrip(
  endpoint: string,
  table: string,
  count: number,
): Promise<{ p50: number; p90: number; calls: number }> {
  const { raw, doc } = createDynamoClients({ region: 'eu-west-1', endpoint });
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await doc.send({ operation: 'GetItem', input: { TableName: table, Key: { pk: `absent-${i}`, sk: 'none' } } });
      times.push(performance.now() - started);
    }
  } finally {
    raw.destroy();
  }
  return { p50: round3(percentile(times, 50)), p90: round3(percentile(times, 90)), calls: count };
}
