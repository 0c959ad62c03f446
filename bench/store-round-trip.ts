/**
 * The store's own round trip, measured apart from any contender, one call at a time from the
 * orchestrator to DynamoDB Local through the project's store client: a `GetItem` for a key that is
 * not there, and the token gate's `UpdateItem` (gate-call.ts). The gate's is the one round trip a
 * proxied request waits for before forwarding (the usage row is put after the answer has gone
 * out), so it is the part of the added latency that is the store's and not the proxy's.
 */
import { createDynamoClients } from '../lambda/store/dynamodb/client';
import { gateInput, seedGates } from './gate-call';
import { percentile, round3 } from './stats';

export interface RoundTrips {
  calls: number;
  getItem: { p50: number; p90: number };
  gate: { p50: number; p90: number };
}

export async function storeRoundTrips(
  endpoint: string,
  tables: { accounts: string; rateLimits: string },
  count: number,
): Promise<RoundTrips> {
  const { raw, doc } = createDynamoClients({ region: 'eu-west-1', endpoint });
  const timed = async (call: (i: number) => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await call(i);
      times.push(performance.now() - started);
    }
    return { p50: round3(percentile(times, 50)), p90: round3(percentile(times, 90)) };
  };
  try {
    await seedGates(doc, tables.rateLimits);
    const getItem = await timed((i) =>
      doc.send({ operation: 'GetItem', input: { TableName: tables.accounts, Key: { pk: `absent-${i}`, sk: 'none' } } }),
    );
    const gate = await timed((i) => doc.send({ operation: 'UpdateItem', input: gateInput(tables.rateLimits, i) }));
    return { calls: count, getItem, gate };
  } finally {
    raw.destroy();
  }
}
