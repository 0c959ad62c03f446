/**
 * A token's own limits (docs/tags.md), as a user meets them through the official SDKs and the AWS
 * SDK: its rate and its model list, refused in each endpoint's own shape and never forwarded, and
 * every change to a token applying on a second instance on the very next request.
 */
import { AccessDeniedException } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { BEDROCK_MODEL } from '../support/bedrock';
import { upstreamCalls } from '../reliability/support/requests';
import { rowOf } from '../reliability/support/rows';
import {
  anthropic,
  caught,
  chat,
  converseError,
  messages,
  openai,
  responsesError,
  twoInstances,
} from './support/tag-clients';

jest.setTimeout(300_000);

const { instances, account, appToken, put } = twoInstances('tl');

describe('per-token limits', () => {
  it('a token limited to 5 a minute gets 429 on the sixth request, on either instance', async () => {
    const owner = await account('limits-rate');
    const app = await appToken(owner, 'slow app');
    expect(await put(owner, `/api/tokens/${app.tokenId}/limits`, { requests_per_minute: 5 })).toEqual({
      status: 200,
      body: { token_id: app.tokenId, requests_per_minute: 5, models: null },
    });
    // A sliding minute: the sixth request within 60 seconds is refused, wherever the clock minute ends.
    for (let i = 0; i < 5; i++) await chat(i % 2 ? instances.second : instances.first, app.token);
    const before = upstreamCalls(instances.first);
    const refused = await caught(() => chat(instances.second, app.token));
    expect(refused.status).toBe(429);
    expect(refused.headers?.get('x-proxy-ratelimit-limit')).toBe('5');
    expect(refused.headers?.get('retry-after')).toBe('60');
    expect(upstreamCalls(instances.first)).toBe(before);
    // The owner's own token keeps the default.
    await chat(instances.first, owner.token);
    // Raised on one instance, the other admits the very next request.
    expect((await put(owner, `/api/tokens/${app.tokenId}/limits`, { requests_per_minute: 10 })).status).toBe(200);
    await chat(instances.second, app.token);
  });

  it('a token limited to claude-haiku- gets 403 for claude-opus-4-6 (and in the Responses and Bedrock shapes for models off its list), written as a row and never forwarded; model lists and token counting stay allowed', async () => {
    const owner = await account('limits-models');
    const app = await appToken(owner, 'haiku app');
    await chat(instances.second, app.token); // the second instance knows the token before the change
    expect(
      await put(owner, `/api/tokens/${app.tokenId}/limits`, { models: ['claude-haiku-', 'gpt-4.1-mini'] }),
    ).toEqual({
      status: 200,
      body: { token_id: app.tokenId, requests_per_minute: null, models: ['claude-haiku-', 'gpt-4.1-mini'] },
    });
    const before = upstreamCalls(instances.first);
    const refused = await caught(() => messages(instances.second, app.token, 'claude-opus-4-6'));
    expect(refused.status).toBe(403);
    expect((refused.error as { error: { type: string; message: string } }).error).toEqual({
      type: 'permission_error',
      message:
        'This proxy token may not use model "claude-opus-4-6"; it is limited to models starting with "claude-haiku-", "gpt-4.1-mini".',
    });
    const chatRefused = await caught(() => chat(instances.second, app.token));
    expect(chatRefused.status).toBe(403);
    expect((chatRefused as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_allowed');
    expect((chatRefused as InstanceType<typeof OpenAI.APIError>).param).toBe('model');
    const responsesRefused = await responsesError(instances.second, app.token, 'gpt-4.1-2025-04-14');
    expect(responsesRefused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(responsesRefused).toMatchObject({ status: 403, code: 'model_not_allowed', param: 'model' });
    expect((responsesRefused as Error).message).toContain('may not use model "gpt-4.1-2025-04-14"');
    const bedrockRefused = await converseError(instances.second, app.token, BEDROCK_MODEL);
    expect(bedrockRefused).toBeInstanceOf(AccessDeniedException);
    expect(bedrockRefused).toMatchObject({ $metadata: { httpStatusCode: 403 } });
    expect((bedrockRefused as Error).message).toContain(`may not use model "${BEDROCK_MODEL}"`);
    // A request that names no model could still reach a provider's default one: refused under a list.
    expect((await caught(() => openai(instances.second, app.token).files.list())).status).toBe(403);
    expect(upstreamCalls(instances.first)).toBe(before);
    const row = await rowOf(instances.first, owner.token, refused.headers!.get('x-proxy-request-id')!);
    expect(row).toMatchObject({ status_code: 403, model: 'claude-opus-4-6', input_tokens: 0, cost_usd: 0 });

    await messages(instances.second, app.token, 'claude-haiku-4-5-20251001');
    await anthropic(instances.second, app.token).models.list();
    await anthropic(instances.second, app.token).messages.countTokens({
      model: 'claude-opus-4-6',
      messages: [{ role: 'user', content: 'hi' }],
    });
    await openai(instances.second, app.token).models.list();
    expect(upstreamCalls(instances.first)).toBe(before + 4);

    // Lifted on one instance, the other forwards the very next request.
    expect((await put(owner, `/api/tokens/${app.tokenId}/limits`, {})).status).toBe(200);
    await messages(instances.second, app.token, 'claude-opus-4-6');
    const listed = (await (await instances.first.api('/api/tokens', { token: owner.token })).json()) as {
      tokens: Array<{ token_id: string; limits: unknown }>;
    };
    expect(listed.tokens.find((t) => t.token_id === app.tokenId)?.limits).toEqual({
      requests_per_minute: null,
      models: null,
    });
  });
});
