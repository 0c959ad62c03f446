import Anthropic from '@anthropic-ai/sdk';
import { ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { startAllFakes, type AllFakes } from '../../fakes/start-fakes';
import { startProxy, type Account, type ProxyServer } from '../../support/proxy-server';
import { TEST_MODELS } from '../../support/sdk-clients';
import { bedrockClient } from '../../support/bedrock';

/** Accounts and tokens known to both instances `servers()` returns, and a PUT to the management API. */
export function twoInstanceAccounts(servers: () => { first: ProxyServer; second: ProxyServer }) {
  async function account(name: string): Promise<Account> {
    const created = await servers().first.createAccount(name);
    servers().second.secrets.add(created.token);
    // Pass-through keys would work on both instances; stored keys are sealed with the shared master key.
    await servers().first.saveKey(created.token, 'prov-a');
    await servers().first.saveKey(created.token, 'prov-b');
    return created;
  }

  async function appToken(owner: Account, name: string): Promise<Account> {
    const response = await servers().first.api('/api/tokens', { token: owner.token, body: { name } });
    const body = (await response.json()) as { token: string; token_id: string };
    servers().first.secrets.add(body.token);
    servers().second.secrets.add(body.token);
    return { accountId: owner.accountId, token: body.token, tokenId: body.token_id };
  }

  async function put(
    owner: Account,
    path: string,
    body: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await servers().first.api(path, { method: 'PUT', token: owner.token, body });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  return { account, appToken, put };
}

/**
 * Two local servers on the same tables (a second instance, as Lambda runs many), with the fakes
 * they share; started before the file's tests and stopped after them. `prefix` names the tables.
 */
export function twoInstances(prefix: string) {
  const tablePrefix = `${prefix}${Date.now().toString(36)}-`;
  const instances = {} as { fakes: AllFakes; first: ProxyServer; second: ProxyServer };
  beforeAll(async () => {
    instances.fakes = await startAllFakes();
    instances.first = await startProxy({ fakes: instances.fakes, tablePrefix });
    instances.second = await startProxy({ fakes: instances.fakes, tablePrefix, sharesKeysWith: instances.first });
  });
  afterAll(async () => {
    await instances.first?.stop();
    await instances.second?.stop();
    await instances.fakes?.close();
  });
  return { instances, tablePrefix, ...twoInstanceAccounts(() => instances) };
}

export const openai = (server: ProxyServer, token: string, headers: Record<string, string> = {}) =>
  new OpenAI({ baseURL: `${server.proxyBase}/prov-b/v1`, apiKey: token, defaultHeaders: headers, maxRetries: 0 });
export const anthropic = (server: ProxyServer, token: string) =>
  new Anthropic({ baseURL: server.proxyBase, apiKey: token, maxRetries: 0 });

export async function chat(
  server: ProxyServer,
  token: string,
  headers: Record<string, string> = {},
  stream = false,
): Promise<string> {
  const client = openai(server, token, headers);
  if (stream) {
    const { data, response } = await client.chat.completions
      .create({
        model: TEST_MODELS['prov-b'],
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      })
      .withResponse();
    for await (const _chunk of data) void _chunk;
    return response.headers.get('x-proxy-request-id')!;
  }
  const { response } = await client.chat.completions
    .create({ model: TEST_MODELS['prov-b'], max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
  return response.headers.get('x-proxy-request-id')!;
}

export async function messages(
  server: ProxyServer,
  token: string,
  model: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const { response } = await anthropic(server, token)
    .messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, { headers })
    .withResponse();
  return response.headers.get('x-proxy-request-id')!;
}

/** A Responses API call through the OpenAI SDK: the error it raises, typed by the SDK. */
export async function responsesError(
  server: ProxyServer,
  token: string,
  model: string,
  headers: Record<string, string> = {},
): Promise<unknown> {
  return openai(server, token, headers)
    .responses.create({ model, input: 'hi' })
    .then(
      () => new Error('the call succeeded'),
      (error: unknown) => error,
    );
}

/** A Converse call through the AWS SDK as docs/bedrock.md sets it up: the exception it raises. */
export async function converseError(
  server: ProxyServer,
  token: string,
  model: string,
  headers: Record<string, string> = {},
): Promise<unknown> {
  return bedrockClient(server.proxyBase, token, headers)
    .send(new ConverseCommand({ modelId: model, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }))
    .then(
      () => new Error('the call succeeded'),
      (error: unknown) => error,
    );
}

export async function caught(
  call: () => Promise<unknown>,
): Promise<InstanceType<typeof OpenAI.APIError> | InstanceType<typeof Anthropic.APIError>> {
  try {
    await call();
  } catch (error) {
    if (error instanceof OpenAI.APIError || error instanceof Anthropic.APIError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}
