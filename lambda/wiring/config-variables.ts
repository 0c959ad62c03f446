/**
 * The settings a user sets, as docs/operations.md ("Configuration") lists them: rendered into the
 * page by scripts/doc-tables.ts, and test/unit/config-doc.test.ts checks that they and the
 * variables the stack sets are every variable `loadConfig` reads. The runtime never imports this.
 */
import { PROVIDER_CATALOG } from '../providers/catalog';

export interface ConfigVariable {
  /** One variable, or several documented together. */
  names: readonly string[];
  default: string;
  meaning: string;
}

export const CONFIG_VARIABLES: readonly ConfigVariable[] = [
  { names: ['PORT', 'HOST'], default: '`8787`, `127.0.0.1`', meaning: 'Local server address.' },
  {
    names: ['DATA_DIR'],
    default: '`.data`',
    meaning: "Local data: DynamoDB Local's files, the local encryption key, the admin key, the row spool.",
  },
  {
    names: ['DYNAMODB_ENDPOINT'],
    default: 'unset',
    meaning: 'Use this DynamoDB instead of starting the embedded DynamoDB Local.',
  },
  {
    names: ['ADMIN_KEY'],
    default: 'generated',
    meaning: 'Bearer key of the admin API. In AWS it is in Secrets Manager (`ADMIN_SECRET_ARN`).',
  },
  {
    names: ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'],
    default: 'unset',
    meaning:
      'Sign-in to the dashboard with this OpenID Connect issuer and client (docs/people.md). In AWS the secret is in Secrets Manager (`OIDC_CLIENT_SECRET_ARN`).',
  },
  {
    names: ['OIDC_GROUPS_CLAIM'],
    default: '`groups`',
    meaning: "The claim listing a person's groups, each mapped to a role in an account (`cognito:groups` for Cognito).",
  },
  {
    names: ['UPSTREAM_TIMEOUT_MS'],
    default: '`30000`',
    meaning: "Time for the upstream's headers, and the longest pause inside a stream.",
  },
  {
    names: ['RATE_LIMIT_PER_MINUTE'],
    default: '`100`',
    meaning: 'Per proxy token, all providers together, across all instances.',
  },
  {
    names: ['FAILED_SIGN_IN_MAX_DELAY_MS'],
    default: '`2000`',
    meaning:
      "The longest hold of a refused credential's answer ([below](#failed-sign-ins)); `0` holds none. At most `60000`. Local server only.",
  },
  {
    names: ['FAILED_SIGN_INS_PER_MINUTE'],
    default: '`10`',
    meaning: 'Wrong credentials checked per address and minute ([below](#failed-sign-ins)); `0` turns this off.',
  },
  {
    names: ['CORS_ALLOWED_ORIGINS'],
    default: 'empty',
    meaning: 'Production domains, comma-separated. Localhost origins are always allowed.',
  },
  {
    names: ['PRICING_FILE'],
    default: 'unset',
    meaning: "Extra or overriding prices: the project format or LiteLLM's.",
  },
  {
    names: PROVIDER_CATALOG.map((entry) => entry.upstream.envVar),
    default: 'the providers',
    meaning:
      'Replace an upstream ([api.md](api.md#custom-upstreams)). A value that is not an http(s) URL stops the start, naming the variable.',
  },
  {
    names: PROVIDER_CATALOG.flatMap((entry): string[] =>
      'aws' in entry.upstream ? [entry.upstream.aws.regionEnvVar] : [],
    ),
    default: '`AWS_REGION`, else `eu-west-1`',
    meaning:
      "The region of Bedrock's default URL and of its SigV4 signature ([bedrock.md](bedrock.md)); the stack sets it from `-c bedrockRegion`.",
  },
  {
    names: ['LOG_RETENTION_DAYS'],
    default: 'unset',
    meaning: 'When set, usage rows expire (DynamoDB TTL) after this many days.',
  },
  {
    names: ['TABLE_PREFIX'],
    default: '`ai-usage-proxy-`',
    meaning: "Local table names; in AWS the stack passes each table's name.",
  },
  {
    names: ['PROVIDER_KEY_CACHE_SECONDS'],
    default: '`30`',
    meaning:
      'How long an instance keeps a stored provider key it read, so a key changed through another instance (or local server on the same store) reaches it within this time; `0` reads it on every request. At most `300`.',
  },
  {
    names: ['STATS_CONSUMER'],
    default: '`on`',
    meaning:
      '`off`: this server does not fold the usage stream; run `node dist/local/stats-consumer.mjs` (same `TABLE_PREFIX` and `DYNAMODB_ENDPOINT`) as the separate consumer, as in AWS.',
  },
  {
    names: ['ALERT_WEBHOOK_ALLOW_PRIVATE'],
    default: '`false`',
    meaning:
      '`true`: alert webhooks may reach private and loopback addresses, over `http://` too; for local use and tests ([alerts.md](alerts.md#webhook-safety)).',
  },
  {
    names: ['ALERT_RETRY_FIRST_SECONDS'],
    default: '`30`',
    meaning:
      'The first wait before a failed alert delivery is retried; each later wait doubles, up to 30 times this (15 minutes by default), over 24 attempts. At most `30`.',
  },
];

/**
 * Variables read but not for a user to set: the stack passes them in AWS, or Lambda's runtime
 * does (each table's own name, the KMS key, the admin secret, the alert topic, the export bucket,
 * the region and the function's name).
 */
export const SET_BY_THE_PLATFORM: readonly string[] = [
  'AWS_REGION',
  'AWS_LAMBDA_FUNCTION_NAME',
  'ADMIN_SECRET_ARN',
  'KMS_KEY_ID',
  'ALERT_TOPIC_ARN',
  'ALERT_QUEUE_URL',
  'USAGE_EXPORT_BUCKET',
  'OIDC_CLIENT_SECRET_ARN',
  'OIDC_COGNITO_USER_POOL_ID',
];
