/**
 * A forwarder in front of the run's DynamoDB Local that a test can cut,
 * throttle and disturb, to play store faults without restarting anything.
 *
 *   up        requests are forwarded (each one can be disturbed, see `disturb`)
 *   down      every connection is reset at once, and open ones are cut
 *   throttle  every request is answered with DynamoDB's throttling error
 *
 * It speaks just enough HTTP to see which operation a request is
 * (`x-amz-target`) and on which table and key, so a fault can hit one call.
 */
import {
  Agent,
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer, type Socket } from 'node:net';

export type GateMode = 'up' | 'down' | 'throttle';

export interface StoreCall {
  /** e.g. `GetItem`, `UpdateItem`, `PutItem`, `BatchWriteItem`. */
  operation: string;
  /** The tables the call touches (one, or several for batch and transaction calls). */
  tables: string[];
  /** The request's JSON body (DynamoDB's attribute-value format). */
  body: Record<string, unknown>;
  /** The store's answer, once it has answered (e.g. an update's `Attributes` when it asked for them). */
  answer?: Record<string, unknown>;
}

/**
 * `reset`: the connection is cut before the store sees the call.
 * `lose-answer`: the store performs the call, the answer never arrives.
 * The others answer in the store's place, as DynamoDB does, without performing the call:
 * `throttle` with its throttling error (400), `exceed-throughput` with the error of a partition over
 * its throughput (400), `throttle-transaction` with the cancellation a transaction gets when an
 * item it updates sits in a throttled partition (each `Update` action's reason `ThrottlingError`,
 * the others `None`), `fail` with its internal server error (500), `reject` with a validation error
 * (400), its answer to a malformed request.
 */
export type Disturbance =
  'reset' | 'lose-answer' | 'throttle' | 'exceed-throughput' | 'throttle-transaction' | 'fail' | 'reject';

export interface StoreGate {
  /** `http://127.0.0.1:<port>`: give it to the server as DYNAMODB_ENDPOINT. */
  endpoint: string;
  set(mode: GateMode): void;
  /** Disturbs the next `times` calls that match (while up); `Infinity` until `calm`. */
  disturb(disturbance: Disturbance, match: (call: StoreCall) => boolean, times?: number): void;
  /** Drops the disturbances not used up yet. */
  calm(): void;
  /** Calls disturbed so far. */
  readonly disturbed: number;
  /** How many calls that match the store has performed and answered so far (an event a test can wait for). */
  answered(match: (call: StoreCall) => boolean): number;
  /** Every call the store has performed and answered so far, in order (what a heat count reads). */
  answeredCalls(): readonly StoreCall[];
  readonly throttled: number;
  close(): Promise<void>;
}

const THROTTLE_BODY = JSON.stringify({
  __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
  message: 'The level of configured provisioned throughput for the table was exceeded.',
});

/** A transaction cancelled because the items it updates are in a throttled partition, as DynamoDB words it. */
function throttledTransaction(call: StoreCall): string {
  const actions = (call.body.TransactItems as Array<Record<string, unknown>> | undefined) ?? [];
  const reasons = actions.map((action) =>
    'Update' in action
      ? { Code: 'ThrottlingError', Message: 'Throughput exceeds the current capacity of your table or index.' }
      : { Code: 'None' },
  );
  return JSON.stringify({
    __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
    CancellationReasons: reasons,
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
  });
}

/** DynamoDB's own answers, for the disturbances that answer in its place. */
const ANSWERS: Partial<Record<Disturbance, { status: number; body: string | ((call: StoreCall) => string) }>> = {
  throttle: {
    status: 400,
    body: JSON.stringify({
      __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
      message: 'Rate of requests exceeds the allowed throughput.',
    }),
  },
  'exceed-throughput': { status: 400, body: THROTTLE_BODY },
  'throttle-transaction': { status: 400, body: throttledTransaction },
  fail: {
    status: 500,
    body: JSON.stringify({
      __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
      message: 'Internal server error',
    }),
  },
  reject: {
    status: 400,
    body: JSON.stringify({
      __type: 'com.amazon.coral.validate#ValidationException',
      message: 'One or more parameter values were invalid',
    }),
  },
};

