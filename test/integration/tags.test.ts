/**
 * Cost attribution and per-token controls (docs/tags.md), as a user meets them through the
 * official SDKs: tags on rows, the log filters, the CSV column and `by_tag` equal to the rows (cache
 * hits' savings included); refusals in each endpoint's own shape (chat, messages, Responses, Bedrock); a
 * token's own tags win; a tag budget refuses with 402 and no upstream call. A token's rate and
 * model list: token-limits.test.ts.
 */
import { ValidationException } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { csvRows } from '../support/csv';
import type { ProxyServer } from '../support/proxy-server';
import { TEST_MODELS } from '../support/sdk-clients';
import { BEDROCK_MODEL } from '../support/bedrock';
import { upstreamCalls } from '../reliability/support/requests';
import { allRows, rowOf, type Row } from '../reliability/support/rows';
import { eventually } from '../support/patience';
import { sdkDocumentClient } from '../reliability/support/dynamo';
import { caught, chat, converseError, messages, openai, responsesError, twoInstances } from './support/tag-clients';

jest.setTimeout(300_000);

const { instances, tablePrefix, account, appToken, put } = twoInstances('tg');

interface TagTotals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_nanos: number;
  saved_nanos: number;
}

/** What `by_tag` must say, summed from the rows themselves. */
function byTagFromRows(rows: Row[]): Record<string, Record<string, TagTotals>> {
  const expected: Record<string, Record<string, TagTotals>> = {};
  for (const row of rows) {
    for (const [key, value] of Object.entries((row.tags as Record<string, string> | undefined) ?? {})) {
      expected[key] ??= {};
      const slot = (expected[key][value] ??= {
        requests: 0,
        input_tokens: 0,
        output_tokens: 0,
        cost_nanos: 0,
        saved_nanos: 0,
      });
      slot.requests += 1;
      slot.input_tokens += row.input_tokens;
      slot.output_tokens += row.output_tokens;
      slot.cost_nanos += row.cost_nanos as number;
      slot.saved_nanos += row.saved_nanos as number;
    }
  }
  return expected;
}

