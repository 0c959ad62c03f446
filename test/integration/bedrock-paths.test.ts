/**
 * Bedrock paths through raw HTTP, as sent (no client normalises them): a model segment that could move
 * the upstream path is refused before anything is forwarded, a URL-encoded ARN reaches Bedrock still
 * encoded and is the row's model, and other Bedrock Runtime operations (CountTokens, asynchronous
 * invocations) are forwarded as kind `other`, signed, and each leaves its row (docs/bedrock.md, "Endpoints").
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

it('other Bedrock Runtime paths are forwarded as kind other, signed, the answer unchanged, one row each', async () => {
  const account = await proxy.createAccount('bedrock-other');
  const calls: [method: string, path: string, body?: string][] = [
    [
      'POST',
      '/model/eu.anthropic.claude-sonnet-4-6/count-tokens',
      JSON.stringify({ input: { converse: JSON.parse(BODY) as unknown } }),
    ],
    [
      'POST',
      '/async-invoke',
      JSON.stringify({
        modelId: 'amazon.nova-reel-v1:1',
        modelInput: {},
        outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://bucket/out' } },
      }),
    ],
    ['GET', '/async-invoke'],
  ];
  for (const [method, path, body] of calls) {
    const answer = await send(method, path, account.token, body);
    const upstream = proxy.fakes.bedrock.requests.at(-1)!;
    expect({ status: answer.status, text: answer.text }).toEqual({
      status: 200,
      text: upstream.response.body.toString('utf8'),
    });
    expect(upstream).toMatchObject({ method, rawPath: path, auth: 'sigv4', signatureProblem: undefined });
    expect(upstream.body.toString('utf8')).toBe(body ?? '');
  }
  const rows = await proxy.waitForRows(account.token, calls.length);
  expect(
    rows.map((row) => ({
      provider: row.provider,
      kind: row.kind,
      status_code: row.status_code,
      cached: row.cached,
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
      priced: row.priced,
    })),
  ).toEqual(
    calls.map(() => ({
      provider: 'bedrock',
      kind: 'other',
      status_code: 200,
      cached: false,
      input_tokens: 0,
      output_tokens: 0,
      priced: false,
    })),
  );
});
