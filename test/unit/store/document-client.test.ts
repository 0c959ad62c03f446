/**
 * The stores' client (the AWS SDK's document client behind `send`, with lambda/base/retry.ts's
 * `storeCall` policy) against a local HTTP server that answers as DynamoDB does: JSON-protocol
 * error bodies (`__type`, `message`), the `Date` header, and a signature refused when its time is
 * more than 5 minutes from the server's. What DynamoDB Local does with the calls is tested in
 * test/integration/store/.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { retryPolicies } from '../../../lambda/base/retry';
import { BatchedGet } from '../../../lambda/store/dynamodb/batched-get';
import { createDynamoClient, createDynamoClients, storeSdkClients } from '../../../lambda/store/dynamodb/client';
import { sentOnce } from '../../../lambda/store/dynamodb/commands';
import { ATTEMPT_SILENCE_MS, CALL_DEADLINE_MS, StoreDeadlineError } from '../../../lambda/store/dynamodb/deadlines';
import { SdkDocumentClient } from '../../../lambda/store/dynamodb/document-client';
import { cancellationReasons, conditionFailedItem } from '../../../lambda/store/dynamodb/store-errors';
import { isStoreOutage } from '../../../lambda/store/dynamodb/store-outage';

interface Seen {
  body: Record<string, unknown>;
  amzDate: string;
  authorization: string;
  target: string;
  userAgent: string;
  socket: Socket;
}

const MINUTE = 60_000;
/** Every send one store call may make (the client's only retries). */
const STORE_CALL_ATTEMPTS = retryPolicies.storeCall(() => true).attempts;
const msOfAmzDate = (text: string) =>
  Date.parse(text.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));

type Answer = (request: IncomingMessage, response: ServerResponse, serverNow: number) => void;

const JSON_TYPE = 'application/x-amz-json-1.0';

function errorAnswer(status: number, type: string, message: string, extra: object = {}): Answer {
  return (_request, response, serverNow) =>
    response
      .writeHead(status, { 'content-type': JSON_TYPE, date: new Date(serverNow).toUTCString() })
      .end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, ...extra }));
}

const json =
  (body: unknown): Answer =>
  (_request, response, serverNow) =>
    response
      .writeHead(200, { 'content-type': JSON_TYPE, date: new Date(serverNow).toUTCString() })
      .end(JSON.stringify(body));

const ok = json({ Attributes: { n: { N: '1' } } });

/** DynamoDB's check of the signing time. */
function signatureTimeCheck(request: IncomingMessage, response: ServerResponse, serverNow: number): boolean {
  const signed = msOfAmzDate(String(request.headers['x-amz-date']));
  if (Math.abs(signed - serverNow) <= 5 * MINUTE) return true;
  errorAnswer(400, 'InvalidSignatureException', 'Signature expired')(request, response, serverNow);
  return false;
}

