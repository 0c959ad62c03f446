/**
 * Bedrock paths through raw HTTP, as sent (no client normalises them): a model segment that could move
 * the upstream path is refused before anything is forwarded, a URL-encoded ARN reaches Bedrock still
 * encoded and is the row's model, CountTokens is forwarded signed with a free row, and nothing else is:
 * any other method or path answers 404 or 405 in Bedrock's shape without a call (docs/bedrock.md, "Endpoints").
 */
import { request } from 'node:http';
import { startProxy, type ProxyServer } from '../support/proxy-server';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const BODY = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'Hello' }] }] });

/** One request with its path exactly as written (fetch would resolve `%2e%2e` before sending). */
function send(
  method: string,
  path: string,
  token: string,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const url = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: `/api/proxy/bedrock${path}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

it('hostile model segments are refused in Bedrock’s error shape, nothing is forwarded', async () => {
  const account = await proxy.createAccount('bedrock-hostile');
  const before = proxy.fakes.bedrock.requests.length;
  const cases = [
    ...['x%2F..%2Fy', '%2e%2e', '%2E%2E%2Fadmin', 'x%252Fy', 'x%252F..%252Fy', 'x%00y', 'x%2F'].flatMap((segment) => [
      [segment, 'converse'],
      [segment, 'count-tokens'],
    ]),
    // No model id: fine in another path, refused in an endpoint's (it would skip the model checks).
    ['x%2Cy', 'converse'],
  ];
  for (const [segment, operation] of cases) {
    const answer = await send('POST', `/model/${segment}/${operation}`, account.token, BODY);
    expect({ segment, operation, status: answer.status, type: answer.headers['x-amzn-errortype'] }).toEqual({
      segment,
      operation,
      status: 404,
      type: expect.any(String),
    });
    expect(JSON.parse(answer.text)).toEqual({ message: expect.any(String) });
  }
  expect(proxy.fakes.bedrock.requests.length).toBe(before);
});

it('a URL-encoded ARN is accepted: forwarded still encoded, signed, decoded once for the row', async () => {
  const account = await proxy.createAccount('bedrock-arn');
  const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6';
  const answer = await send('POST', `/model/${encodeURIComponent(arn)}/converse`, account.token, BODY);
  expect(answer.status).toBe(200);
  expect(proxy.fakes.bedrock.requests.at(-1)).toMatchObject({
    rawPath: `/model/${encodeURIComponent(arn)}/converse`,
    model: arn,
    operation: 'converse',
    auth: 'sigv4',
    signatureProblem: undefined,
  });
  const [row] = await proxy.waitForRows(account.token, 1);
  expect(row).toMatchObject({
    provider: 'bedrock',
    kind: 'converse',
    model: arn,
    status_code: 200,
    priced: true,
    input_tokens: 25 + 1536 + 128,
  });
});

it('CountTokens is forwarded signed, the answer unchanged, its row free (cost 0, priced) with the path’s model', async () => {
  const account = await proxy.createAccount('bedrock-count');
  const path = '/model/eu.anthropic.claude-sonnet-4-6/count-tokens';
  const body = JSON.stringify({ input: { converse: JSON.parse(BODY) as unknown } });
  const answer = await send('POST', path, account.token, body);
  const upstream = proxy.fakes.bedrock.requests.at(-1)!;
  expect({ status: answer.status, text: answer.text }).toEqual({
    status: 200,
    text: upstream.response.body.toString('utf8'),
  });
  expect(upstream).toMatchObject({ method: 'POST', rawPath: path, auth: 'sigv4', signatureProblem: undefined });
  expect(upstream.body.toString('utf8')).toBe(body);
  const [row] = await proxy.waitForRows(account.token, 1);
  expect(row).toMatchObject({
    provider: 'bedrock',
    kind: 'count_tokens',
    model: 'eu.anthropic.claude-sonnet-4-6',
    status_code: 200,
    cost_usd: 0,
    priced: true,
  });
});

it('any other method or path is refused in Bedrock’s error shape, never signed or sent, and leaves no row', async () => {
  const account = await proxy.createAccount('bedrock-not-offered');
  const before = proxy.fakes.bedrock.requests.length;
  const calls: [method: string, path: string, status: number][] = [
    ['GET', '/async-invoke', 404],
    ['POST', '/async-invoke', 404],
    ['DELETE', '/model/x/converse-x', 404],
    ['POST', '/guardrail/g1/version/1/apply', 404],
    ['GET', '/model/eu.anthropic.claude-sonnet-4-6', 404],
    ['PUT', '/anything', 404],
    ['GET', '/model/eu.anthropic.claude-sonnet-4-6/converse', 405],
    ['DELETE', '/model/eu.anthropic.claude-sonnet-4-6/count-tokens', 405],
  ];
  for (const [method, path, status] of calls) {
    // Node's client frames no body for GET or DELETE.
    const answer = await send(method, path, account.token, method === 'POST' || method === 'PUT' ? BODY : undefined);
    expect({ method, path, status: answer.status, text: answer.status === status ? '' : answer.text }).toEqual({
      method,
      path,
      status,
      text: '',
    });
    expect(answer.headers['x-amzn-errortype']).toBeDefined();
    const message = (JSON.parse(answer.text) as { message: string }).message;
    if (status === 404) expect(message).toContain('POST /api/proxy/bedrock/model/{model}/converse');
  }
  expect(proxy.fakes.bedrock.requests.length).toBe(before);
  // A request that still makes a row proves none of those did.
  await send('POST', '/model/eu.anthropic.claude-sonnet-4-6/converse', account.token, BODY);
  const rows = await proxy.waitForRows(account.token, 1);
  expect(rows.map((row) => row.kind)).toEqual(['converse']);
});
