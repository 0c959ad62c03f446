import type { Node } from 'constructs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';

/**
 * Everything an operator can switch with `-c key=value` (or the `context` block of cdk.json).
 * Values from the command line arrive as strings, values from cdk.json may be numbers or arrays,
 * so every reader accepts both and fails synthesis with a message naming the key.
 */
export interface DeploySettings {
  /** Prefixes every named resource, so two stages can live in one account. */
  stage: string;
  /** The cache (and with it everything else) lives in EU West (Ireland) by default (docs/errors-and-limits.md, "Limits"). */
  region: string;
  /** Production origins of the dashboard or browser clients; localhost origins are always allowed by the app. */
  corsAllowedOrigins: string[];
  /**
   * Caps concurrent instances: a cost ceiling for a URL anyone can call, and what a leaked token or
   * a client stuck in a loop can reach. `none` (undefined here) leaves the function on the account's
   * unreserved pool, without a cap.
   */
  reservedConcurrency?: number;
  /** Keeps this many instances initialised (billed while idle) on the `live` alias the URL serves. */
  provisionedConcurrency?: number;
  /** Usage rows expire after this many days (DynamoDB TTL on `expires_at`); undefined (`none`) keeps them forever. */
  logRetentionDays?: number;
  /**
   * The stream consumer's batching window: rows are folded into rollups and budgets' spend, and
   * exported, at most this many seconds after they are written. A longer window makes fewer,
   * fuller batches (cheaper) and lets a budget's spend lag further behind (docs/deploy.md, "Cost").
   */
  consumerWindowSeconds: number;
  /** CloudWatch retention of the function's own logs. */
  functionLogRetention: RetentionDays;
  memoryMb: number;
  upstreamTimeoutMs: number;
  rateLimitPerMinute: number;
  /** An existing SNS topic the alarms notify instead of the topic the stack creates. */
  alarmTopicArn?: string;
  /** An e-mail address subscribed to the alarm topic (SNS asks it to confirm once). */
  alarmEmail?: string;
  /** An existing SNS topic budget alerts are published to instead of the topic the stack creates (docs/alerts.md). */
  alertTopicArn?: string;
  /** An e-mail address subscribed to the budget-alert topic (SNS asks it to confirm once). */
  alertEmail?: string;
  /** Exported usage rows (docs/alerts.md, "Usage in Athena") expire from the export bucket after this many days. */
  usageExportDays: number;
  /** Creates a CloudWatch alarm when the proxy's spend in one hour exceeds this many dollars (docs/alerts.md). */
  spendAlarmUsdPerHour?: number;
  /**
   * The region whose Bedrock Runtime the function calls (`-c bedrockRegion=us-east-1`; default: the
   * stack's region). It is the function's `BEDROCK_REGION`, and `{region}` in the Bedrock ARNs.
   */
  bedrockRegion: string;
  /**
   * `-c enableBedrock=true`: the function may call Amazon Bedrock with its own role (docs/bedrock.md), on
   * these model and inference-profile ARNs (`-c bedrockModelArns=arn1,arn2`; `{account}` stands for the
   * stack's account, `{region}` for the Bedrock region).
   */
  bedrockAccess?: { modelArns: string[] };
  /**
   * Sign-in to the dashboard (docs/people.md): `-c cognitoSignIn=true` creates a Cognito user pool for
   * it; `-c oidcIssuer=… -c oidcClientId=… -c oidcClientSecretArn=…` names the team's own issuer, its
   * client secret in Secrets Manager (`-c oidcGroupsClaim=…`, default `groups`).
   */
  signIn?:
    | { kind: 'cognito' }
    | { kind: 'oidc'; issuer: string; clientId: string; clientSecretArn: string; groupsClaim?: string };
  /**
   * `-c managedInstances=true`: the proxy function runs on Lambda Managed Instances, many requests
   * per execution environment on EC2 capacity the stack's capacity provider manages (docs/deploy.md,
   * "Managed instances"), instead of one request per Lambda instance.
   */
  managedInstances?: ManagedInstancesSettings;
}

export interface ManagedInstancesSettings {
  /** Requests one execution environment serves at once (`-c managedInstancesConcurrency`). */
  concurrency: number;
  /** The most vCPUs the capacity provider scales to, all environments together: the cost ceiling (`-c managedInstancesMaxVcpus`). */
  maxVcpus: number;
  /**
   * An existing VPC (`-c managedInstancesVpcId`) and its private subnets (`-c managedInstancesSubnetIds`),
   * which must already route to the providers' APIs and to DynamoDB; unset, the stack creates one.
   */
  vpc?: { vpcId: string; subnetIds: string[] };
}

