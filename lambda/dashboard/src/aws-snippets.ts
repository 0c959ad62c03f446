import type { ProviderInfo } from './providers';

type Mode = 'stored' | 'pass-through';

/*
 * Snippets for a provider reached through AWS (Bedrock): its own SDKs, pointed at the proxy with
 * `endpoint` / `endpoint_url`, and the proxy token (or the caller's Bedrock API key) as the Bearer
 * token. Node's client speaks HTTP/2 by default; the snippet sets HTTP/1.1, which every proxy
 * deployment accepts (docs/bedrock.md).
 */

export function awsTypeScript(provider: ProviderInfo, base: string, mode: Mode, token: string, tags: string): string {
  const key =
    mode === 'stored'
      ? `"${token}" }, // a proxy token from the Tokens page`
      : `"<your ${provider.name} key>" }, // sent on to ${provider.name} as is, never stored`;
  return [
    'import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";',
    '// Both installed with the client above.',
    'import { NodeHttpHandler } from "@smithy/node-http-handler";',
    'import { HttpRequest } from "@smithy/protocol-http";',
    '',
    'const client = new BedrockRuntimeClient({',
    '  region: "eu-west-1",',
    `  endpoint: "${base}${provider.basePath}",`,
    `  token: { token: ${key}`,
    '  authSchemePreference: ["httpBearerAuth"],',
    '  requestHandler: new NodeHttpHandler(),',
    '});',
    '// The client has no default headers: a middleware adds them to every request.',
    'client.middlewareStack.add((next) => (args) => {',
    '  if (HttpRequest.isInstance(args.request)) {',
    ...(mode === 'pass-through' ? [`    args.request.headers["x-proxy-token"] = "${token}";`] : []),
    `    args.request.headers["x-proxy-tags"] = "${tags}"; // optional: tags, for spend by tag`,
    '  }',
    '  return next(args);',
    '}, { step: "build" });',
    '',
    'const answer = await client.send(new ConverseCommand({',
    `  modelId: "${provider.exampleModel}",`,
    '  messages: [{ role: "user", content: [{ text: "Hello" }] }],',
    '}));',
    'console.log(answer.output?.message?.content?.[0]?.text);',
  ].join('\n');
}

export function awsPython(provider: ProviderInfo, base: string, mode: Mode, token: string, tags: string): string {
  const key =
    mode === 'stored'
      ? `"${token}"  # a proxy token from the Tokens page`
      : `"<your ${provider.name} key>"  # sent on to ${provider.name} as is, never stored`;
  return [
    'import os',
    '',
    'import boto3',
    '',
    `os.environ["AWS_BEARER_TOKEN_BEDROCK"] = ${key}`,
    `client = boto3.client("bedrock-runtime", region_name="eu-west-1", endpoint_url="${base}${provider.basePath}")`,
    ...(mode === 'pass-through'
      ? [
          'client.meta.events.register(',
          '    "before-send.bedrock-runtime.*",',
          `    lambda request, **_: request.headers.__setitem__("x-proxy-token", "${token}"),`,
          ')',
        ]
      : []),
    '# optional: tags on every request, for spend by tag',
    'client.meta.events.register(',
    '    "before-send.bedrock-runtime.*",',
    `    lambda request, **_: request.headers.__setitem__("x-proxy-tags", "${tags}"),`,
    ')',
    '',
    'response = client.converse(',
    `    modelId="${provider.exampleModel}",`,
    '    messages=[{"role": "user", "content": [{"text": "Hello"}]}],',
    ')',
    'print(response["output"]["message"]["content"][0]["text"])',
  ].join('\n');
}

export function awsCurl(provider: ProviderInfo, base: string, mode: Mode, token: string, tags: string): string {
  const credential = mode === 'stored' ? token : `<your ${provider.name} key>`;
  return [
    `curl ${base}${provider.basePath}/model/${encodeURIComponent(provider.exampleModel)}/converse \\`,
    `  -H "Authorization: Bearer ${credential}" \\`,
    ...(mode === 'pass-through' ? [`  -H "x-proxy-token: ${token}" \\`] : []),
    `  -H "x-proxy-tags: ${tags}" \\`,
    '  -H "content-type: application/json" \\',
    `  -d '{"messages": [{"role": "user", "content": [{"text": "Hello"}]}]}'`,
  ].join('\n');
}
