import * as z from 'zod/mini';
import { PROVIDER_CATALOG, type CatalogEntry, type ProviderId } from '../providers/catalog';
import { PROVIDER_KEY_CACHE_MS } from '../keys/cached-provider-keys';
import { CHECKS_PER_MINUTE, MAX_DELAY_MS } from '../auth/failed-sign-ins';
import { tableNames } from '../store/tables';

/** Environment variables are strings; every one is optional and has a documented default. */
const EnvSchema = z.object({
  PORT: z.optional(
    z.string().check(
      z.regex(/^\d+$/, 'expected a port number'),
      z.refine((port) => Number(port) <= 65535, 'expected a port number up to 65535'),
    ),
  ),
  HOST: z.optional(z.string()),
  DATA_DIR: z.optional(z.string()),
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  AWS_REGION: z.optional(z.string()),
  /** Set by Lambda's runtime: the proxy then signs AWS requests with the function's role. */
  AWS_LAMBDA_FUNCTION_NAME: z.optional(z.string()),
  ADMIN_KEY: z.optional(z.string().check(z.minLength(16, 'must be at least 16 characters'))),
  ADMIN_SECRET_ARN: z.optional(z.string()),
  KMS_KEY_ID: z.optional(z.string()),
  UPSTREAM_TIMEOUT_MS: z.optional(z.string().check(z.regex(/^[1-9]\d*$/, 'expected a positive integer'))),
  RATE_LIMIT_PER_MINUTE: z.optional(z.string().check(z.regex(/^[1-9]\d*$/, 'expected a positive integer'))),
  FAILED_SIGN_IN_MAX_DELAY_MS: z.optional(
    z.string().check(
      z.regex(/^\d+$/, 'expected a number of milliseconds'),
      z.refine((ms) => Number(ms) <= 60_000, 'expected at most 60000 milliseconds'),
    ),
  ),
  FAILED_SIGN_INS_PER_MINUTE: z.optional(z.string().check(z.regex(/^\d+$/, 'expected a number of sign-ins'))),
  CORS_ALLOWED_ORIGINS: z.optional(z.string()),
  PRICING_FILE: z.optional(z.string()),
  LOG_RETENTION_DAYS: z.optional(z.string().check(z.regex(/^\d+$/, 'expected a number of days'))),
  STATS_CONSUMER: z.optional(z.enum(['on', 'off'])),
  ALERT_WEBHOOK_ALLOW_PRIVATE: z.optional(z.enum(['true', 'false'], { error: 'expected true or false' })),
  USAGE_EXPORT_BUCKET: z.optional(
    z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name')),
  ),
  ALERT_TOPIC_ARN: z.optional(z.string().check(z.regex(/^arn:aws[\w-]*:sns:/, 'expected an SNS topic ARN'))),
  ALERT_QUEUE_URL: z.optional(z.url()),
  ALERT_RETRY_FIRST_SECONDS: z.optional(
    z.string().check(
      z.regex(/^[1-9]\d*$/, 'expected a positive number of seconds'),
      z.refine((s) => Number(s) <= 30, 'expected at most 30 seconds'),
    ),
  ),
  PROVIDER_KEY_CACHE_SECONDS: z.optional(
    z.string().check(
      z.regex(/^\d+$/, 'expected a number of seconds'),
      z.refine((s) => Number(s) <= 300, 'expected at most 300 seconds'),
    ),
  ),
});

/** The variables `loadConfig` checks by name (besides each table's and each provider's own, from their declarations). */
export const CHECKED_VARIABLES = Object.keys(EnvSchema.shape);

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  dynamoEndpoint?: string;
  region: string;
  /** Bearer key of the admin API, given directly (local) … */
  adminKey?: string;
  /** … or read once from Secrets Manager at cold start (AWS). */
  adminSecretArn?: string;
  /** Set in AWS: provider keys are envelope-encrypted under this KMS key. Unset: the local key under dataDir. */
  kmsKeyId?: string;
  upstreamTimeoutMs: number;
  rateLimitPerMinute: number;
  /** The longest a failed sign-in's answer is held (docs/operations.md, "Failed sign-ins"); 0 holds none. */
  failedSignInMaxDelayMs: number;
  /** Wrong credentials an address may have checked per minute before its credentials are refused unchecked; 0: no limit. */
  failedSignInsPerMinute: number;
  corsAllowedOrigins: string[];
  pricingFile?: string;
  logRetentionDays?: number;
  /** Local server only: whether it folds the usage stream into the rollups itself (`STATS_CONSUMER=off` leaves that to another process). */
  statsConsumer: boolean;
  /**
   * How long an instance keeps a stored provider key it read: the bound within which a key changed
   * or removed through one instance reaches every other one (SECURITY.md, "Keys").
   */
  providerKeyCacheMs: number;
  /**
   * Local use and tests only: alert webhooks may reach private and loopback addresses, over http too
   * (docs/alerts.md, "Webhook safety").
   */
  alertWebhookAllowPrivate: boolean;
  /** Where the credentials that sign AWS requests (Bedrock's stored mode) come from: the function's role in Lambda, else the machine's AWS credential chain. */
  awsSigning: AwsSigningSource;
  /** Set in AWS: the stack's SNS topic every budget alert is published to. */
  alertTopicArn?: string;
  /** Set in AWS: the SQS queue alerts wait in for delivery; a local server queues them in the accounts table. */
  alertQueueUrl?: string;
  /** The wait before an alert's first retry; the later waits scale with it (retry.ts, `alertDelivery`). */
  alertRetryFirstMs: number;
  /** Set in AWS: the stack's bucket the stream consumer exports usage rows to, for Athena (docs/alerts.md). */
  usageExportBucket?: string;
  tables: ReturnType<typeof tableNames>;
  /** Each provider's upstream base URL (no trailing slash), from its `UPSTREAM_BASE_URL_…` variable or the default. */
  upstreams: Record<ProviderId, UpstreamBase>;
}

