/**
 * Any other path under a provider: forwarded to the provider's base with the
 * same credential handling, any method, bodies and answers passed as bytes,
 * only with a valid proxy token, rate-limited, query strings exact, and never
 * to another host.
 */
import { createHash, randomBytes } from 'node:crypto';
import { startInProcessProxy } from '../support/in-process-proxy';
import { startProxy, type ProxyServer } from '../support/proxy-server';
import { rawPost, rawRequest, upstreamCalls } from '../reliability/support/requests';
import { eventually } from '../support/patience';

let proxy: ProxyServer;
beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.stop();
});

const user = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;
const bearer = () => ({ authorization: `Bearer ${proxy.account.token}` });

async function rowOf(requester: string): Promise<Record<string, unknown>> {
  const rows = await proxy.waitForRows(proxy.account.token, 1, `requester=${encodeURIComponent(requester)}`);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

describe('other paths', () => {
  it('a binary upload goes up byte for byte with the stored key; the answer comes back as sent; a 0-token unpriced row of kind other', async () => {
    const requester = user('upload');
    const upload = randomBytes(3 * 1024 * 1024);
    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    const response = await fetch(`${proxy.proxyBase}/prov-b/v1/echo/files`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/octet-stream', 'x-proxy-user': requester },
      body: upload,
    });
    expect(response.status).toBe(200);
    const echo = (await response.json()) as Record<string, unknown>;
    expect(echo).toMatchObject({
      method: 'POST',
      url: '/v1/echo/files',
      bytes: upload.length,
      sha256: createHash('sha256').update(upload).digest('hex'),
      content_type: 'application/octet-stream',
    });
    expect(fake.requests[before]!.headers.authorization).toBe(`Bearer ${proxy.storedKeys['prov-b']}`);
    expect(await rowOf(requester)).toMatchObject({
      provider: 'prov-b',
      kind: 'other',
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      priced: false,
      status_code: 200,
    });
  });

  it('any method; the query string reaches the provider exactly as sent', async () => {
    for (const method of ['GET', 'DELETE', 'PATCH', 'PUT']) {
      const response = await fetch(
        `${proxy.proxyBase}/prov-b/v1/echo/files/file-1?limit=2&after=a%2Fb&beta=true&empty=&x=1+2`,
        { method, headers: bearer() },
      );
      expect(await response.json()).toMatchObject({
        method,
        url: '/v1/echo/files/file-1?limit=2&after=a%2Fb&beta=true&empty=&x=1+2',
      });
    }
  });

  it('an answer with a recognisable usage is counted and priced (both API styles)', async () => {
    const b = user('usage-b');
    await (
      await fetch(`${proxy.proxyBase}/prov-b/v1/echo/batch?usage=1`, {
        method: 'POST',
        headers: { ...bearer(), 'x-proxy-user': b },
        body: '{}',
      })
    ).text();
    const rowB = await rowOf(b);
    expect(rowB).toMatchObject({
      kind: 'other',
      model: 'gpt-4o-mini',
      input_tokens: 11,
      output_tokens: 7,
      priced: true,
    });
    expect(rowB.cost_usd).toBeCloseTo((11 * 0.15 + 7 * 0.6) / 1e6, 9);

    const a = user('usage-a');
    await (
      await fetch(`${proxy.proxyBase}/prov-a/echo?usage=1`, {
        method: 'POST',
        headers: { 'x-api-key': proxy.account.token, 'x-proxy-user': a },
        body: '{}',
      })
    ).text();
    const rowA = await rowOf(a);
    expect(rowA).toMatchObject({
      provider: 'prov-a',
      kind: 'other',
      model: 'claude-haiku-4-5',
      input_tokens: 11,
      output_tokens: 7,
      priced: true,
    });
    expect(rowA.cost_usd).toBeCloseTo((11 * 1 + 7 * 5) / 1e6, 9);
  });

  it('the answer is streamed, not buffered: the first part arrives while the provider still holds the rest', async () => {
    const fake = proxy.fakes.fakes['prov-c'];
    const release = fake.holdStream();
    const response = await fetch(`${proxy.proxyBase}/prov-c/echo/stream`, { headers: bearer() });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe('part-1\n');
    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      rest += Buffer.from(chunk.value).toString();
    expect(rest).toBe('part-2\n');
  });

  it('pass-through mode: the caller’s own key goes up, the row says pass-through', async () => {
    const requester = user('own');
    const own = `sk-own-${randomBytes(10).toString('hex')}`;
    proxy.secrets.add(own);
    const fake = proxy.fakes.fakes['prov-d'];
    const before = fake.requests.length;
    await (
      await fetch(`${proxy.proxyBase}/prov-d/v1/echo/x`, {
        headers: { authorization: `Bearer ${own}`, 'x-proxy-token': proxy.account.token, 'x-proxy-user': requester },
      })
    ).text();
    expect(fake.requests[before]!.headers.authorization).toBe(`Bearer ${own}`);
    expect(await rowOf(requester)).toMatchObject({ provider: 'prov-d', kind: 'other', mode: 'pass-through' });
  });

  it('without a valid proxy token: 401 in the provider’s shape, nothing forwarded', async () => {
    const before = upstreamCalls(proxy);
    const none = await fetch(`${proxy.proxyBase}/prov-b/v1/echo/files`, { method: 'POST', body: 'x' });
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
    const forged = await fetch(`${proxy.proxyBase}/prov-a/v1/files`, {
      headers: { 'x-api-key': `sk-proxy-${'x'.repeat(40)}` },
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const ownKeyOnly = await fetch(`${proxy.proxyBase}/prov-b/v1/models`, {
      headers: { authorization: 'Bearer sk-someone-elses-key' },
    });
    expect(ownKeyOnly.status).toBe(401);
    expect(upstreamCalls(proxy)).toBe(before);
  });

  const hostile = [
    '/api/proxy/prov-b/v1/../../../etc/passwd',
    '/api/proxy/prov-b/v1/%2e%2e/%2e%2e/admin',
    '/api/proxy/prov-b/v1/files%2f..%2f..%2fadmin',
    '/api/proxy/prov-b//evil.example/v1/models',
    '/api/proxy/prov-b/@evil.example/v1/models',
    '/api/proxy/prov-b/http://evil.example/v1/models',
    '/api/proxy/prov-b/v1/files%5c..%5cadmin',
    '/api/proxy/prov-a/%40evil.example/v1/models',
    '/api/proxy/v1/..%2f..%2fadmin',
  ];
  it.each(hostile)('%s → 404, never forwarded', async (path) => {
    const before = upstreamCalls(proxy);
    const answer = await rawRequest(
      proxy.url,
      rawPost(
        proxy.url,
        path,
        [
          `authorization: Bearer ${proxy.account.token}`,
          `x-api-key: ${proxy.account.token}`,
          'content-type: application/json',
        ],
        '{}',
      ),
    );
    expect(answer.status).toBe(404);
    // Either the proxy's own 404 or, for dot segments the server resolves first, a path outside the proxy.
    expect(answer.body).toMatch(/Unknown proxy path|No API route/);
    expect(upstreamCalls(proxy)).toBe(before);
  });

  it('the 404 names the endpoints, from the provider data', async () => {
    const response = await fetch(`${proxy.proxyBase}/prov-z/v1/responses`, {
      method: 'POST',
      headers: bearer(),
      body: '{}',
    });
    expect(response.status).toBe(404);
    const { error } = (await response.json()) as { error: { message: string } };
    expect(error.message).toContain('POST /api/proxy/prov-b/v1/responses');
    expect(error.message).toContain('POST /api/proxy/v1/messages/count_tokens');
    expect(error.message).toContain('GET /api/proxy/prov-e/v1/models');
  });
});

describe('the rate limit covers every kind', () => {
  it('model lists, token counts and other paths count against the per-minute limit; the next is 429 and not forwarded', async () => {
    // In-process with the proxy's clock held still: the four requests fall in the same minute, wherever the wall clock is.
    const at = Date.now();
    const limited = await startInProcessProxy({ env: { RATE_LIMIT_PER_MINUTE: '3' }, now: () => at });
    try {
      const headersA = {
        'x-api-key': limited.token,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      };
      const statuses = [
        (await fetch(`${limited.proxyBase}/v1/models`, { headers: headersA })).status,
        (
          await fetch(`${limited.proxyBase}/v1/messages/count_tokens`, {
            method: 'POST',
            headers: headersA,
            body: JSON.stringify({ model: 'claude-sonnet-4-6', messages: [] }),
          })
        ).status,
        (
          await fetch(`${limited.proxyBase}/prov-b/v1/echo/x`, {
            headers: { authorization: `Bearer ${limited.token}` },
          })
        ).status,
      ];
      expect(statuses).toEqual([200, 200, 200]);
      const before = upstreamCalls(limited);
      const over = await fetch(`${limited.proxyBase}/v1/models`, { headers: headersA });
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toBe('60');
      expect(await over.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
      expect(upstreamCalls(limited)).toBe(before);
    } finally {
      await limited.close();
    }
  });
});

describe('the same rules as chat on every kind', () => {
  it('a used-up budget refuses responses, embeddings, model lists, token counts and other paths with a 402, nothing forwarded', async () => {
    const requester = user('budget');
    const put = await proxy.api(`/api/budgets/requesters/${requester}`, {
      method: 'PUT',
      token: proxy.account.token,
      body: { limit_usd: 0.000001, period: 'day' },
    });
    expect(put.status).toBe(200);
    const headersB = { ...bearer(), 'content-type': 'application/json', 'x-proxy-user': requester };
    const spend = await fetch(`${proxy.proxyBase}/prov-b/v1/responses`, {
      method: 'POST',
      headers: headersB,
      body: JSON.stringify({ model: 'gpt-4.1', input: 'hi' }),
    });
    expect(spend.status).toBe(200);
    await spend.text();
    await rowOf(requester);
    const refused = async () => {
      const headersA = {
        'x-api-key': proxy.account.token,
        'content-type': 'application/json',
        'x-proxy-user': requester,
      };
      return Promise.all([
        fetch(`${proxy.proxyBase}/prov-b/v1/responses`, {
          method: 'POST',
          headers: headersB,
          body: JSON.stringify({ model: 'gpt-4.1', input: 'hi' }),
        }),
        fetch(`${proxy.proxyBase}/prov-b/v1/embeddings`, {
          method: 'POST',
          headers: headersB,
          body: JSON.stringify({ model: 'text-embedding-3-small', input: 'hi' }),
        }),
        fetch(`${proxy.proxyBase}/prov-b/v1/models`, { headers: headersB }),
        fetch(`${proxy.proxyBase}/prov-b/v1/echo/files`, { method: 'POST', headers: headersB, body: 'x' }),
        fetch(`${proxy.proxyBase}/v1/messages/count_tokens`, {
          method: 'POST',
          headers: headersA,
          body: JSON.stringify({ model: 'claude-sonnet-4-6', messages: [] }),
        }),
      ]);
    };
    // The spend reaches the budget once the stream consumer has folded the row. Waited for through
    // the budgets API: retrying the requests instead would spend the token's per-minute limit.
    const exhausted = await eventually(async () => {
      const listed = (await (await proxy.api('/api/budgets', { token: proxy.account.token })).json()) as {
        requesters: { requester: string; spent_usd: number; limit_usd: number }[];
      };
      const budget = listed.requesters.find((b) => b.requester === requester);
      return budget && budget.spent_usd >= budget.limit_usd ? budget : undefined;
    });
    expect(exhausted).toBeDefined();
    const before = upstreamCalls(proxy);
    const answers = await refused();
    expect(answers.map((a) => a.status)).toEqual([402, 402, 402, 402, 402]);
    expect(((await answers[0]!.json()) as { error: { code: string } }).error.code).toBe('budget_exceeded');
    expect(((await answers[4]!.json()) as { type: string }).type).toBe('error');
    expect(upstreamCalls(proxy)).toBe(before);
  });

  it('CORS preflight is answered on the new paths as on chat', async () => {
    for (const path of [
      '/prov-b/v1/responses',
      '/prov-b/v1/embeddings',
      '/v1/messages/count_tokens',
      '/prov-b/v1/files',
    ]) {
      const preflight = await fetch(`${proxy.proxyBase}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' },
      });
      expect([path, preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([
        path,
        204,
        'http://localhost:5173',
      ]);
    }
  });

  it('an endpoint path with another method is a 405 naming the allowed one', async () => {
    const wrong = await fetch(`${proxy.proxyBase}/prov-b/v1/models`, { method: 'POST', headers: bearer(), body: '{}' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
  });

  it('Groq has no embeddings: its own 404 comes back, the row says embeddings with that status', async () => {
    const requester = user('groq-emb');
    const answer = await fetch(`${proxy.proxyBase}/prov-e/v1/embeddings`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json', 'x-proxy-user': requester },
      body: JSON.stringify({ model: 'nomic-embed', input: 'hi' }),
    });
    expect(answer.status).toBe(404);
    expect(await rowOf(requester)).toMatchObject({
      provider: 'prov-e',
      kind: 'embeddings',
      status_code: 404,
      input_tokens: 0,
      cost_usd: 0,
    });
  });
});