describe('tags', () => {
  it("are kept on every row as a map, filter the logs and the CSV, and by_tag equals the rows, a cache hit's savings included", async () => {
    const owner = await account('tags-rows');
    const ids = [
      await chat(instances.first, owner.token, { 'x-proxy-tags': 'team=search, feature=autocomplete' }),
      await chat(instances.first, owner.token, { 'x-proxy-tags': 'team=search,feature=ranking' }, true),
      await messages(instances.second, owner.token, TEST_MODELS['prov-a'], { 'x-proxy-tags': 'team=ads' }),
      await chat(instances.second, owner.token),
    ];
    const rows = await Promise.all(ids.map((id) => rowOf(instances.first, owner.token, id)));
    expect(rows.map((row) => row.tags)).toEqual([
      { team: 'search', feature: 'autocomplete' },
      { team: 'search', feature: 'ranking' },
      { team: 'ads' },
      undefined,
    ]);

    // A cached question asked twice: the second answer is a hit, and its row saves what the first cost.
    const cachedHeaders = { 'x-proxy-tags': 'team=ads, feature=cached', 'x-proxy-cache': 'true' };
    const cachedCall = async (server: ProxyServer) => {
      const { response } = await openai(server, owner.token, cachedHeaders)
        .chat.completions.create({
          model: TEST_MODELS['prov-b'],
          max_tokens: 16,
          messages: [{ role: 'user', content: 'the cached question' }],
        })
        .withResponse();
      return { id: response.headers.get('x-proxy-request-id')!, cache: response.headers.get('x-proxy-cache') };
    };
    const miss = await cachedCall(instances.first);
    const hit = await cachedCall(instances.second);
    expect([miss.cache, hit.cache]).toEqual(['MISS', 'HIT']);
    const missRow = await rowOf(instances.first, owner.token, miss.id);
    const hitRow = await rowOf(instances.first, owner.token, hit.id);
    expect(hitRow).toMatchObject({
      cached: true,
      cost_nanos: 0,
      saved_nanos: missRow.cost_nanos,
      tags: { team: 'ads', feature: 'cached' },
    });
    expect(hitRow.saved_nanos).toBeGreaterThan(0);

    const search = await allRows(instances.first, owner.token, 'tag=team=search');
    expect(search.map((row) => row.id).sort()).toEqual([ids[0], ids[1]].sort());
    const both = await allRows(instances.first, owner.token, 'tag=team=search&tag=feature=ranking');
    expect(both.map((row) => row.id)).toEqual([ids[1]]);

    const csv = csvRows(
      await (await instances.first.api('/api/logs.csv?tag=team=search', { token: owner.token })).text(),
    );
    const tagsColumn = csv[0].indexOf('tags');
    expect(tagsColumn).toBeGreaterThan(0);
    expect(
      csv
        .slice(1)
        .map((line) => line[tagsColumn])
        .sort(),
    ).toEqual(['feature=autocomplete,team=search', 'feature=ranking,team=search']);

    const all = await allRows(instances.first, owner.token);
    const expected = byTagFromRows(all);
    const stats = await eventually(async () => {
      const body = (await (await instances.first.api('/api/stats', { token: owner.token })).json()) as {
        by_tag: Record<string, Record<string, TagTotals>>;
      };
      return body.by_tag.team?.ads?.requests === 3 &&
        body.by_tag.feature?.ranking &&
        body.by_tag.feature?.cached?.requests === 2
        ? body
        : undefined;
    });
    const seen: typeof expected = {};
    for (const [key, values] of Object.entries(stats!.by_tag)) {
      seen[key] = {};
      for (const [value, totals] of Object.entries(values)) {
        seen[key][value] = {
          requests: totals.requests,
          input_tokens: totals.input_tokens,
          output_tokens: totals.output_tokens,
          cost_nanos: totals.cost_nanos,
          saved_nanos: totals.saved_nanos,
        };
      }
    }
    expect(seen).toEqual(expected);
    expect(expected.team.search.requests).toBe(2);
    expect(expected.feature.cached.saved_nanos).toBe(hitRow.saved_nanos);
    expect(expected.team.ads.saved_nanos).toBe(hitRow.saved_nanos);
  });

  it("a malformed header is a 400 in the endpoint's own shape (chat, messages, Responses, Bedrock) naming the problem, and nothing is forwarded", async () => {
    const owner = await account('tags-bad');
    const before = upstreamCalls(instances.first);
    const chatError = await caught(() => chat(instances.first, owner.token, { 'x-proxy-tags': 'Team=search' }));
    expect(chatError.status).toBe(400);
    expect(chatError.message).toContain('tag key "Team" must be 1 to 40 lowercase letters');
    expect((chatError as InstanceType<typeof OpenAI.APIError>).param).toBe('x-proxy-tags');
    const tooMany = Array.from({ length: 11 }, (_, i) => `k${i}=v`).join(',');
    const messagesError = await caught(() =>
      messages(instances.first, owner.token, TEST_MODELS['prov-a'], { 'x-proxy-tags': tooMany }),
    );
    expect(messagesError.status).toBe(400);
    expect((messagesError.error as { error: { type: string; message: string } }).error).toEqual({
      type: 'invalid_request_error',
      message: 'x-proxy-tags: at most 10 tags, got 11.',
    });
    // The Responses API: the OpenAI SDK's typed error; Bedrock: the AWS SDK's ValidationException.
    const responsesRefusal = await responsesError(instances.first, owner.token, 'gpt-4.1-2025-04-14', {
      'x-proxy-tags': 'Team=search',
    });
    expect(responsesRefusal).toBeInstanceOf(OpenAI.BadRequestError);
    expect(responsesRefusal).toMatchObject({ status: 400, param: 'x-proxy-tags' });
    expect((responsesRefusal as Error).message).toContain('tag key "Team" must be 1 to 40 lowercase letters');
    const bedrockRefusal = await converseError(instances.first, owner.token, BEDROCK_MODEL, {
      'x-proxy-tags': 'Team=search',
    });
    expect(bedrockRefusal).toBeInstanceOf(ValidationException);
    expect(bedrockRefusal).toMatchObject({ $metadata: { httpStatusCode: 400 } });
    expect((bedrockRefusal as Error).message).toContain('tag key "Team" must be 1 to 40 lowercase letters');
    for (const header of ['team', 'team=', 'team=a,team=b', `team=${'v'.repeat(101)}`, 'team=(other)']) {
      expect((await caught(() => chat(instances.first, owner.token, { 'x-proxy-tags': header }))).status).toBe(400);
    }
    expect(upstreamCalls(instances.first)).toBe(before);
  });
});

describe("a token's own tags", () => {
  it('are shown by GET /api/tokens, added to every row, and a request cannot override them', async () => {
    const owner = await account('tags-token');
    const app = await appToken(owner, 'search app');
    expect(await put(owner, `/api/tokens/${app.tokenId}`, { tags: { team: 'search' } })).toEqual({
      status: 200,
      body: { token_id: app.tokenId, tags: { team: 'search' } },
    });
    const listed = (await (await instances.first.api('/api/tokens', { token: owner.token })).json()) as {
      tokens: Array<{ token_id: string; tags: Record<string, string> }>;
    };
    expect(listed.tokens.find((t) => t.token_id === app.tokenId)?.tags).toEqual({ team: 'search' });

    // The second instance has never seen this token: the gate's one call brings its tags.
    const id = await chat(instances.second, app.token, { 'x-proxy-tags': 'feature=autocomplete' });
    expect((await rowOf(instances.first, owner.token, id)).tags).toEqual({ team: 'search', feature: 'autocomplete' });

    const before = upstreamCalls(instances.first);
    const refused = await caught(() => chat(instances.second, app.token, { 'x-proxy-tags': 'team=ads' }));
    expect(refused.status).toBe(400);
    expect(refused.message).toContain('tag "team" is set by this proxy token');
    expect(upstreamCalls(instances.first)).toBe(before);

    // A change applies on the other instance at the very next request.
    expect((await put(owner, `/api/tokens/${app.tokenId}`, { tags: { team: 'ads' } })).status).toBe(200);
    expect((await rowOf(instances.first, owner.token, await chat(instances.second, app.token))).tags).toEqual({
      team: 'ads',
    });
    expect((await put(owner, `/api/tokens/${app.tokenId}`, { tags: {} })).status).toBe(200);
    expect(
      (
        await rowOf(
          instances.first,
          owner.token,
          await chat(instances.second, app.token, { 'x-proxy-tags': 'team=free' }),
        )
      ).tags,
    ).toEqual({ team: 'free' });
  });
});

