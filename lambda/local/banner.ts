import type { Config } from '../wiring/config';
import { PROVIDER_CATALOG } from '../providers/catalog';
import { PROVIDERS, upstreamUrl } from '../providers/registry';
import { VERSION } from '../base/version';
import type { FirstAccount } from './first-run';

interface BannerInput {
  base: string;
  config: Config;
  /** DynamoDB Local started by this server (else DYNAMODB_ENDPOINT). */
  ownStore: boolean;
  admin: { key: string; generated: boolean; path?: string };
  firstAccount: FirstAccount;
}

const TOKEN_NOTE: Record<FirstAccount['reason'], string> = {
  created: 'shown once: sign in to the dashboard with it',
  'not-shown': 'a fresh token: the earlier start stopped before showing one',
  asked: 'a fresh token (--new-token); earlier tokens stay valid until revoked',
  'shown-before': '',
};

/** The first chat-completions provider's SDK base path: the example next to the proxy base. */
const OPENAI_SDK_EXAMPLE = PROVIDER_CATALOG.find((entry) => entry.dialect === 'chat')?.sdkBasePath ?? '/prov-x/v1';

/** What `npm start` prints once it is ready: addresses, store, credentials to begin with, active upstream overrides. */
export function bannerLines({ base, config, ownStore, admin, firstAccount }: BannerInput): string[] {
  const lines = [
    `ai-usage-proxy ${VERSION} listening on ${base}`,
    `  dashboard:        ${base}/`,
    `  proxy base:       ${base}/api/proxy   (Anthropic SDK baseURL; OpenAI SDK: ${base}/api/proxy${OPENAI_SDK_EXAMPLE})`,
    `  data directory:   ${config.dataDir}${ownStore ? ' (DynamoDB Local inside)' : ` (DynamoDB at ${config.dynamoEndpoint})`}`,
  ];
  if (admin.generated) lines.push(`  admin key:        ${admin.key}   (saved in ${admin.path})`);
  else if (admin.path) lines.push(`  admin key:        in ${admin.path}`);
  lines.push(`  first account:    ${firstAccount.accountId}`);
  if (firstAccount.token)
    lines.push(`  proxy token:      ${firstAccount.token}   (${TOKEN_NOTE[firstAccount.reason]})`);
  else lines.push('  proxy token:      shown at the first start; `npm start -- --new-token` prints a fresh one');
  for (const provider of PROVIDERS) {
    const { baseUrl, overridden } = config.upstreams[provider.id];
    // decodeURI: a path template such as Bedrock's `/model/{model}/converse` is shown as written.
    if (overridden)
      lines.push(
        `  upstream ${provider.id}:  ${decodeURI(upstreamUrl(provider, baseUrl).href)}   (${provider.upstream.envVar})`,
      );
  }
  return lines;
}