/**
 * The inference profiles of this account in the Bedrock region, and foundation models in every region:
 * a cross-region profile (`eu.…`, `global.…`) routes each request to the model in one of several
 * regions, and AWS checks the role may invoke the model in the region that serves it.
 */
export const DEFAULT_BEDROCK_ARNS = [
  'arn:aws:bedrock:*::foundation-model/*',
  'arn:aws:bedrock:{region}:{account}:inference-profile/*',
];

/** The Bedrock ARNs the role is granted, `{account}` and `{region}` filled in. */
export function bedrockGrantArns(settings: DeploySettings, account: string): string[] {
  return (settings.bedrockAccess?.modelArns ?? []).map((arn) =>
    arn.replaceAll('{account}', account).replaceAll('{region}', settings.bedrockRegion),
  );
}

const REGION_NAME = /^[a-z]{2}(-[a-z]+)+-\d$/;

export const DEFAULTS = {
  stage: 'dev',
  region: 'eu-west-1',
  functionLogRetentionDays: 30,
  /**
   * A request at the 6 MB body limit peaks near 126 MB under the runtime interface client with
   * Lambda's heap flags (test/infra/lambda-memory.test.ts keeps it under 75% of this).
   */
  memoryMb: 192,
  upstreamTimeoutMs: 30_000,
  rateLimitPerMinute: 100,
  /**
   * 50 instances serve about 50 requests at once: at a 3 s provider answer, ~16 requests a second,
   * over a million a day. At 192 MB, 50 busy instances cost about $0.45 an hour, which bounds what
   * a flood can spend; it leaves 950 of a default 1,000-instance account pool to everything else.
   */
  reservedConcurrency: 50,
  /** Two years: this month can be compared with the same month of the year before, and the one before that. */
  usageExportDays: 731,
  /**
   * Usage rows (the logs API's, one per request) are kept 90 days in DynamoDB: the rollups, the
   * budgets' spend and the export (`usageExportDays`) keep everything older, so the table, and its
   * point-in-time recovery, stop growing with the months.
   */
  logRetentionDays: 90,
  /** One minute: six times fewer consumer batches than 10 s, for a budget's spend up to a minute behind. */
  consumerWindowSeconds: 60,
  /**
   * Managed instances: 32 requests at once per execution environment (2 GB, one vCPU). At the 6 MB
   * body limit each request holds about two copies of its body: 32 of them fit in 2 GB beside
   * the runtime, and their CPU (a few ms each) is far from the vCPU's.
   */
  managedInstancesConcurrency: 32,
  /**
   * The smallest ceiling Lambda accepts: twelve environments of one vCPU, 384 requests at once
   * (about 128 a second at a 3 s answer), and the most the stack can spend on instances.
   */
  managedInstancesMaxVcpus: 12,
  /** Lambda Managed Instances gives each execution environment at least 2 GB. */
  managedInstancesMemoryMb: 2048,
} as const;

/** The context value that keeps usage rows forever. */
export const KEEP_FOREVER = 'none';

/** The context value that turns the reserved-concurrency cap off. */
export const NO_RESERVED_CONCURRENCY = 'none';

type ContextReader = Pick<Node, 'tryGetContext'>;

