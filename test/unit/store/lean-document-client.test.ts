import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LeanDocumentClient } from '../../../lambda/store/dynamodb/wire/document-client';
import { OPERATIONS, type OperationName } from '../../../lambda/store/dynamodb/wire/operations';
import { SigV4Signer } from '../../../lambda/store/dynamodb/wire/sigv4';

/** The SDK's own signer needs a SHA-256 constructor; Node's crypto provides it. */
class NodeSha256 {
  private readonly hash;
  constructor(secret?: unknown) {
    this.hash = secret ? createHmac('sha256', secret as string) : createHash('sha256');
  }
  update(data: string | Uint8Array) {
    this.hash.update(data);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
  reset() {}
}

describe('SigV4 signer', () => {
  const credentialSets = [
    ['long-term credentials', undefined],
    ['session credentials (Lambda role)', 'IQoJb3JpZ2luX2VjEXAMPLE//session+token=='],
  ] as const;
  // Every operation the client sends (operations.ts), each with both kinds of credentials.
  const cases = (Object.keys(OPERATIONS) as OperationName[]).flatMap((operation) =>
    credentialSets.map(([label, token]) => [operation, label, token] as const),
  );

  it('is asked to sign every operation the client can send', () => {
    expect(cases.map(([operation]) => operation)).toEqual(
      expect.arrayContaining([
        'GetItem',
        'PutItem',
        'UpdateItem',
        'DeleteItem',
        'Query',
        'BatchGetItem',
        'BatchWriteItem',
        'TransactWriteItems',
      ]),
    );
  });

  it.each(cases)(
    'produces the same Authorization as the AWS SDK signer for %s, with %s',
    async (operation, _label, sessionToken) => {
      const credentials = {
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
        sessionToken,
      };
      const now = new Date('2026-11-21T10:11:12.345Z');
      const body = JSON.stringify({ TableName: 't', Key: { pk: { S: `ACCOUNT#x ${operation} é` } } });
      const host = 'dynamodb.eu-west-1.amazonaws.com';
      const target = `DynamoDB_20120810.${operation}`;
      const ours = new SigV4Signer('eu-west-1', 'dynamodb').sign({ host, target, body, credentials, now });
      // applyChecksum off: the same signed-header set as ours (the payload hash is in the canonical request either way).
      const reference = new SignatureV4({
        credentials,
        region: 'eu-west-1',
        service: 'dynamodb',
        sha256: NodeSha256 as never,
        applyChecksum: false,
      });
      const signed = await reference.sign(
        {
          method: 'POST',
          protocol: 'https:',
          hostname: host,
          path: '/',
          query: {},
          headers: { host, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
          body,
        } as never,
        { signingDate: now },
      );
      const expected = (signed as unknown as { headers: Record<string, string> }).headers;
      const signedNames = /SignedHeaders=([^,]+)/.exec(expected.authorization)![1];
      expect(/SignedHeaders=([^,]+)/.exec(ours.authorization)![1]).toBe(signedNames);
      expect(ours.authorization).toBe(expected.authorization);
      // Every header the signature covers is sent, with the value signed.
      for (const name of signedNames.split(';'))
        expect(ours[name]).toBe(
          expected[name] ?? expected[Object.keys(expected).find((key) => key.toLowerCase() === name)!],
        );
      expect(ours['x-amz-date']).toBe('20261121T101112Z');
      if (sessionToken) expect(ours['x-amz-security-token']).toBe(sessionToken);
      else expect(ours['x-amz-security-token']).toBeUndefined();
    },
  );
});

describe('LeanDocumentClient on the wire', () => {
  let server: Server;
  let seen: Array<{ headers: IncomingMessage['headers']; body: Record<string, unknown> }> = [];
  let answers: Array<{ status: number; body: unknown }> = [];
  let client: LeanDocumentClient;

  beforeAll(async () => {
    server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        seen.push({ headers: request.headers, body: JSON.parse(text) });
        const answer = answers.shift() ?? { status: 200, body: {} };
        response
          .writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.0' })
          .end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = new LeanDocumentClient({
      region: 'eu-west-1',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
    });
  });
  beforeEach(() => {
    seen = [];
    answers = [];
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('sends the JSON protocol request with marshalled items and base64 binaries', async () => {
    await client.send({
      operation: 'PutItem',
      input: { TableName: 't', Item: { pk: 'a', n: 5, bin: Buffer.from([1, 2, 255]), list: ['x'], gone: undefined } },
    });
    expect(seen[0].headers['x-amz-target']).toBe('DynamoDB_20120810.PutItem');
    expect(seen[0].headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(seen[0].headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=[0-9a-f]{64}$/,
    );
    expect(seen[0].body).toEqual({
      TableName: 't',
      Item: { pk: { S: 'a' }, n: { N: '5' }, bin: { B: 'AQL/' }, list: { L: [{ S: 'x' }] } },
    });
  });

  it('unmarshalls results, binaries included', async () => {
    answers.push({ status: 200, body: { Item: { pk: { S: 'a' }, n: { N: '7' }, bin: { B: 'AQL/' } } } });
    const { Item } = await client.send({ operation: 'GetItem', input: { TableName: 't', Key: { pk: 'a' } } });
    expect(Item).toEqual({ pk: 'a', n: 7, bin: Buffer.from([1, 2, 255]) });
  });

  it('names errors by their DynamoDB type, and retries throttling but not a failed condition', async () => {
    answers.push({
      status: 400,
      body: {
        __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
        message: 'The conditional request failed',
      },
    });
    const failed = await client
      .send({
        operation: 'UpdateItem',
        input: {
          TableName: 't',
          Key: { pk: 'a' },
          UpdateExpression: 'ADD c :one',
          ExpressionAttributeValues: { ':one': 1 },
        },
      })
      .catch((e) => e);
    expect(failed.name).toBe('ConditionalCheckFailedException');
    expect(seen).toHaveLength(1);

    answers.push({
      status: 400,
      body: { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'slow down' },
    });
    answers.push({ status: 200, body: { Attributes: { c: { N: '1' } } } });
    const { Attributes } = await client.send({
      operation: 'UpdateItem',
      input: {
        TableName: 't',
        Key: { pk: 'a' },
        UpdateExpression: 'ADD c :one',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      },
    });
    expect(Attributes).toEqual({ c: 1 });
    expect(seen).toHaveLength(3);
  });
});