let server: Server;
let endpoint: string;
let seen: Seen[] = [];
/** The server's clock, relative to the test machine's. */
let serverOffsetMs = 0;
/** Answers for the next requests, in order; then `ok`. */
let script: Answer[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      seen.push({
        body: JSON.parse(text) as Record<string, unknown>,
        amzDate: String(request.headers['x-amz-date']),
        authorization: String(request.headers.authorization),
        target: String(request.headers['x-amz-target']),
        userAgent: String(request.headers['user-agent']),
        socket: request.socket,
      });
      const serverNow = Date.now() + serverOffsetMs;
      if (!signatureTimeCheck(request, response, serverNow)) return;
      (script.shift() ?? ok)(request, response, serverNow);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(() => {
  seen = [];
  script = [];
  serverOffsetMs = 0;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
});

const clients: Array<{ raw: { destroy(): void } }> = [];
afterAll(() => clients.forEach((c) => c.raw.destroy()));
function client() {
  const made = createDynamoClients({ region: 'eu-west-1', endpoint });
  clients.push(made);
  return made.doc;
}

const add = () =>
  ({
    operation: 'UpdateItem',
    input: {
      TableName: 't',
      Key: { pk: 'a' },
      UpdateExpression: 'ADD n :one',
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    },
  }) as const;

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('one retry policy: the SDK makes one attempt, lambda/base/retry.ts the others', () => {
  it.each(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'])(
    'retries %s',
    async (type) => {
      script = [errorAnswer(400, type, 'slow down'), errorAnswer(400, type, 'slow down')];
      await expect(client().send(add())).resolves.toEqual(expect.objectContaining({ Attributes: { n: 1 } }));
      expect(seen).toHaveLength(3);
    },
  );

  it(`gives up after ${STORE_CALL_ATTEMPTS} sends with the last error, an outage`, async () => {
    script = [0, 1, 2, 3, 4].map(() => errorAnswer(400, 'ThrottlingException', 'slow down'));
    const error = await failure(client().send(add()));
    expect(error).toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    expect(isStoreOutage(error)).toBe(true);
    expect(seen).toHaveLength(STORE_CALL_ATTEMPTS);
  });

  it('sends a command marked sent-once once: its caller retries it', async () => {
    script = [errorAnswer(400, 'ThrottlingException', 'slow down')];
    const error = await failure(client().send(sentOnce(add())));
    expect(isStoreOutage(error)).toBe(true);
    expect(seen).toHaveLength(1);
  });

  it('retries a 5xx, and a 5xx page that is not DynamoDB JSON (an outage too)', async () => {
    script = [errorAnswer(500, 'InternalServerError', 'Internal server error')];
    await client().send({ operation: 'PutItem', input: { TableName: 't', Item: { pk: 'a' } } });
    expect(seen).toHaveLength(2);

    seen = [];
    const badGateway: Answer = (_request, response) =>
      response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
    script = [badGateway, badGateway, badGateway];
    const error = await failure(client().send({ operation: 'GetItem', input: { TableName: 't', Key: { pk: 'a' } } }));
    expect(isStoreOutage(error)).toBe(true);
    expect(seen).toHaveLength(STORE_CALL_ATTEMPTS);
  });

  it('retries a connection cut before the answer', async () => {
    script = [(request) => request.socket.destroy()];
    await client().send({ operation: 'GetItem', input: { TableName: 't', Key: { pk: 'a' } } });
    expect(seen).toHaveLength(2);
  });

  it('retries a refused connection, then reports an outage', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const made = createDynamoClients({ region: 'eu-west-1', endpoint: `http://127.0.0.1:${port}` });
    clients.push(made);
    const error = await failure(made.doc.send(add()));
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(isStoreOutage(error)).toBe(true);
  });

  it('does not retry a failed condition, and reads the item it was checked against', async () => {
    script = [
      errorAnswer(400, 'ConditionalCheckFailedException', 'The conditional request failed', {
        Item: { pk: { S: 'a' }, n: { N: '7' }, blob: { B: Buffer.from('hi').toString('base64') } },
      }),
    ];
    const error = await failure(client().send(add()));
    expect(seen).toHaveLength(1);
    expect(isStoreOutage(error)).toBe(false);
    expect(conditionFailedItem(error)).toEqual({ pk: 'a', n: 7, blob: new Uint8Array(Buffer.from('hi')) });
  });

  it('retries a transaction cancelled only by conflicts or throttling, not one cancelled by a condition', async () => {
    const cancelledBy = (...codes: string[]) =>
      errorAnswer(400, 'TransactionCanceledException', 'cancelled', {
        CancellationReasons: codes.map((Code) => ({ Code })),
      });
    script = [cancelledBy('None', 'TransactionConflict'), cancelledBy('ThrottlingError', 'None')];
    await client().send(add());
    expect(seen).toHaveLength(3);

    seen = [];
    script = [cancelledBy('ConditionalCheckFailed', 'None')];
    const error = await failure(client().send(add()));
    expect(error).toMatchObject({ name: 'TransactionCanceledException' });
    expect(cancellationReasons(error)).toEqual(['ConditionalCheckFailed', 'None']);
    expect(seen).toHaveLength(1);
  });
});

