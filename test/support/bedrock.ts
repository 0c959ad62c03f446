/**
 * What the Bedrock tests share: the model they call, its exact price, the AWS SDK client as
 * docs/bedrock.md sets it up, and a requester name per call to find that call's row by.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { randomBytes } from 'node:crypto';
import { DEFAULT_BEDROCK_USAGE } from '../fakes/fake-bedrock';
import type { ProxyServer } from './proxy-server';

export const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-6';

/** USD per million tokens of the cross-region (`us.`) Claude Sonnet 4.6 profile in the bundled genai-prices data, written out. */
const SONNET_46_REGIONAL = { input: 3.3, output: 16.5, cacheRead: 0.33, cacheWrite: 4.125 };
const U = DEFAULT_BEDROCK_USAGE;

/** The cost of the fake's default usage at those rates, in nano-dollars. */
export const BEDROCK_COST_NANOS = Math.round(
  (U.input * SONNET_46_REGIONAL.input +
    U.output * SONNET_46_REGIONAL.output +
    U.cacheRead * SONNET_46_REGIONAL.cacheRead +
    U.cacheWrite * SONNET_46_REGIONAL.cacheWrite) *
    1e3,
);

/**
 * The client as docs/bedrock.md shows it (three settings differ from a direct Bedrock client),
 * sending `credential` as its Bedrock bearer token and `headers` on every request.
 */
export function bedrockClient(
  proxyBase: string,
  credential: string,
  headers: Record<string, string> = {},
  /** The SDK's attempts per call: one unless a test proves what the SDK's own retries do. */
  maxAttempts = 1,
): BedrockRuntimeClient {
  const client = new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: `${proxyBase}/bedrock`,
    token: { token: credential },
    authSchemePreference: ['httpBearerAuth'],
    requestHandler: new NodeHttpHandler(),
    maxAttempts,
  });
  client.middlewareStack.add(
    (next) => (args) => {
      Object.assign((args.request as { headers: Record<string, string> }).headers, headers);
      return next(args);
    },
    { step: 'build', name: 'proxyHeaders' },
  );
  return client;
}

/** A requester name no other call uses (`what` plus a random suffix), so its row is found by it alone. */
export const uniqueRequester = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

/** The one row the server's own account has for `requester`, once written. */
export async function rowOfRequester(proxy: ProxyServer, requester: string): Promise<Record<string, unknown>> {
  const rows = await proxy.waitForRows(proxy.account.token, 1, `requester=${encodeURIComponent(requester)}`);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}
