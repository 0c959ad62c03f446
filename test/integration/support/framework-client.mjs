// Runs one call through a framework client, as an application would, and prints
// {"text", "usage"} as JSON. A separate process because these packages are ES
// modules only, which the test runner's CommonJS mode cannot load. Each scenario
// imports only its own framework: loading all five took most of a run's CPU.

// `ownKey`: a provider key of the caller's own (pass-through mode), the proxy token then going in x-proxy-token.
const [scenario, proxyBase, token, requester, ownKey] = process.argv.slice(2);
const headers = { 'x-proxy-user': requester };

async function vercel(model, stream, prompt) {
  const { generateText, streamText } = await import('ai');
  if (!stream) {
    const result = await generateText({ model, prompt });
    return { text: result.text, usage: result.usage };
  }
  const result = streamText({ model, prompt });
  let text = '';
  for await (const piece of result.textStream) text += piece;
  return { text, usage: await result.usage };
}

async function langchain(chat, stream, prompt) {
  if (!stream) return { text: (await chat.invoke(prompt)).text };
  let text = '';
  for await (const chunk of await chat.stream(prompt)) text += chunk.text;
  return { text };
}

const scenarios = {
  'ai-openai': async (stream) => {
    const { createOpenAI } = await import('@ai-sdk/openai');
    return vercel(
      createOpenAI({ baseURL: `${proxyBase}/prov-b/v1`, apiKey: token, headers })('gpt-4.1-2025-04-14'),
      stream,
      'Tell me a story.',
    );
  },
  'ai-bedrock': async (stream) => {
    const { createAmazonBedrock } = await import('@ai-sdk/amazon-bedrock');
    return vercel(
      createAmazonBedrock({
        baseURL: `${proxyBase}/bedrock`,
        apiKey: ownKey ?? token,
        region: 'us-east-1',
        headers: ownKey ? { ...headers, 'x-proxy-token': token } : headers,
      })('us.anthropic.claude-sonnet-4-6'),
      stream,
      'Hello',
    );
  },
  'ai-anthropic': async (stream) => {
    const { createAnthropic } = await import('@ai-sdk/anthropic');
    return vercel(
      createAnthropic({ baseURL: `${proxyBase}/v1`, apiKey: token, headers })('claude-sonnet-4-6'),
      stream,
      'Say hello.',
    );
  },
  'lc-openai': async (stream) => {
    const { ChatOpenAI } = await import('@langchain/openai');
    return langchain(
      new ChatOpenAI({
        model: 'gpt-4o-mini',
        apiKey: token,
        maxRetries: 0,
        configuration: { baseURL: `${proxyBase}/prov-b/v1`, defaultHeaders: headers },
      }),
      stream,
      'Say hello.',
    );
  },
  'lc-openai-responses': async (stream) => {
    const { ChatOpenAI } = await import('@langchain/openai');
    return langchain(
      new ChatOpenAI({
        model: 'gpt-4.1-2025-04-14',
        apiKey: token,
        maxRetries: 0,
        useResponsesApi: true,
        configuration: { baseURL: `${proxyBase}/prov-b/v1`, defaultHeaders: headers },
      }),
      stream,
      'Tell me a story.',
    );
  },
  'lc-anthropic': async (stream) => {
    const { ChatAnthropic } = await import('@langchain/anthropic');
    return langchain(
      new ChatAnthropic({
        model: 'claude-sonnet-4-6',
        apiKey: token,
        anthropicApiUrl: proxyBase,
        maxRetries: 0,
        clientOptions: { defaultHeaders: headers },
      }),
      stream,
      'Say hello.',
    );
  },
};

const [name, mode] = scenario.split(':');
scenarios[name](mode === 'stream')
  .then((result) => process.stdout.write(JSON.stringify(result)))
  .catch((error) => {
    process.stderr.write(String(error?.stack ?? error));
    process.exit(1);
  });