describe('clock skew', () => {
  it.each([
    ['an hour behind', 60],
    ['20 minutes ahead', -20],
  ])(
    "with the local clock %s, the SDK corrects its time from the answer's Date header and the call is sent once more",
    async (_label, serverAheadMinutes) => {
      serverOffsetMs = serverAheadMinutes * MINUTE;
      const doc = client();
      await expect(doc.send(add())).resolves.toEqual(expect.objectContaining({ Attributes: { n: 1 } }));
      expect(seen).toHaveLength(2);
      const serverNow = Date.now() + serverOffsetMs;
      expect(Math.abs(msOfAmzDate(seen[1].amzDate) - serverNow)).toBeLessThan(MINUTE);

      // The offset is kept: the next call is signed with the server's time at once.
      await doc.send(add());
      expect(seen).toHaveLength(3);
    },
  );

  it('does not retry a signature refused for another reason', async () => {
    script = [errorAnswer(400, 'InvalidSignatureException', 'The request signature we calculated does not match')];
    const error = await failure(client().send(add()));
    expect(error).toMatchObject({ name: 'InvalidSignatureException' });
    expect(isStoreOutage(error)).toBe(false);
    expect(seen).toHaveLength(1);
  });
});

describe('the wire', () => {
  it("in AWS, single-item calls go to the region's DynamoDB endpoint over HTTPS, as the SDK's commands do", () => {
    const raw = createDynamoClient({ region: 'eu-west-1' });
    clients.push({ raw });
    expect(String(storeSdkClients({ region: 'eu-west-1' }, raw).items.url)).toBe(
      'https://dynamodb.eu-west-1.amazonaws.com/',
    );
  });

  it('signs with SigV4 for dynamodb in the region, and keeps one connection alive across calls', async () => {
    const doc = client();
    for (let i = 0; i < 3; i++) await doc.send(add());
    expect(seen.map((s) => s.target)).toEqual(Array(3).fill('DynamoDB_20120810.UpdateItem'));
    expect(seen[0].authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=.*x-amz-target/,
    );
    expect(new Set(seen.map((s) => s.socket)).size).toBe(1);
  });

  it('a single-item call sends the same headers on its hundredth call as on its first', async () => {
    const doc = client();
    for (let i = 0; i < 100; i++) await doc.send(add());
    expect(new Set(seen.map((call) => call.userAgent)).size).toBe(1);
    expect(seen[0].userAgent).toMatch(/^ai-usage-proxy\/\S+ aws-sdk-js$/);
  });

  it('marshalls items (binaries in base64, undefined fields dropped) and unmarshalls answers', async () => {
    script = [json({ Item: { pk: { S: 'a' }, big: { N: '12345678901234567890' }, data: { B: 'AQID' } } })];
    const doc = client();
    await expect(
      doc.send({ operation: 'GetItem', input: { TableName: 't', Key: { pk: 'a' } } }),
    ).resolves.toMatchObject({ Item: { pk: 'a', big: 12345678901234567890n, data: new Uint8Array([1, 2, 3]) } });
    await doc.send({
      operation: 'PutItem',
      input: { TableName: 't', Item: { pk: 'a', data: Buffer.from([1, 2, 3]), gone: undefined } },
    });
    expect(seen[1].body).toEqual({ TableName: 't', Item: { pk: { S: 'a' }, data: { B: 'AQID' } } });
  });

  it('single-item and document calls marshall alike, whichever ran first: a class instance is stored as its fields', async () => {
    class Record {
      constructor(
        readonly pk: string,
        readonly n: number,
      ) {}
    }
    script = [json({ Items: [] }), json({}), json({ Items: [] }), json({})];
    const doc = client();
    const query = {
      TableName: 't',
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': new Record('a', 1) },
    };
    for (let i = 0; i < 2; i++) {
      await doc.send({ operation: 'Query', input: query });
      await doc.send({ operation: 'PutItem', input: { TableName: 't', Item: new Record('a', 1) } });
    }
    const recordAttribute = { M: { pk: { S: 'a' }, n: { N: '1' } } };
    expect(seen.map((call) => call.body)).toEqual([
      { ...query, ExpressionAttributeValues: { ':pk': recordAttribute } },
      { TableName: 't', Item: recordAttribute.M },
      { ...query, ExpressionAttributeValues: { ':pk': recordAttribute } },
      { TableName: 't', Item: recordAttribute.M },
    ]);
  });

  it('BatchedGet asks again only for the keys DynamoDB left unprocessed (the unprocessedItems policy)', async () => {
    script = [
      json({
        Responses: { t: [{ pk: { S: 'a' }, v: { N: '1' } }] },
        UnprocessedKeys: { t: { Keys: [{ pk: { S: 'b' } }], ConsistentRead: true } },
      }),
      json({ Responses: { t: [{ pk: { S: 'b' }, v: { N: '2' } }] }, UnprocessedKeys: {} }),
    ];
    const reads = new BatchedGet(client(), 't', ['pk']);
    await expect(Promise.all([reads.get({ pk: 'a' }), reads.get({ pk: 'b' })])).resolves.toEqual([
      { pk: 'a', v: 1 },
      { pk: 'b', v: 2 },
    ]);
    expect(seen).toHaveLength(2);
    expect(seen[1].body).toEqual({ RequestItems: { t: { Keys: [{ pk: { S: 'b' } }], ConsistentRead: true } } });
  });

  it('a batch throttled as a whole is retried by that policy alone, not by the client inside it', async () => {
    const attempts = retryPolicies.unprocessedItems(() => true).attempts;
    script = Array.from({ length: attempts + 3 }, () => errorAnswer(400, 'ThrottlingException', 'slow down'));
    const reads = new BatchedGet(client(), 't', ['pk']);
    const errors = await Promise.all([failure(reads.get({ pk: 'a' })), failure(reads.get({ pk: 'b' }))]);
    expect(errors.map(isStoreOutage)).toEqual([true, true]);
    expect(seen).toHaveLength(attempts);
  });
});