describe('tag budgets', () => {
  it('refuse with 402 once the tag value has spent its limit, with no upstream call, on either instance', async () => {
    const owner = await account('tags-budget');
    // Spend is counted per tag value from its first request: a budget set later starts from it.
    await rowOf(instances.first, owner.token, await chat(instances.first, owner.token, { 'x-proxy-tags': 'team=ads' }));
    const late = await eventually(async () => {
      const answer = await put(owner, '/api/budgets/tags/team/ads', { limit_usd: 100, period: 'month' });
      return (answer.body.spent_usd as number) > 0 ? answer : undefined;
    });
    expect(late?.status).toBe(200);
    expect(
      (await instances.first.api('/api/budgets/tags/team/ads', { method: 'DELETE', token: owner.token })).status,
    ).toBe(204);
    expect(
      (await instances.first.api('/api/budgets/tags/team/ads', { method: 'DELETE', token: owner.token })).status,
    ).toBe(404);

    const set = await put(owner, '/api/budgets/tags/team/search', { limit_usd: 0.000001, period: 'day' });
    expect(set).toMatchObject({ status: 200, body: { limit_usd: 0.000001, period: 'day', spent_usd: 0 } });
    const spent = await chat(instances.first, owner.token, { 'x-proxy-tags': 'team=search' });
    await rowOf(instances.first, owner.token, spent);
    await eventually(async () => {
      const body = (await (await instances.first.api('/api/budgets', { token: owner.token })).json()) as {
        tags: Array<{ key: string; value: string; spent_usd: number }>;
      };
      return body.tags.find((b) => b.key === 'team' && b.value === 'search' && b.spent_usd > 0);
    });

    const before = upstreamCalls(instances.first);
    const chatRefusal = await caught(() => chat(instances.second, owner.token, { 'x-proxy-tags': 'team=search' }));
    expect(chatRefusal.status).toBe(402);
    expect((chatRefusal as InstanceType<typeof OpenAI.APIError>).code).toBe('budget_exceeded');
    expect(chatRefusal.message).toContain('Budget exceeded: tag team=search has spent');
    const messagesRefusal = await caught(() =>
      messages(instances.first, owner.token, TEST_MODELS['prov-a'], { 'x-proxy-tags': 'team=search' }),
    );
    expect(messagesRefusal.status).toBe(402);
    expect((messagesRefusal.error as { error: { type: string } }).error.type).toBe('billing_error');
    expect(upstreamCalls(instances.first)).toBe(before);

    // Another value of the key is not limited; a token whose own tag is the budgeted one is.
    await chat(instances.first, owner.token, { 'x-proxy-tags': 'team=ads' });
    const app = await appToken(owner, 'search app');
    await put(owner, `/api/tokens/${app.tokenId}`, { tags: { team: 'search' } });
    expect((await caught(() => chat(instances.second, app.token))).status).toBe(402);
    expect(upstreamCalls(instances.first)).toBe(before + 1);

    // A refusal's row is written after its answer: wait for the third.
    const refusedRows = await eventually(async () => {
      const rows = await allRows(instances.first, owner.token, 'tag=team=search&status=error');
      return rows.length >= 3 ? rows : undefined;
    });
    expect(refusedRows?.map((row) => row.status_code)).toEqual([402, 402, 402]);

    // The tag value's budget and spend sit in a partition of their own, not the account's.
    const item = (
      await sdkDocumentClient().send(
        new GetCommand({
          TableName: `${tablePrefix}accounts`,
          Key: { pk: `ACCOUNT#${owner.accountId}#G#team=search`, sk: 'BUDGET' },
        }),
      )
    ).Item;
    expect(item).toMatchObject({
      subject_kind: 'tag',
      tag_key: 'team',
      tag_value: 'search',
      limit_nanos: 1000,
      period: 'day',
    });
    expect(item!.spent_total_nanos).toBeGreaterThan(0);
  });
});
