/**
 * The network between a Lambda instance and its store, as a TCP forwarder on 127.0.0.1: it notes
 * every connection the instance opens and which ones carried requests since a given moment, and
 * it can slow the writes to one table. Bytes pass through unchanged and in order.
 *
 * A held write is sent on after `holdMs`, and never while the instance is frozen: like a request
 * the frozen process had not sent yet, it cannot reach the store before the instance is thawed.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface StoreLink {
  /** `http://127.0.0.1:port`, for the instance's DYNAMODB_ENDPOINT. */
  endpoint: string;
  /** Connections opened so far, in order (each one's index is its id). */
  opened(): number;
  /** A mark on the link's clock, for `usedSince`. */
  now(): number;
  /** Ids of the connections that carried bytes after `mark`. */
  usedSince(mark: number): number[];
  /** Requests that mention `table` (its name in the body) reach the store `holdMs` late, and not while frozen. */
  holdWritesTo(table: string, holdMs: number): void;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startStoreLink(target: string): Promise<StoreLink> {
  const { hostname, port } = new URL(target);
  let clock = 0;
  const lastUsed: number[] = [];
  const sockets = new Set<Socket>();
  let hold: { table: Buffer; ms: number } | undefined;
  let frozen = false;
  const waitingForThaw: Array<() => void> = [];
  const thawed = () => (frozen ? new Promise<void>((resolve) => waitingForThaw.push(resolve)) : Promise.resolve());

  const server = createServer((client) => {
    const id = lastUsed.length;
    lastUsed.push(-1);
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    // Each part waits for the one before it, so a held request delays what follows on its connection.
    let sent = Promise.resolve();
    client.on('data', (bytes: Buffer) => {
      lastUsed[id] = ++clock;
      const held = hold && bytes.includes(hold.table) ? hold.ms : undefined;
      sent = sent.then(async () => {
        if (held !== undefined) await new Promise((resolve) => setTimeout(resolve, held));
        await thawed();
        if (!upstream.destroyed) upstream.write(bytes);
      });
    });
    upstream.pipe(client);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    opened: () => lastUsed.length,
    now: () => clock,
    usedSince: (mark) => lastUsed.flatMap((used, id) => (used > mark ? [id] : [])),
    holdWritesTo: (table, ms) => (hold = { table: Buffer.from(JSON.stringify(table)), ms }),
    freeze: () => (frozen = true),
    thaw: () => {
      frozen = false;
      for (const wake of waitingForThaw.splice(0)) wake();
    },
    close: () =>
      new Promise((resolve) => {
        frozen = false;
        for (const wake of waitingForThaw.splice(0)) wake();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
