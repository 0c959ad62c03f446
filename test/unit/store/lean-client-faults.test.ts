import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchedGet } from '../../../lambda/store/dynamodb/batched-get';
import { awsCredentialChain } from '../../../lambda/store/dynamodb/wire/credentials';
import { LeanDocumentClient, sentAtMostOnce } from '../../../lambda/store/dynamodb/wire/document-client';
import type { Credentials } from '../../../lambda/store/dynamodb/wire/sigv4';

/**
 * The lean client against a local HTTP server that answers as DynamoDB does:
 * JSON-protocol error bodies (`__type`, `message`), the `Date` header, and a
 * signature refused when its time is more than 5 minutes from the server's.
 */

interface Seen {
  body: Record<string, unknown>;
  amzDate: string;
  authorization: string;
  target: string;
}

const MINUTE = 60_000;
/** `20261123T101112Z`, as SigV4 writes a time. */
const amzDateOf = (ms: number) => new Date(ms).toISOString().replace(/[:-]|\.\d{3}/g, '');
const msOfAmzDate = (text: string) =>
  Date.parse(text.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));

type Answer = (request: IncomingMessage, response: ServerResponse, serverNow: number) => void;

function errorAnswer(status: number, type: string, message: string): Answer {
  return (_request, response, serverNow) => {
    response
      .writeHead(status, {
        'content-type': 'application/x-amz-json-1.0',
        date: new Date(serverNow).toUTCString(),
        'x-amzn-requestid': 'REQ',
      })
      .end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }));
  };
}

const ok: Answer = (_request, response, serverNow) =>
  response
    .writeHead(200, { 'content-type': 'application/x-amz-json-1.0', date: new Date(serverNow).toUTCString() })
    .end(JSON.stringify({ Attributes: { n: { N: '1' } } }));

/** DynamoDB's check of the signing time, with its own wording. */
function signatureTimeCheck(request: IncomingMessage, response: ServerResponse, serverNow: number): boolean {
  const signed = msOfAmzDate(String(request.headers['x-amz-date']));
  const type = 'com.amazon.coral.service#InvalidSignatureException';
  const send = (message: string) =>
    response
      .writeHead(400, { 'content-type': 'application/x-amz-json-1.0', date: new Date(serverNow).toUTCString() })
      .end(JSON.stringify({ __type: type, message }));
  if (signed < serverNow - 5 * MINUTE) {
    send(
      `Signature expired: ${amzDateOf(signed)} is now earlier than ${amzDateOf(serverNow - 5 * MINUTE)} (${amzDateOf(serverNow)} - 5 min.)`,
    );
    return false;
  }
  if (signed > serverNow + 5 * MINUTE) {
    send(
      `Signature not yet current: ${amzDateOf(signed)} is still later than ${amzDateOf(serverNow + 5 * MINUTE)} (${amzDateOf(serverNow)} + 5 min.)`,
    );
    return false;
  }
  return true;
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
        body: JSON.parse(text),
        amzDate: String(request.headers['x-amz-date']),
        authorization: String(request.headers.authorization),
        target: String(request.headers['x-amz-target']),
      });
      const serverNow = Date.now() + serverOffsetMs;
      if (!signatureTimeCheck(request, response, serverNow)) return;
      const answer = script.shift() ?? ok;
      answer(request, response, serverNow);
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
afterAll(() => new Promise((resolve) => server.close(resolve)));

const client = (
  credentials: () => Credentials | Promise<Credentials> = () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
) => new LeanDocumentClient({ region: 'eu-west-1', endpoint, credentials });
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

describe('clock skew', () => {
  it.each([
    ['an hour behind (Signature expired)', 60],
    ['20 minutes ahead (Signature not yet current)', -20],
  ])(
    'with the local clock %s, re-signs with the server time from the Date header and retries once',
    async (_label, serverAheadMinutes) => {
      serverOffsetMs = serverAheadMinutes * MINUTE;
      const lean = client();
      await expect(lean.send(add())).resolves.toEqual(expect.objectContaining({ Attributes: { n: 1 } }));
      expect(seen).toHaveLength(2);
      const serverNow = Date.now() + serverOffsetMs;
      expect(Math.abs(msOfAmzDate(seen[0].amzDate) - serverNow)).toBeGreaterThan(5 * MINUTE);
      expect(Math.abs(msOfAmzDate(seen[1].amzDate) - serverNow)).toBeLessThan(MINUTE);

      // The offset is kept: the next call is signed with the server's time at once.
      await lean.send(add());
      expect(seen).toHaveLength(3);
      expect(Math.abs(msOfAmzDate(seen[2].amzDate) - serverNow)).toBeLessThan(MINUTE);
    },
  );

  it('retries a sent-at-most-once command too: a refused signature means nothing was applied', async () => {
    serverOffsetMs = 30 * MINUTE;
    await client().send(sentAtMostOnce(add()));
    expect(seen).toHaveLength(2);
  });

  it('does not retry a signature refused for another reason (no skew in the Date header)', async () => {
    script = [
      errorAnswer(
        400,
        'InvalidSignatureException',
        'The request signature we calculated does not match the signature you provided.',
      ),
    ];
    const error = await client()
      .send(add())
      .catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'InvalidSignatureException' });
    expect(seen).toHaveLength(1);
  });

  it('retries only once when the server keeps refusing the corrected time', async () => {
    serverOffsetMs = 60 * MINUTE;
    // After the correction the server still refuses, as if its clock jumped again: the client gives up.
    script = [errorAnswer(400, 'InvalidSignatureException', 'Signature expired')];
    const error = await client()
      .send(add())
      .catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'InvalidSignatureException' });
    expect(seen).toHaveLength(2);
  });
});

