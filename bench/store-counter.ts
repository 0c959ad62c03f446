/**
 * A counting forwarder in front of DynamoDB Local: the proxy under study is
 * pointed at it, and every store call is logged with its operation, table,
 * monotonic start and end times and the capacity it consumed. It asks DynamoDB
 * Local for `ReturnConsumedCapacity: TOTAL` (DynamoDB Local does not check
 * request signatures, and the response it signs is passed back unchanged).
 * Each answer is held back `delayMs`: calls a proxy starts together then overlap
 * for sure, and a call that waited for another one starts visibly later, so the
 * number of sequential waves can be read from the timestamps.
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { billedWrite, type BilledWrite } from './billed-units';
import { monotonicMs } from './fake-upstream';

export interface StoreCall {
  operation: string;
  table: string;
  startMs: number;
  endMs: number;
  /** Read or write units reported by DynamoDB Local for this call. */
  units: number;
  /** Write units as DynamoDB bills them, from the items the call writes (billed-units.ts); undefined for reads. */
  billedUnits?: number;
  /** Items a TransactWriteItems names. */
  transactionItems?: number;
  kind: 'read' | 'write' | 'other';
}

export interface StoreCounter {
  endpoint: string;
  readonly calls: readonly StoreCall[];
  inFlight(): number;
  reset(): void;
  close(): Promise<void>;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

function consumedUnits(body: string): number {
  try {
    const parsed = JSON.parse(body) as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> };
    const consumed = parsed.ConsumedCapacity;
    const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
    return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
  } catch {
    return 0;
  }
}

export async function startStoreCounter(target: string, delayMs = 0): Promise<StoreCounter> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let calls: StoreCall[] = [];
  let pending = 0;

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const startMs = monotonicMs();
      pending++;
      const operation = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? 'unknown';
      let body = Buffer.concat(parts);
      let table = '';
      let billed: BilledWrite | undefined;
      try {
        const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        // Batch and transaction calls name their tables inside the request.
        const requestItems = json.RequestItems ?? json.TransactItems;
        if (typeof json.TableName === 'string') table = json.TableName;
        else if (requestItems && typeof requestItems === 'object' && !Array.isArray(requestItems)) table = Object.keys(requestItems).join('+');
        else if (Array.isArray(requestItems))
          table = [...new Set(requestItems.flatMap((item) => Object.values(item as Record<string, { TableName?: string }>).map((op) => op.TableName ?? '')))].join('+');
        billed = billedWrite(operation, json);
        if ((READS.has(operation) || WRITES.has(operation)) && json.ReturnConsumedCapacity === undefined) {
          json.ReturnConsumedCapacity = 'TOTAL';
          body = Buffer.from(JSON.stringify(json));
        }
      } catch {
        // Not JSON: forward as it came.
      }
      const headers = { ...req.headers, 'content-length': String(body.length), host: upstream.host };
      const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (answer) => {
        const answerParts: Buffer[] = [];
        answer.on('data', (part: Buffer) => answerParts.push(part));
        answer.on('end', () => {
          const answerBody = Buffer.concat(answerParts);
          setTimeout(() => {
            pending--;
            const units = consumedUnits(answerBody.toString('utf8'));
            calls.push({
              operation,
              table,
              startMs,
              endMs: monotonicMs(),
              units,
              // An Update's request names only what it changes: DynamoDB Local's figure, which knows the stored item, when higher.
              ...(billed ? { billedUnits: Math.max(units, billed.units), transactionItems: billed.transactionItems } : {}),
              kind: READS.has(operation) ? 'read' : WRITES.has(operation) ? 'write' : 'other',
            });
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(answerBody);
          }, delayMs);
        });
      });
      forward.on('error', () => {
        pending--;
        res.writeHead(502).end();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get calls() {
      return calls;
    },
    inFlight: () => pending,
    reset: () => void (calls = []),
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