export async function startStoreGate(target: string): Promise<StoreGate> {
  const { hostname, port } = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let mode: GateMode = 'up';
  let throttled = 0;
  let disturbed = 0;
  const rules: Array<{ disturbance: Disturbance; match: (call: StoreCall) => boolean; left: number }> = [];
  const open = new Set<Socket>();
  const answeredCalls: StoreCall[] = [];

  function forward(
    request: IncomingMessage,
    body: Buffer,
    response: ServerResponse,
    call: StoreCall | undefined,
    loseAnswer: boolean,
  ): void {
    const upstream = httpRequest(
      {
        host: hostname,
        port: Number(port),
        method: request.method,
        path: request.url,
        headers: request.headers,
        agent,
      },
      (answer) => {
        if (loseAnswer) {
          answer.resume();
          answer.on('end', () => request.socket.destroy());
          return;
        }
        response.writeHead(answer.statusCode ?? 500, answer.headers);
        const chunks: Buffer[] = [];
        if (call) answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.pipe(response);
        if (call)
          response.once('finish', () => {
            try {
              call.answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
            } catch {
              // Not JSON: the call is still counted, without its answer.
            }
            answeredCalls.push(call);
          });
      },
    );
    upstream.on('error', () => request.socket.destroy());
    upstream.end(body);
  }

  const http = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      if (mode === 'throttle') {
        throttled++;
        response
          .writeHead(400, {
            'content-type': 'application/x-amz-json-1.0',
            'x-amzn-requestid': `throttled-${throttled}`,
          })
          .end(THROTTLE_BODY);
        return;
      }
      const call = describe(request, body);
      const rule = call && rules.find((candidate) => candidate.left > 0 && candidate.match(call));
      if (rule) {
        rule.left--;
        disturbed++;
        if (rule.disturbance === 'reset') return void request.socket.destroy();
        const answer = ANSWERS[rule.disturbance];
        if (answer) {
          const text = typeof answer.body === 'string' ? answer.body : answer.body(call);
          response
            .writeHead(answer.status, {
              'content-type': 'application/x-amz-json-1.0',
              'x-amzn-requestid': `disturbed-${disturbed}`,
            })
            .end(text);
          return;
        }
      }
      forward(request, body, response, call, rule?.disturbance === 'lose-answer');
    });
  });

  const server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
    if (mode === 'down') return void socket.resetAndDestroy();
    http.emit('connection', socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };

  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    set(next) {
      if (next === mode) return;
      mode = next;
      // Connections of the old mode must not carry on as if nothing changed.
      for (const socket of open) socket.destroy();
    },
    disturb(disturbance, match, times = 1) {
      rules.push({ disturbance, match, left: times });
    },
    calm() {
      rules.length = 0;
    },
    get disturbed() {
      return disturbed;
    },
    get throttled() {
      return throttled;
    },
    answered(match) {
      return answeredCalls.filter(match).length;
    },
    answeredCalls() {
      return [...answeredCalls];
    },
    async close() {
      for (const socket of open) socket.destroy();
      agent.destroy();
      http.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function describe(request: IncomingMessage, body: Buffer): StoreCall | undefined {
  const target = String(request.headers['x-amz-target'] ?? '');
  try {
    const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    return { operation: target.split('.').pop() ?? '', tables: tablesOf(json), body: json };
  } catch {
    return undefined;
  }
}

function tablesOf(json: Record<string, unknown>): string[] {
  if (typeof json.TableName === 'string') return [json.TableName];
  if (json.RequestItems && typeof json.RequestItems === 'object') return Object.keys(json.RequestItems);
  if (Array.isArray(json.TransactItems)) {
    return (json.TransactItems as Array<Record<string, { TableName?: string }>>).flatMap((item) =>
      Object.values(item).map((op) => String(op.TableName ?? '')),
    );
  }
  return [];
}