describe('retries, as the AWS SDK does', () => {
  it.each(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'])(
    'retries %s, even for a sent-at-most-once command',
    async (type) => {
      script = [errorAnswer(400, type, 'slow down'), errorAnswer(400, type, 'slow down')];
      await expect(client().send(sentAtMostOnce(add()))).resolves.toEqual(
        expect.objectContaining({ Attributes: { n: 1 } }),
      );
      expect(seen).toHaveLength(3);
    },
  );

  it('gives up after 3 attempts, with the last error', async () => {
    script = [0, 1, 2].map(() => errorAnswer(400, 'ThrottlingException', 'slow down'));
    await expect(client().send(add())).rejects.toMatchObject({ name: 'ThrottlingException', status: 400 });
    expect(seen).toHaveLength(3);
  });

  it('retries a 5xx for an idempotent command, not for a sent-at-most-once one (it may have been applied)', async () => {
    script = [errorAnswer(500, 'InternalServerError', 'Internal server error')];
    await client().send({ operation: 'PutItem', input: { TableName: 't', Item: { pk: 'a' } } });
    expect(seen).toHaveLength(2);

    seen = [];
    script = [errorAnswer(503, 'ServiceUnavailable', 'Service unavailable')];
    await expect(client().send(sentAtMostOnce(add()))).rejects.toMatchObject({
      name: 'ServiceUnavailable',
      status: 503,
    });
    expect(seen).toHaveLength(1);
  });

  it('retries a transaction cancelled only by conflicts', async () => {
    script = [
      (_request, response) =>
        response.writeHead(400).end(
          JSON.stringify({
            __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
            message: 'cancelled',
            CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
          }),
        ),
    ];
    await client().send(sentAtMostOnce(add()));
    expect(seen).toHaveLength(2);

    seen = [];
    script = [
      (_request, response) =>
        response.writeHead(400).end(
          JSON.stringify({
            __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
            message: 'cancelled',
            CancellationReasons: [{ Code: 'ConditionalCheckFailed' }],
          }),
        ),
    ];
    await expect(client().send(add())).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    expect(seen).toHaveLength(1);
  });

  it('retries a connection cut before the answer for an idempotent command, not for a sent-at-most-once one', async () => {
    script = [(request) => request.socket.destroy()];
    await client().send({ operation: 'GetItem', input: { TableName: 't', Key: { pk: 'a' } } });
    expect(seen).toHaveLength(2);

    seen = [];
    script = [(request) => request.socket.destroy()];
    await expect(client().send(sentAtMostOnce(add()))).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(seen).toHaveLength(1);
  });

  it('retries a refused connection (the request never left), even for a sent-at-most-once command', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    let calls = 0;
    const lean = new LeanDocumentClient({
      region: 'eu-west-1',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: () => {
        calls++;
        return { accessKeyId: 'AKID', secretAccessKey: 'secret' };
      },
    });
    await expect(lean.send(sentAtMostOnce(add()))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // Credentials are asked for once per attempt, before signing it.
    expect(calls).toBe(3);
  });
});

describe('credentials', () => {
  it('asks the provider before every attempt, so refreshed credentials are used at once', async () => {
    let generation = 0;
    const lean = client(async () => ({
      accessKeyId: `AKID${++generation}`,
      secretAccessKey: 'secret',
      sessionToken: `token${generation}`,
    }));
    await lean.send(add());
    await lean.send(add());
    expect(seen.map((s) => /Credential=(\w+)\//.exec(s.authorization)![1])).toEqual(['AKID1', 'AKID2']);
  });

  it("uses the AWS SDK's provider chain, which finds the Lambda role's keys in the environment", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'test-role-key-id',
      AWS_SECRET_ACCESS_KEY: 'role-secret',
      AWS_SESSION_TOKEN: 'role-session',
    });
    delete process.env.AWS_PROFILE;
    try {
      await client(awsCredentialChain()).send(add());
      expect(seen[0].authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=test-role-key-id\/\d{8}\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=[^,]*x-amz-security-token/,
      );
    } finally {
      process.env = saved;
    }
  });
});

describe('batch leftovers (the unprocessedItems policy)', () => {
  const json =
    (body: unknown): Answer =>
    (_request, response) =>
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(body));

  it('BatchedGet asks again only for the keys DynamoDB left unprocessed', async () => {
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
});
