/**
 * A forwarder in front of DynamoDB Local that logs every store call a server makes: point the
 * server's DYNAMODB_ENDPOINT at `endpoint`. Calls and answers pass through unchanged.
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StoreCall {
  /** e.g. `UpdateItem`, `TransactWriteItems` (from the x-amz-target header). */
  operation: string;
  /** The tables the call names, in the order they appear. */
  tables: string[];
  /** The request as sent (parsed JSON; empty when it was not JSON). */
  body: Record<string, unknown>;
  /**
   * What IAM checks the call as, per table: an operation as itself, each item of a transaction as
   * its own action (`Put` as `PutItem`, …).
   */
  actions: { table: string; action: string }[];
  /** Set once DynamoDB Local's answer has been passed back. */
  answered: boolean;
  /** What the counter's `mark()` returned when the call arrived (e.g. how many requests a fake provider had received). */
  mark: number;
  /** How many calls had been answered when this one arrived. */
  answeredBefore: number;
  /** This call's place among the answers (1 for the first call answered), once answered. */
  answerOrder?: number;
}

/**
 * True when no call of `calls` arrived after another of them had been answered: the server sent
 * them all before it had any of their answers, so together they cost one round trip.
 */
export function inOneWave(calls: readonly StoreCall[]): boolean {
  return calls.every((later) =>
    calls.every((earlier) => earlier.answerOrder === undefined || earlier.answerOrder > later.answeredBefore),
  );
}

export interface StoreCallCounter {
  endpoint: string;
  readonly calls: readonly StoreCall[];
  /**
   * Holds back the answers of the next calls until `count` of them have arrived (or `limitMs` has
   * passed, then lets them go). Calls the server sends together all arrive while nothing is
   * answered, however the machine schedules it; a call that needs an earlier answer arrives only
   * after the limit, so `inOneWave` sees it.
   */
  holdAnswers(count: number, limitMs: number): void;
  /** Resolves once a call at index `from` or later matching `test` has been answered (checked on every answer). */
  waitFor(from: number, test: (call: StoreCall) => boolean, timeoutMs: number): Promise<StoreCall>;
  close(): Promise<void>;
}

function tablesOf(body: Record<string, unknown>): string[] {
  if (typeof body.TableName === 'string') return [body.TableName];
  const items = body.RequestItems ?? body.TransactItems;
  if (Array.isArray(items))
    return items.flatMap((item) =>
      Object.values(item as Record<string, { TableName?: string }>).map((op) => op.TableName ?? ''),
    );
  return items && typeof items === 'object' ? Object.keys(items) : [];
}

const IN_TRANSACTION: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

function actionsOf(operation: string, body: Record<string, unknown>): StoreCall['actions'] {
  if (operation.startsWith('Transact') && Array.isArray(body.TransactItems))
    return (body.TransactItems as Record<string, { TableName?: string }>[]).flatMap((item) =>
      Object.entries(item).map(([kind, op]) => ({
        table: op.TableName ?? '',
        action: IN_TRANSACTION[kind] ?? `${operation}:${kind}`,
      })),
    );
  return [...new Set(tablesOf(body))].map((table) => ({ table, action: operation }));
}

export async function startStoreCallCounter(target: string, mark: () => number = () => 0): Promise<StoreCallCounter> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const calls: StoreCall[] = [];
  const waiters = new Set<() => void>();
  let answered = 0;
  let hold: { from: number; count: number; released: Promise<void>; release: () => void } | undefined;
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        // Not JSON: logged without tables.
      }
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      const call: StoreCall = {
        operation,
        tables: tablesOf(parsed),
        body: parsed,
        actions: actionsOf(operation, parsed),
        answered: false,
        mark: mark(),
        answeredBefore: answered,
      };
      const index = calls.push(call) - 1;
      const held = hold && index >= hold.from ? hold : undefined;
      if (held && calls.length - held.from >= held.count) held.release();
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent,
        },
        (answer) => {
          const deliver = () => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
            answer.on('end', () => {
              call.answered = true;
              call.answerOrder = ++answered;
              for (const wake of waiters) wake();
            });
          };
          if (held) void held.released.then(deliver);
          else deliver();
        },
      );
      forward.on('error', () => res.writeHead(502).end());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    holdAnswers(count, limitMs) {
      let release = () => undefined as void;
      const released = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, limitMs);
        release = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      const next = { from: calls.length, count, released, release };
      hold = next;
      void released.then(() => {
        if (hold === next) hold = undefined;
      });
    },
    waitFor: (from, test, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = calls.slice(from).find((call) => call.answered && test(call));
          if (!found) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no such store call within ${timeoutMs} ms; calls: ${calls.map((c) => `${c.operation} ${c.tables.join('+')}`).join(', ')}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