export type AwsSigningSource = 'aws-role' | 'local-credential-chain';

export interface UpstreamBase {
  baseUrl: string;
  /** Set by its environment variable rather than the provider's default (the local banner lists these). */
  overridden: boolean;
  /** A provider reached through AWS: the region its requests are signed for, and the service name. */
  aws?: { region: string; service: string };
}

const AWS_REGION_NAME = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** Parses the environment once; a bad value stops the process with a message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as shells and CI systems often leave them.
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = z.safeParse(EnvSchema, given);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const retention = Number(e.LOG_RETENTION_DAYS ?? 0);
  return {
    port: Number(e.PORT ?? 8787),
    host: e.HOST || '127.0.0.1',
    dataDir: e.DATA_DIR || '.data',
    dynamoEndpoint: e.DYNAMODB_ENDPOINT || undefined,
    region: e.AWS_REGION || 'eu-west-1',
    adminKey: e.ADMIN_KEY || undefined,
    adminSecretArn: e.ADMIN_SECRET_ARN || undefined,
    kmsKeyId: e.KMS_KEY_ID || undefined,
    upstreamTimeoutMs: Number(e.UPSTREAM_TIMEOUT_MS ?? 30_000),
    rateLimitPerMinute: Number(e.RATE_LIMIT_PER_MINUTE ?? 100),
    // In Lambda a held answer would hold an invocation (and a slot of its reserved concurrency): no hold there.
    failedSignInMaxDelayMs: e.AWS_LAMBDA_FUNCTION_NAME ? 0 : Number(e.FAILED_SIGN_IN_MAX_DELAY_MS ?? MAX_DELAY_MS),
    failedSignInsPerMinute: Number(e.FAILED_SIGN_INS_PER_MINUTE ?? CHECKS_PER_MINUTE),
    corsAllowedOrigins: (e.CORS_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    pricingFile: e.PRICING_FILE || undefined,
    logRetentionDays: retention > 0 ? retention : undefined,
    statsConsumer: e.STATS_CONSUMER !== 'off',
    providerKeyCacheMs: Number(e.PROVIDER_KEY_CACHE_SECONDS ?? PROVIDER_KEY_CACHE_MS / 1000) * 1000,
    alertWebhookAllowPrivate: e.ALERT_WEBHOOK_ALLOW_PRIVATE === 'true',
    alertTopicArn: e.ALERT_TOPIC_ARN || undefined,
    alertQueueUrl: e.ALERT_QUEUE_URL || undefined,
    alertRetryFirstMs: Number(e.ALERT_RETRY_FIRST_SECONDS ?? 30) * 1000,
    usageExportBucket: e.USAGE_EXPORT_BUCKET || undefined,
    awsSigning: e.AWS_LAMBDA_FUNCTION_NAME ? 'aws-role' : 'local-credential-chain',
    tables: tableNames(env),
    upstreams: upstreamBases(given, e.AWS_REGION || 'eu-west-1'),
  };
}

/** Parsed once, so a malformed override stops the start instead of failing every request. */
function upstreamBases(env: NodeJS.ProcessEnv, ownRegion: string): Record<ProviderId, UpstreamBase> {
  const bases = {} as Record<ProviderId, UpstreamBase>;
  const problems: string[] = [];
  for (const provider of PROVIDER_CATALOG) {
    const upstream: CatalogEntry['upstream'] = provider.upstream;
    const override = env[upstream.envVar];
    // A provider reached through AWS: its own region variable, else the function's region (the stack's).
    const aws = upstream.aws && { region: env[upstream.aws.regionEnvVar] ?? ownRegion, service: upstream.aws.service };
    if (aws && !AWS_REGION_NAME.test(aws.region))
      problems.push(`${upstream.aws?.regionEnvVar}: expected an AWS region such as us-east-1`);
    const baseUrl = (override ?? upstream.baseUrl.replace('{region}', aws?.region ?? '')).replace(/\/+$/, '');
    if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
      problems.push(`${upstream.envVar}: expected an http(s) URL`);
    bases[provider.id] = { baseUrl, overridden: override !== undefined, ...(aws ? { aws } : {}) };
  }
  if (problems.length) throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  return bases;
}