describe('deadlines: a store that accepts the call and never answers', () => {
  /**
   * The production bounds (ATTEMPT_SILENCE_MS, CALL_DEADLINE_MS) scaled down five times, in the same
   * ratio, through the parameters the client takes them by: the same timers and the same attempts
   * before the deadline, in a fifth of the wait (they were 20 s of this file's 22).
   */
  const SILENCE_MS = ATTEMPT_SILENCE_MS / 5;
  const DEADLINE_MS = CALL_DEADLINE_MS / 5;
  function deadlineClient() {
    const raw = createDynamoClient({ region: 'eu-west-1', endpoint }, SILENCE_MS);
    clients.push({ raw });
    return new SdkDocumentClient(storeSdkClients({ region: 'eu-west-1', endpoint }, raw), DEADLINE_MS);
  }
  /** The request is read, and no answer ever comes (a stalled store). */
  const silent: Answer = () => undefined;
  const timed = async (call: Promise<unknown>) => {
    const started = performance.now();
    const error = await failure(call);
    return { error, ms: performance.now() - started };
  };

  it('a silent attempt is given up and retried; the call ends by its deadline with StoreDeadlineError, an outage', async () => {
    script = Array.from({ length: 10 }, () => silent);
    const { error, ms } = await timed(deadlineClient().send(add()));
    expect(error).toBeInstanceOf(StoreDeadlineError);
    expect(isStoreOutage(error)).toBe(true);
    // The timers fire late on a loaded machine, never early.
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    // Each attempt given up after its silence, until the deadline (timers late on a loaded machine may leave
    // fewer): fewer than the policy's attempts, so the deadline, not the retries running out, ended the call.
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBeLessThanOrEqual(Math.ceil(DEADLINE_MS / SILENCE_MS));
    expect(seen.length).toBeLessThan(STORE_CALL_ATTEMPTS);
  });

  it('a command its caller retries (sent once) fails as an outage after its one silent attempt, for the caller to retry', async () => {
    script = [silent];
    const { error, ms } = await timed(deadlineClient().send(sentOnce(add())));
    expect(isStoreOutage(error)).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(SILENCE_MS - 50);
    // Ended by its attempt's silence, not by the call's deadline (that one throws StoreDeadlineError).
    expect(error).not.toBeInstanceOf(StoreDeadlineError);
    expect(seen).toHaveLength(1);
  });

  it('one silent attempt, then an answer: the call succeeds on its retry', async () => {
    script = [silent];
    await expect(deadlineClient().send(add())).resolves.toEqual(expect.objectContaining({ Attributes: { n: 1 } }));
    expect(seen).toHaveLength(2);
  });
});