export function readSettings(node: ContextReader): DeploySettings {
  const stage = readString(node, 'stage') ?? DEFAULTS.stage;
  // Stage names end up in table, function, alarm and alias names; this keeps every one of them valid.
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
    throw new Error(
      `context "stage": "${stage}" must be 1-20 lowercase letters, digits or dashes, starting with a letter`,
    );
  }
  const region = readString(node, 'region') ?? DEFAULTS.region;
  if (!REGION_NAME.test(region)) throw new Error(`context "region": "${region}" is not a region name`);
  const bedrockRegion = readString(node, 'bedrockRegion') ?? region;
  if (!REGION_NAME.test(bedrockRegion))
    throw new Error(`context "bedrockRegion": "${bedrockRegion}" is not a region name`);

  const retentionDays = readInteger(node, 'functionLogRetentionDays', 1, 3653) ?? DEFAULTS.functionLogRetentionDays;
  const knownRetentions = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number');
  if (!knownRetentions.includes(retentionDays)) {
    throw new Error(
      `context "functionLogRetentionDays": ${retentionDays} is not one CloudWatch accepts (${knownRetentions.filter((d) => d < 9999).join(', ')})`,
    );
  }

  const managedInstances = readManagedInstances(node);
  const reservedConcurrency = managedInstances ? undefined : readReservedConcurrency(node);
  const provisionedConcurrency = readInteger(node, 'provisionedConcurrency', 1, 10_000);
  if (managedInstances && provisionedConcurrency !== undefined)
    throw new Error(
      'context "provisionedConcurrency" does not apply with "managedInstances": the capacity provider keeps its instances running',
    );
  if (
    reservedConcurrency !== undefined &&
    provisionedConcurrency !== undefined &&
    provisionedConcurrency > reservedConcurrency
  ) {
    throw new Error(
      `context "provisionedConcurrency": ${provisionedConcurrency} is more than "reservedConcurrency" (${reservedConcurrency}); Lambda allows provisioned instances only within the reserved ones`,
    );
  }

  return {
    stage,
    region,
    corsAllowedOrigins: readOrigins(node, 'corsAllowedOrigins'),
    reservedConcurrency,
    provisionedConcurrency,
    logRetentionDays:
      readString(node, 'logRetentionDays') === KEEP_FOREVER
        ? undefined
        : (readInteger(node, 'logRetentionDays', 1, 36_500, ` or "${KEEP_FOREVER}"`) ?? DEFAULTS.logRetentionDays),
    // Lambda's limit for a stream's batching window is 300 s.
    consumerWindowSeconds: readInteger(node, 'consumerWindowSeconds', 0, 300) ?? DEFAULTS.consumerWindowSeconds,
    functionLogRetention: retentionDays,
    memoryMb: managedInstances
      ? (readInteger(node, 'memoryMb', DEFAULTS.managedInstancesMemoryMb, 32_768) ?? DEFAULTS.managedInstancesMemoryMb)
      : (readInteger(node, 'memoryMb', 128, 10_240) ?? DEFAULTS.memoryMb),
    upstreamTimeoutMs: readInteger(node, 'upstreamTimeoutMs', 1_000, 120_000) ?? DEFAULTS.upstreamTimeoutMs,
    rateLimitPerMinute: readInteger(node, 'rateLimitPerMinute', 1, 1_000_000) ?? DEFAULTS.rateLimitPerMinute,
    alarmTopicArn: readArn(node, 'alarmTopicArn'),
    alarmEmail: readEmail(node, 'alarmEmail'),
    alertTopicArn: readArn(node, 'alertTopicArn'),
    alertEmail: readEmail(node, 'alertEmail'),
    spendAlarmUsdPerHour: readInteger(node, 'spendAlarmUsdPerHour', 1, 10_000_000),
    usageExportDays: readInteger(node, 'usageExportDays', 1, 36_500) ?? DEFAULTS.usageExportDays,
    bedrockRegion,
    bedrockAccess: readBedrock(node),
    signIn: readSignIn(node),
    managedInstances,
  };
}

function readManagedInstances(node: ContextReader): ManagedInstancesSettings | undefined {
  if (!readFlag(node, 'managedInstances')) return undefined;
  const vpcId = readString(node, 'managedInstancesVpcId');
  const subnets = readString(node, 'managedInstancesSubnetIds');
  if ((vpcId === undefined) !== (subnets === undefined))
    throw new Error('context "managedInstancesVpcId" and "managedInstancesSubnetIds" are given together, or neither');
  if (vpcId !== undefined && !/^vpc-[0-9a-f]{8,17}$/.test(vpcId))
    throw new Error(`context "managedInstancesVpcId": "${vpcId}" is not a VPC id`);
  const subnetIds = subnets?.split(',').map((id) => id.trim());
  if (subnetIds && !subnetIds.every((id) => /^subnet-[0-9a-f]{8,17}$/.test(id)))
    throw new Error('context "managedInstancesSubnetIds" must list subnet ids, such as subnet-0123456789abcdef0');
  return {
    concurrency: readInteger(node, 'managedInstancesConcurrency', 1, 1_600) ?? DEFAULTS.managedInstancesConcurrency,
    maxVcpus: readInteger(node, 'managedInstancesMaxVcpus', 12, 15_000) ?? DEFAULTS.managedInstancesMaxVcpus,
    vpc: vpcId && subnetIds ? { vpcId, subnetIds } : undefined,
  };
}

