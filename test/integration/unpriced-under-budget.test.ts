import Anthropic from '@anthropic-ai/sdk';
import { ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bedrockClient } from '../support/bedrock';
import { eventually } from '../support/patience';
import { startProxy, type Account, type ProxyServer } from '../support/proxy-server';

/**
 * No free model under a budget: a model without a price spends nothing, so while a budget applies
 * to a request its unpriced model is refused before the upstream, with a 402 in the endpoint's own
 * shape naming the model and how to price it. Without a budget it still answers (row `priced: false`),
 * and a model priced by `PRICING_FILE` passes and spends.
 */
const FINE_TUNED = 'ft:gpt-4o:acme::abc123';
const PRICED_FINE_TUNED = 'ft:gpt-4o-mini:acme::priced1';
const PROFILE_ARN = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6';
const USAGE = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 };

let proxy: ProxyServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'unpriced-'));
  const pricingFile = join(dir, 'prices.json');
  writeFileSync(
    pricingFile,
    JSON.stringify({ providers: { 'prov-b': { [PRICED_FINE_TUNED]: { input: 2, output: 6 } } } }),
  );
  proxy = await startProxy({ env: { PRICING_FILE: pricingFile } });
});
afterAll(async () => {
  await proxy.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function budgeted(name: string, limitUsd = 0.000001): Promise<Account> {
  const account = await proxy.createAccount(name);
  await proxy.saveKey(account.token, 'prov-a');
  await proxy.saveKey(account.token, 'prov-b');
  const response = await proxy.api(`/api/tokens/${account.tokenId}/budget`, {
    method: 'PUT',
    token: account.token,
    body: { limit_usd: limitUsd, period: 'total' },
  });
  expect(response.status).toBe(200);
  return account;
}

const openai = (token: string) => new OpenAI({ baseURL: `${proxy.proxyBase}/prov-b/v1`, apiKey: token, maxRetries: 0 });
const chat = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hi' }] });

async function rejection(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe('a model without a price under a budget', () => {
  it('OpenAI fine-tuned id: 402 model_not_priced naming the model and PRICING_FILE, nothing sent upstream, a row', async () => {
    const account = await budgeted('unpriced-openai');
    const before = proxy.fakes.fakes['prov-b'].requests.length;
    const error = await rejection(openai(account.token).chat.completions.create(chat(FINE_TUNED)));
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(402);
    expect(error.code).toBe('model_not_priced');
    expect(error.type).toBe('insufficient_quota');
    expect(error.message).toContain(`"${FINE_TUNED}" has no price`);
    expect(error.message).toContain('PRICING_FILE');
    expect(error.message).toContain(`proxy token ${account.tokenId}`);
    expect(proxy.fakes.fakes['prov-b'].requests.length).toBe(before);
    const rows = await proxy.waitForRows(account.token, 1);
    expect(rows[0]).toMatchObject({ model: FINE_TUNED, status_code: 402, cost_nanos: 0, input_tokens: 0 });

    // A priced model under the same budget is sent (its first call may pass the tiny budget, as before).
    proxy.fakes.fakes['prov-b'].next({ usage: USAGE });
    const priced = await openai(account.token).chat.completions.create(chat('gpt-4o-mini'));
    expect(priced.choices.length).toBeGreaterThan(0);
  });

  it('Anthropic unknown model: 402 billing_error through the Anthropic SDK', async () => {
    const account = await budgeted('unpriced-anthropic', 50);
    const client = new Anthropic({ baseURL: proxy.proxyBase, apiKey: account.token, maxRetries: 0 });
    const error = await rejection(
      client.messages.create({
        model: 'claude-house-finetune',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      }),
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error.status).toBe(402);
    const body = (error.error as { error: { type: string; message: string } }).error;
    expect(body.type).toBe('billing_error');
    expect(body.message).toContain('"claude-house-finetune" has no price');
  });

  it('Bedrock application inference profile: 402 through the AWS SDK, nothing signed upstream', async () => {
    const account = await budgeted('unpriced-bedrock', 50);
    const before = proxy.fakes.bedrock.requests.length;
    const client = bedrockClient(proxy.proxyBase, account.token);
    const error = (await client
      .send(new ConverseCommand({ modelId: PROFILE_ARN, messages: [{ role: 'user', content: [{ text: 'x' }] }] }))
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as { $metadata?: { httpStatusCode?: number }; message: string };
    expect(error?.$metadata?.httpStatusCode).toBe(402);
    expect(error.message).toContain(`"${PROFILE_ARN}" has no price`);
    expect(proxy.fakes.bedrock.requests.length).toBe(before);
  });

  it('a requester budget refuses it too; without any budget the same model answers 200 with priced: false', async () => {
    const account = await proxy.createAccount('unpriced-requester');
    await proxy.saveKey(account.token, 'prov-b');
    proxy.fakes.fakes['prov-b'].next({ usage: USAGE });
    const free = await openai(account.token).chat.completions.create(chat(FINE_TUNED)).withResponse();
    const row = (await proxy.rowsFor(account.token, [free.response.headers.get('x-proxy-request-id')!]))[0];
    expect(row).toMatchObject({ status_code: 200, priced: false, cost_nanos: 0 });

    const set = await proxy.api('/api/budgets/requesters/intern', {
      method: 'PUT',
      token: account.token,
      body: { limit_usd: 10, period: 'month' },
    });
    expect(set.status).toBe(200);
    const error = await rejection(
      openai(account.token).chat.completions.create(chat(FINE_TUNED), { headers: { 'x-proxy-user': 'intern' } }),
    );
    expect(error.status).toBe(402);
    expect(error.message).toContain('requester "intern"');
  });

  it('a model PRICING_FILE prices passes under the budget and spends against it', async () => {
    const account = await budgeted('priced-by-file', 10);
    proxy.fakes.fakes['prov-b'].next({ usage: USAGE });
    await openai(account.token).chat.completions.create(chat(PRICED_FINE_TUNED));
    // 1,000 in at $2/M and 500 out at $6/M: $0.005.
    const spent = await eventually(async () => {
      const tokens = (await (await proxy.api('/api/tokens', { token: account.token })).json()) as {
        tokens: Array<{ token_id: string; budget: { spent_usd: number } | null }>;
      };
      const budget = tokens.tokens.find((t) => t.token_id === account.tokenId)?.budget;
      return budget && budget.spent_usd > 0 ? budget.spent_usd : undefined;
    });
    expect(spent).toBe(0.005);
  });
});

/** The request's row, once written. */
const rowOf = async (token: string, requestId: string | null) => (await proxy.rowsFor(token, [requestId!]))[0]!;

describe('money that would escape a budget', () => {
  it('a multipart audio transcription under a budget: 402 with the documented hint, nothing sent; without one it is sent', async () => {
    const account = await budgeted('unpriceable-upload', 50);
    const fake = proxy.fakes.fakes['prov-b'];
    const before = fake.requests.length;
    const upload = () =>
      openai(account.token).audio.transcriptions.create({
        file: new File([Buffer.alloc(2048, 1)], 'speech.wav', { type: 'audio/wav' }),
        model: 'whisper-1',
      });
    const error = await rejection(upload());
    expect(error.status).toBe(402);
    expect(error.code).toBe('model_not_priced');
    expect(error.message).toContain(`can't be priced before it is sent: a "multipart/form-data" body`);
    expect(error.message).toContain(`proxy token ${account.tokenId}`);
    expect(error.message).toContain('docs/budgets.md, "Requests the proxy cannot price"');
    expect(fake.requests.length).toBe(before);
    // A request without a body generates nothing to pay for: it is not refused (the fake has no such route).
    const listed = await rejection(openai(account.token).files.list());
    expect(listed.status).toBe(405);
    expect(fake.requests.at(-1)!.path).toBe('/v1/files');

    const free = await proxy.createAccount('unpriceable-free');
    await proxy.saveKey(free.token, 'prov-b');
    fake.next({ jsonBody: { text: 'hello' } });
    const sent = await openai(free.token).audio.transcriptions.create({
      file: new File([Buffer.alloc(2048, 1)], 'speech.wav', { type: 'audio/wav' }),
      model: 'whisper-1',
    });
    expect(sent.text).toBe('hello');
    expect(fake.requests.at(-1)!.path).toBe('/v1/audio/transcriptions');
  });

  it("an answer naming a model no price knows is charged at the requested model's price, and the row says so", async () => {
    const account = await budgeted('snapshot-model', 10);
    proxy.fakes.fakes['prov-b'].next({
      jsonBody: {
        id: 'chatcmpl-snapshot',
        object: 'chat.completion',
        created: 1_764_000_000,
        model: 'gpt-4o-mini-custom-snapshot-zz',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
      },
    });
    const { response } = await openai(account.token).chat.completions.create(chat('gpt-4o-mini')).withResponse();
    const row = await rowOf(account.token, response.headers.get('x-proxy-request-id'));
    // gpt-4o-mini: 1,000 in at $0.15/M and 500 out at $0.60/M.
    expect(row).toMatchObject({
      model: 'gpt-4o-mini-custom-snapshot-zz',
      priced: true,
      priced_as: 'gpt-4o-mini',
      cost_nanos: 450_000,
    });
  });

  it('audio tokens at the audio rates (gpt-audio: $32/M in, $64/M out), text tokens at the text rates', async () => {
    const account = await budgeted('audio-tokens', 10);
    proxy.fakes.fakes['prov-b'].next({
      jsonBody: {
        id: 'chatcmpl-audio',
        object: 'chat.completion',
        created: 1_764_000_000,
        model: 'gpt-audio-2025-08-28',
        choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 500,
          total_tokens: 1500,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 800, text_tokens: 200 },
          completion_tokens_details: { audio_tokens: 400, text_tokens: 100, reasoning_tokens: 0 },
        },
      },
    });
    const { response } = await openai(account.token).chat.completions.create(chat('gpt-audio')).withResponse();
    const row = await rowOf(account.token, response.headers.get('x-proxy-request-id'));
    // 200 text in at $2.50/M, 800 audio in at $32/M, 100 text out at $10/M, 400 audio out at $64/M: $0.0527.
    expect(row).toMatchObject({ input_tokens: 1000, output_tokens: 500, priced: true, cost_nanos: 52_700_000 });
  });

  it('image generation: text and image input tokens at their own rates, the image output at its rate', async () => {
    const account = await budgeted('image-tokens', 10);
    proxy.fakes.fakes['prov-b'].next({
      jsonBody: {
        created: 1_764_000_000,
        data: [{ b64_json: Buffer.from('not really a png').toString('base64') }],
        usage: {
          total_tokens: 4210,
          input_tokens: 50,
          output_tokens: 4160,
          input_tokens_details: { text_tokens: 10, image_tokens: 40 },
        },
      },
    });
    const { response } = await openai(account.token)
      .images.generate({ model: 'gpt-image-1', prompt: 'a lighthouse at dawn' })
      .withResponse();
    const row = await rowOf(account.token, response.headers.get('x-proxy-request-id'));
    // gpt-image-1: 10 text in at $5/M, 40 image in at $10/M, 4,160 image out at $40/M: $0.16685.
    expect(row).toMatchObject({
      model: 'gpt-image-1',
      kind: 'other',
      input_tokens: 50,
      output_tokens: 4160,
      priced: true,
      cost_nanos: 166_850_000,
    });
  });

  it('a custom price with more than 6 decimals is a 400 naming the field, and nothing is stored', async () => {
    const account = await proxy.createAccount('seven-decimals');
    const response = await proxy.api('/api/prices/house-model', {
      method: 'PUT',
      token: account.token,
      body: { input: 0.0000004, output: 1 },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        code: 'invalid_request',
        message: 'input can have at most 6 decimal places (USD per million tokens).',
        field: 'input',
      },
    });
    const listed = (await (await proxy.api('/api/prices', { token: account.token })).json()) as { prices: unknown[] };
    expect(listed.prices).toEqual([]);
  });
});
