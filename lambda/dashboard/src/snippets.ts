import type { ProviderInfo } from './providers';

/** Stands in for a real token: the signed-in token is never copied into code a user might commit. */
export const TOKEN_PLACEHOLDER = 'sk-proxy-…';

export function proxyBase(): string {
  return `${location.origin}/api/proxy`;
}

const OPTIONAL_HEADERS = [
  `    // "x-proxy-user": "alice",  // optional: who asked; shown as the requester`,
  `    // "x-proxy-cache": "true",  // optional: answer repeated identical requests from the cache`,
];

function clientCode(provider: ProviderInfo, base: string, mode: 'stored' | 'pass-through'): string {
  const sdkClass = provider.sdk === 'anthropic' ? 'Anthropic' : 'OpenAI';
  const sdkPackage = provider.sdk === 'anthropic' ? '@anthropic-ai/sdk' : 'openai';
  const apiKey =
    mode === 'stored'
      ? `  apiKey: "${TOKEN_PLACEHOLDER}", // a proxy token from the Tokens page`
      : `  apiKey: "<your ${provider.name} key>", // sent on to ${provider.name} as is, never stored`;
  const headers =
    mode === 'stored'
      ? ['  defaultHeaders: {', ...OPTIONAL_HEADERS, '  },']
      : ['  defaultHeaders: {', `    "x-proxy-token": "${TOKEN_PLACEHOLDER}", // a proxy token from the Tokens page`, ...OPTIONAL_HEADERS, '  },'];
  const call =
    provider.sdk === 'anthropic'
      ? [
          'const message = await client.messages.create({',
          `  model: "${provider.exampleModel}",`,
          '  max_tokens: 256,',
          '  messages: [{ role: "user", content: "Hello" }],',
          '});',
        ]
      : [
          'const completion = await client.chat.completions.create({',
          `  model: "${provider.exampleModel}",`,
          '  messages: [{ role: "user", content: "Hello" }],',
          '});',
        ];
  return [
    `import ${sdkClass} from "${sdkPackage}";`,
    '',
    `const client = new ${sdkClass}({`,
    `  baseURL: "${base}${provider.basePath}",`,
    apiKey,
    ...headers,
    '});',
    '',
    ...call,
  ].join('\n');
}

export function storedSnippet(provider: ProviderInfo, base = proxyBase()): string {
  return clientCode(provider, base, 'stored');
}

export function passThroughSnippet(provider: ProviderInfo, base = proxyBase()): string {
  return clientCode(provider, base, 'pass-through');
}