function readSignIn(node: ContextReader): DeploySettings['signIn'] {
  const issuer = readString(node, 'oidcIssuer');
  const clientId = readString(node, 'oidcClientId');
  const clientSecretArn = readString(node, 'oidcClientSecretArn');
  const groupsClaim = readString(node, 'oidcGroupsClaim');
  if (readFlag(node, 'cognitoSignIn')) {
    if (issuer || clientId || clientSecretArn)
      throw new Error('context "cognitoSignIn" and "oidcIssuer" exclude each other: sign-in has one issuer');
    return { kind: 'cognito' };
  }
  if (!issuer && !clientId && !clientSecretArn) return undefined;
  if (!issuer || !/^https:\/\/\S+$/.test(issuer))
    throw new Error('context "oidcIssuer" must be the issuer\'s https:// URL');
  if (!clientId) throw new Error('context "oidcClientId" is required with "oidcIssuer"');
  if (!clientSecretArn || !/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:\S+$/.test(clientSecretArn))
    throw new Error(
      'context "oidcClientSecretArn" must be the ARN of the Secrets Manager secret holding the client secret',
    );
  return { kind: 'oidc', issuer, clientId, clientSecretArn, groupsClaim };
}

/** A number of instances, the default when unset, or none at all when `none` is given. */
function readReservedConcurrency(node: ContextReader): number | undefined {
  if (readString(node, 'reservedConcurrency') === NO_RESERVED_CONCURRENCY) return undefined;
  // 0 would be valid to Lambda, where it means "never run": refused here like any other typo.
  return (
    readInteger(node, 'reservedConcurrency', 1, 10_000, ` or "${NO_RESERVED_CONCURRENCY}"`) ??
    DEFAULTS.reservedConcurrency
  );
}

function readEmail(node: ContextReader, key: string): string | undefined {
  const value = readString(node, key);
  if (value !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value))
    throw new Error(`context "${key}": "${value}" is not an e-mail address`);
  return value;
}

function readBedrock(node: ContextReader): DeploySettings['bedrockAccess'] {
  if (!readFlag(node, 'enableBedrock')) return undefined;
  const listed: unknown = node.tryGetContext('bedrockModelArns');
  const arns = Array.isArray(listed)
    ? listed
    : typeof listed === 'string'
      ? listed.split(',')
      : listed === undefined || listed === null
        ? DEFAULT_BEDROCK_ARNS
        : undefined;
  const modelArns = arns?.map((arn: unknown) => (typeof arn === 'string' ? arn.trim() : '')).filter(Boolean);
  if (
    !modelArns?.length ||
    !modelArns.every((arn) =>
      /^arn:aws[a-z-]*:bedrock:([a-z0-9-*]*|\{region\}):(\d{12}|\*|\{account\})?:(foundation-model|inference-profile|application-inference-profile|provisioned-model|custom-model)\/\S+$/.test(
        arn,
      ),
    )
  ) {
    throw new Error(
      'context "bedrockModelArns" must list Bedrock model or inference-profile ARNs, such as arn:aws:bedrock:*::foundation-model/*',
    );
  }
  return { modelArns };
}

/** A switch: true (or "true") turns it on; unset, false (or "false") leaves it off; anything else is refused as a typo. */
function readFlag(node: ContextReader, key: string): boolean {
  const value: unknown = node.tryGetContext(key);
  if (value === true || value === 'true') return true;
  if (value === undefined || value === null || value === false || value === 'false' || value === '') return false;
  throw new Error(`context "${key}" must be true or false`);
}

function readString(node: ContextReader, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') throw new Error(`context "${key}" must be a string`);
  return value.trim();
}

function readInteger(node: ContextReader, key: string, min: number, max: number, orElse = ''): number | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`context "${key}": ${JSON.stringify(value)} must be a whole number from ${min} to ${max}${orElse}`);
  }
  return n;
}

/**
 * Origins are compared by the app as exact strings, so a trailing slash or a path would silently
 * never match: reject them here rather than at the first browser request.
 */
function readOrigins(node: ContextReader, key: string): string[] {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return [];
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : undefined;
  if (!items) throw new Error(`context "${key}" must be a comma-separated string or a list`);
  const origins = items.map((item) => String(item).trim()).filter(Boolean);
  for (const origin of origins) {
    if (!/^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i.test(origin)) {
      throw new Error(
        `context "${key}": "${origin}" must be a scheme and host (and optional port), like https://app.example.com`,
      );
    }
  }
  return origins;
}

function readArn(node: ContextReader, key: string): string | undefined {
  const value = readString(node, key);
  if (value !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$/.test(value)) {
    throw new Error(`context "${key}": "${value}" is not an SNS topic ARN`);
  }
  return value;
}
