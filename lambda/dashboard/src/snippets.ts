import { awsCurl, awsPython, awsTypeScript } from './aws-snippets';
import type { ProviderInfo } from './providers';

/** Stands in for a real token: the signed-in token is never copied into code a user might commit. */
export const TOKEN_PLACEHOLDER = 'sk-proxy-…';

export function proxyBase(): string {
  return `${location.origin}/api/proxy`;
}

/** Example tags (docs/tags.md): a client-wide default, and a request's own, which replaces the default. */
export const EXAMPLE_DEFAULT_TAGS = 'team=search';
export const EXAMPLE_REQUEST_TAGS = 'team=search, feature=autocomplete';

const OPTIONAL_HEADERS = [
  `    // "x-proxy-user": "alice",  // optional: who asked; shown as the requester`,
  `    // "x-proxy-cache": "true",  // optional: answer repeated identical requests from the cache`,
  `    // "x-proxy-tags": "${EXAMPLE_DEFAULT_TAGS}",  // optional: tags on every request, for spend by tag`,
];

const REQUEST_TAGS_TS = `  { headers: { "x-proxy-tags": "${EXAMPLE_REQUEST_TAGS}" } }, // optional: this request's tags`;

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
      : [
          '  defaultHeaders: {',
          `    "x-proxy-token": "${TOKEN_PLACEHOLDER}", // a proxy token from the Tokens page`,
          ...OPTIONAL_HEADERS,
          '  },',
        ];
  const call =
    provider.sdk === 'anthropic'
      ? [
          'const message = await client.messages.create(',
          `  { model: "${provider.exampleModel}", max_tokens: 256, messages: [{ role: "user", content: "Hello" }] },`,
          REQUEST_TAGS_TS,
          ');',
        ]
      : [
          'const completion = await client.chat.completions.create(',
          `  { model: "${provider.exampleModel}", messages: [{ role: "user", content: "Hello" }] },`,
          REQUEST_TAGS_TS,
          ');',
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

export type SnippetLanguage = 'typescript' | 'python' | 'curl';
export type SnippetMode = 'stored' | 'pass-through';

export const SNIPPET_LANGUAGES: readonly { id: SnippetLanguage; label: string }[] = [
  { id: 'typescript', label: 'TypeScript' },
  { id: 'python', label: 'Python' },
  { id: 'curl', label: 'curl' },
];

function pythonCode(provider: ProviderInfo, base: string, mode: SnippetMode): string {
  const anthropic = provider.sdk === 'anthropic';
  const sdkClass = anthropic ? 'Anthropic' : 'OpenAI';
  const apiKey =
    mode === 'stored'
      ? `    api_key="${TOKEN_PLACEHOLDER}",  # a proxy token from the Tokens page`
      : `    api_key="<your ${provider.name} key>",  # sent on to ${provider.name} as is, never stored`;
  const headers = [
    '    default_headers={',
    ...(mode === 'pass-through'
      ? [`        "x-proxy-token": "${TOKEN_PLACEHOLDER}",  # a proxy token from the Tokens page`]
      : []),
    '        # "x-proxy-user": "alice",  # optional: who asked; shown as the requester',
    '        # "x-proxy-cache": "true",  # optional: answer repeated identical requests from the cache',
    `        # "x-proxy-tags": "${EXAMPLE_DEFAULT_TAGS}",  # optional: tags on every request, for spend by tag`,
    '    },',
  ];
  const requestTags = `    extra_headers={"x-proxy-tags": "${EXAMPLE_REQUEST_TAGS}"},  # optional: this request's tags, in place of the default`;
  const call = anthropic
    ? [
        'message = client.messages.create(',
        `    model="${provider.exampleModel}",`,
        '    max_tokens=256,',
        '    messages=[{"role": "user", "content": "Hello"}],',
        requestTags,
        ')',
        'print(message.content[0].text)',
      ]
    : [
        'completion = client.chat.completions.create(',
        `    model="${provider.exampleModel}",`,
        '    messages=[{"role": "user", "content": "Hello"}],',
        requestTags,
        ')',
        'print(completion.choices[0].message.content)',
      ];
  return [
    `from ${anthropic ? 'anthropic' : 'openai'} import ${sdkClass}`,
    '',
    `client = ${sdkClass}(`,
    `    base_url="${base}${provider.basePath}",`,
    apiKey,
    ...headers,
    ')',
    '',
    ...call,
  ].join('\n');
}

function curlCode(provider: ProviderInfo, base: string, mode: SnippetMode): string {
  const anthropic = provider.sdk === 'anthropic';
  const credential = mode === 'stored' ? TOKEN_PLACEHOLDER : `<your ${provider.name} key>`;
  const url = anthropic ? `${base}${provider.basePath}/v1/messages` : `${base}${provider.basePath}/chat/completions`;
  const auth = anthropic
    ? [`  -H "x-api-key: ${credential}"`, '  -H "anthropic-version: 2023-06-01"']
    : [`  -H "Authorization: Bearer ${credential}"`];
  const body = anthropic
    ? `{"model": "${provider.exampleModel}", "max_tokens": 256, "messages": [{"role": "user", "content": "Hello"}]}`
    : `{"model": "${provider.exampleModel}", "messages": [{"role": "user", "content": "Hello"}]}`;
  return [
    `curl ${url} \\`,
    ...auth.map((line) => `${line} \\`),
    ...(mode === 'pass-through' ? [`  -H "x-proxy-token: ${TOKEN_PLACEHOLDER}" \\`] : []),
    `  -H "x-proxy-tags: ${EXAMPLE_REQUEST_TAGS}" \\`,
    '  -H "content-type: application/json" \\',
    `  -d '${body}'`,
  ].join('\n');
}

/** The snippet for a provider, a language and a key mode; the base address defaults to this dashboard's origin. */
export function snippet(
  provider: ProviderInfo,
  language: SnippetLanguage,
  mode: SnippetMode,
  base = proxyBase(),
): string {
  if (provider.sdk === 'aws') {
    if (language === 'python') return awsPython(provider, base, mode, TOKEN_PLACEHOLDER, EXAMPLE_REQUEST_TAGS);
    return language === 'curl'
      ? awsCurl(provider, base, mode, TOKEN_PLACEHOLDER, EXAMPLE_REQUEST_TAGS)
      : awsTypeScript(provider, base, mode, TOKEN_PLACEHOLDER, EXAMPLE_REQUEST_TAGS);
  }
  if (language === 'python') return pythonCode(provider, base, mode);
  if (language === 'curl') return curlCode(provider, base, mode);
  return clientCode(provider, base, mode);
}
