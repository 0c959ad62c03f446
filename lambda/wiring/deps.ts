import type { ObjectStore } from '../export/ports';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { join } from 'node:path';
import { BackgroundWork } from '../base/background-work';
import { ProxyCache } from '../cache/proxy-cache';
import type { CachedResponse } from '../cache/response-cache';
import { FailedSignIns } from '../auth/failed-sign-ins';
import { SingleFlight } from '../cache/single-flight';
import { loadConfig, type Config } from './config';
import { describeError, jsonLogger, type Logger } from '../base/logger';
import { loadPriceTable } from '../pricing/load-prices';
import type { PriceTable } from '../pricing/price-table';
import { adminKeySource } from '../auth/admin-key';
import { EnvelopeSealer, type KeyWrapper } from '../keys/crypto/envelope';
import { LocalKeyWrapper } from '../keys/crypto/local-key-wrapper';
import { textSealer } from '../keys/crypto/sealed-text';
import { DynamoAccountStore } from '../auth/dynamodb/account-store';
import { DynamoBudgetStore } from '../budgets/dynamodb/budget-store';
import { DynamoSpendFold } from '../budgets/dynamodb/spend-fold';
import { BatchedGet } from '../store/dynamodb/batched-get';
import { DynamoResponseCache } from '../cache/dynamodb/cache-store';
import { createAdministrationClient, createDocumentClient, storeRequestHandler } from '../store/dynamodb/client';
import type { DocumentClient } from '../store/dynamodb/document-client';
import { DynamoProviderKeyStore } from '../keys/dynamodb/provider-key-store';
import { DynamoTokenGate } from '../auth/dynamodb/token-gate';
import type { GateSource } from '../auth/dynamodb/gate-item';
import { isStoreOutage } from '../store/dynamodb/store-outage';
import { PRE_FORWARD_BUDGET_MS, sharedDeadline, type SharedDeadline } from '../store/dynamodb/deadlines';
import { DynamoUsageLog } from '../usage/dynamodb/usage-log';
import { DynamoUsageStats } from '../usage/dynamodb/usage-stats';
import { CachedProviderKeys } from '../keys/cached-provider-keys';
import { CachedAccountPrices } from '../account-prices/cached-account-prices';
import { DynamoAccountPriceStore } from '../account-prices/dynamodb/account-price-store';
import type { AccountPriceStore } from '../account-prices/ports';
import { CachedAccountSettings } from '../account-settings/cached-account-settings';
import { DynamoAccountSettingsStore } from '../account-settings/dynamodb/account-settings-store';
import type { AccountSettingsStore } from '../account-settings/ports';
import type { AccountStore, TokenGate } from '../auth/ports';
import type { ProviderKeyStore, SecretSealer } from '../keys/ports';
import type { BudgetStore, SpendFold } from '../budgets/ports';
import { TokenBudgetHints } from '../budgets/budget-hints';
import { FileRowSpool, LogRowSpool, type RowSpool } from '../usage/row-spool';
import { RowWriter } from '../usage/row-writer';
import type { UsageStats } from '../usage/usage-stats';
import type { UsageLog } from '../usage/usage-row';
import { RuntimeCredentials } from '../upstream/runtime-credentials';
import { DynamoAlertStore } from '../alerts/dynamodb/alert-store';
import type { AlertQueue, AlertStore, AlertTopic, WebhookSecretSealer } from '../alerts/ports';
import { BudgetAlerts } from '../alerts/budget-alerts';
import type { AuditLog } from '../audit/ports';
import { DynamoAuditLog } from '../audit/dynamodb/audit-table';
import { OidcClient, type ClientCredentials } from '../people/oidc-client';
import type { GroupRoleStore } from '../people/ports';
import { DynamoGroupRoles } from '../people/dynamodb/group-roles';
import { AlertDelivery } from '../alerts/alert-delivery';
import { DynamoAlertQueue } from '../alerts/dynamodb/alert-queue';
import { AlertDeliveryLoop } from '../alerts/delivery-loop';
import { retryPolicies } from '../base/retry';

/** Everything the pipeline and the API use, built once per process. */
export interface Deps {
  config: Config;
  log: Logger;
  accounts: AccountStore;
  providerKeys: ProviderKeyStore;
  budgets: BudgetStore;
  /** Budget alerts' history and each account's webhook (docs/alerts.md); alerts are sent by the stream consumer. */
  alerts: AlertStore;
  /** Every management change, appended (docs/people.md). */
  audit: AuditLog;
  /** Which identity-provider group holds which role in which account (docs/people.md). */
  groupRoles: GroupRoleStore;
  /** Sign-in with the OpenID Connect issuer, when one is configured. */
  signIn?: OidcClient;
  /** The proxy path's one call before forwarding: token check and rate count together. */
  tokenGate: TokenGate;
  budgetHints: TokenBudgetHints;
  usageLog: UsageLog;
  usageStats: UsageStats;
  cache: ProxyCache;
  sealer: SecretSealer;
  prices: PriceTable;
  /** Each account's own prices (docs/usage-and-pricing.md, "Account prices"), kept per instance for a short while. */
  accountPrices: AccountPriceStore;
  /** Each account's default fallbacks and limits (docs/fallbacks.md), kept per instance for a short while. */
  accountSettings: AccountSettingsStore;
  adminKey: () => Promise<string | undefined>;
  /** Whether a store error means the store is unavailable for now (not a refusal or a bug), as the adapter in use tells it. */
  isStoreOutage: (error: unknown) => boolean;
  /**
   * A proxied request's budget for store work before forwarding, started anew for each request and
   * shared by its reads: past it a read fails as an outage would (docs/failure-modes.md, "The store").
   */
  preForwardBudget: () => SharedDeadline;
  background: BackgroundWork;
  rowSpool: RowSpool;
  rowWriter: RowWriter;
  /** Epoch ms; replaceable so cache expiry and budget periods can be tested without waiting. */
  now: () => number;
  /** The runtime's AWS credentials (the function's role; locally the standard chain), for requests the proxy signs itself. */
  awsCredentials: RuntimeCredentials;
  /** Failed authentications per source address on this instance: counted, logged, and slowed when repeated. */
  failedSignIns: FailedSignIns;
}

/** Adapters to services only AWS has, given by the Lambda entry (lambda/wiring/aws-adapters.ts). */
export interface AwsAdapters {
  keyWrapper(region: string, keyId: string): KeyWrapper;
  secretReader(region: string, secretId: string): () => Promise<string | undefined>;
  /** The stack's Cognito user pool's app client (docs/people.md). */
  cognitoAppClient(region: string, userPoolId: string): () => Promise<ClientCredentials>;
}

export interface DepsOptions {
  /** KMS and Secrets Manager; without them `KMS_KEY_ID` and `ADMIN_SECRET_ARN` are refused. */
  aws?: AwsAdapters;
  /**
   * Identical cache requests in flight together share one upstream call. For a runtime
   * that serves many requests per process (the local server); a Lambda instance runs one
   * invocation at a time, where a request could never find another to share with.
   */
  shareInFlightAnswers?: boolean;
}

/**
 * The composition root: the only place that builds clients and picks adapters.
 * `DYNAMODB_ENDPOINT` selects DynamoDB Local; `KMS_KEY_ID` selects KMS over the
 * local key file; `ADMIN_SECRET_ARN` selects Secrets Manager for the admin key (both
 * through `options.aws`, which only the Lambda entry passes).
 * Building makes no call: clients connect on first use.
 */
export function buildDeps(config: Config = loadConfig(), log: Logger = jsonLogger, options: DepsOptions = {}): Deps {
  const doc = createDocumentClient({ region: config.region, endpoint: config.dynamoEndpoint });
  const tables = config.tables;
  const accountReads = new BatchedGet(doc, tables.accounts, ['pk', 'sk']);
  const accounts = new DynamoAccountStore(
    doc,
    tables.accounts,
    tables.rateLimits,
    accountReads,
    undefined,
    config.rateLimitPerMinute,
  );
  const usageLog = new DynamoUsageLog(doc, tables.usageLogs, config.logRetentionDays);
  const aws = (variable: string): AwsAdapters => {
    if (options.aws) return options.aws;
    throw new Error(
      `Invalid configuration: ${variable} is for the Lambda function; the local server keeps provider keys under DATA_DIR/local-master.key and reads its admin key from ADMIN_KEY`,
    );
  };
  const wrapper = config.kmsKeyId
    ? aws('KMS_KEY_ID').keyWrapper(config.region, config.kmsKeyId)
    : LocalKeyWrapper.fromFile(join(config.dataDir, 'local-master.key'));
  const sealer = new EnvelopeSealer(wrapper);
  const readSecret = config.adminSecretArn
    ? aws('ADMIN_SECRET_ARN').secretReader(config.region, config.adminSecretArn)
    : undefined;
  const signIn = config.oidc && new OidcClient(config.oidc, oidcClientSource(config.oidc, config.region, aws));
  const rowSpool = config.kmsKeyId
    ? new LogRowSpool(log)
    : new FileRowSpool(join(config.dataDir, 'row-spool.jsonl'), log);
  const usageStats = statsFold(doc, tables.usageStats, log);
  const budgets = new DynamoBudgetStore(doc, tables.accounts, tables.rateLimits, accountReads);
  // A token with no gate item yet: its token item and own budget, read together in one call.
  const gateSource: GateSource = async (token, now) => {
    const [record, budget] = await Promise.all([
      accounts.getToken(token.accountId, token.tokenId),
      budgets.statusOf(token.accountId, { kind: 'token', tokenId: token.tokenId }, now),
    ]);
    return record && { record, tokenBudget: budget !== undefined };
  };
  const deps: Deps = {
    config,
    log,
    accounts,
    providerKeys: new CachedProviderKeys(
      new DynamoProviderKeyStore(doc, tables.accounts, accountReads),
      () => deps.now(),
      config.providerKeyCacheMs,
    ),
    budgets,
    alerts: new DynamoAlertStore(doc, tables.accounts, webhookSecrets(sealer)),
    audit: new DynamoAuditLog(doc, tables.audit),
    groupRoles: new DynamoGroupRoles(doc, tables.accounts),
    signIn,
    tokenGate: new DynamoTokenGate(doc, tables.rateLimits, config.rateLimitPerMinute, gateSource, undefined, () =>
      deps.now(),
    ),
    budgetHints: new TokenBudgetHints(),
    usageLog,
    usageStats,
    cache: new ProxyCache({
      store: new DynamoResponseCache(doc, tables.cache),
      flights: options.shareInFlightAnswers ? new SingleFlight<CachedResponse>(config.upstreamTimeoutMs) : undefined,
      log,
      // Read through `deps`, so a replaced clock reaches the entries' expiry too.
      now: () => deps.now(),
    }),
    sealer,
    prices: loadPriceTable(config.pricingFile),
    accountPrices: new CachedAccountPrices(new DynamoAccountPriceStore(doc, tables.accounts), () => deps.now()),
    accountSettings: new CachedAccountSettings(new DynamoAccountSettingsStore(doc, tables.accounts), () => deps.now()),
    adminKey: adminKeySource({ key: config.adminKey, readSecret }),
    isStoreOutage,
    preForwardBudget: () => sharedDeadline(PRE_FORWARD_BUDGET_MS),
    background: new BackgroundWork(),
    rowSpool,
    rowWriter: new RowWriter(usageLog, rowSpool),
    now: Date.now,
    awsCredentials: new RuntimeCredentials(config.awsSigning),
    failedSignIns: new FailedSignIns(() => deps.now(), config.failedSignInMaxDelayMs, config.failedSignInsPerMinute),
  };
  return deps;
}

/** Where the sign-in's client id and secret come from: Cognito or Secrets Manager (AWS), or the environment (local). */
function oidcClientSource(
  oidc: NonNullable<Config['oidc']>,
  region: string,
  aws: (variable: string) => AwsAdapters,
): () => Promise<ClientCredentials> {
  if (oidc.cognitoUserPoolId) return aws('OIDC_COGNITO_USER_POOL_ID').cognitoAppClient(region, oidc.cognitoUserPoolId);
  const readSecret = oidc.clientSecretArn
    ? aws('OIDC_CLIENT_SECRET_ARN').secretReader(region, oidc.clientSecretArn)
    : async () => oidc.clientSecret;
  const clientId = oidc.clientId ?? '';
  return async () => {
    const clientSecret = await readSecret();
    if (!clientSecret) throw new Error('The OpenID Connect client secret is empty');
    return { clientId, clientSecret };
  };
}

function statsFold(doc: DocumentClient, table: string, log: Logger): DynamoUsageStats {
  const stats = new DynamoUsageStats(doc, table);
  stats.onFailure = (delta, error) =>
    log.warn('usage rollup not written; its rows will be delivered again', {
      rows: delta?.rows.length ?? 'all of the batch',
      ...describeError(error),
    });
  stats.onSumsNotKept = (error) =>
    log.warn('sums of a past hour or day not kept; the next stats read sums it again', describeError(error));
  return stats;
}

export interface FoldDeps {
  config: Config;
  log: Logger;
  usageStats: UsageStats;
  /** The budgets' spend, folded before the alerts are checked, so they read it. */
  spendFold: SpendFold;
  /** Finds and queues the alerts a batch's spend calls for. */
  budgetAlerts: BudgetAlerts;
  /** Sends a queued alert, away from the fold (the queue's own invocations in AWS, a loop of the local server). */
  alertDelivery: AlertDelivery;
  /** The local server's sender of queued alerts (not started); undefined in AWS, where SQS invokes the function. */
  localAlertLoop?: AlertDeliveryLoop;
}

function spendFold(doc: DocumentClient, table: string, log: Logger): DynamoSpendFold {
  const fold = new DynamoSpendFold(doc, table);
  fold.onFailure = (rows, error) =>
    log.warn('budget spend not written; its rows will be delivered again', { rows, ...describeError(error) });
  return fold;
}

/**
 * The Lambda entry's AWS-only adapters for the stream consumer: SNS and SQS for alerts, KMS for the
 * webhook secrets, S3 for the export bucket.
 */
export interface FoldAdapters {
  alertTopic?: (region: string, topicArn: string) => AlertTopic;
  alertQueue?: (region: string, queueUrl: string) => AlertQueue;
  keyWrapper?: (region: string, keyId: string) => KeyWrapper;
  exportStore?: (region: string, bucket: string) => ObjectStore;
}

/**
 * What the stream consumer needs (Lambda or local): the rollups, the budgets' spend and the budget alerts, nothing of
 * the request path. The Lambda entry gives the SNS adapter (used when `ALERT_TOPIC_ARN` is set) and
 * the KMS one (when `KMS_KEY_ID` is set: it opens the sealed webhook secrets); locally the secrets
 * open with the local key under DATA_DIR, as the server sealed them.
 */
export function buildFoldDeps(
  config: Config = loadConfig(),
  log: Logger = jsonLogger,
  adapters: FoldAdapters = {},
): FoldDeps {
  const doc = createDocumentClient({ region: config.region, endpoint: config.dynamoEndpoint });
  if (config.kmsKeyId && !adapters.keyWrapper)
    throw new Error('Invalid configuration: KMS_KEY_ID is for the Lambda function');
  // Built at the first webhook read: a batch without a webhook to post to touches no key.
  let opened: WebhookSecretSealer | undefined;
  const secrets = (): WebhookSecretSealer =>
    (opened ??= webhookSecrets(
      new EnvelopeSealer(
        config.kmsKeyId && adapters.keyWrapper
          ? adapters.keyWrapper(config.region, config.kmsKeyId)
          : LocalKeyWrapper.fromFile(join(config.dataDir, 'local-master.key')),
      ),
    ));
  const store = new DynamoAlertStore(doc, config.tables.accounts, {
    seal: (accountId, secret) => secrets().seal(accountId, secret),
    open: (accountId, sealed) => secrets().open(accountId, sealed),
  });
  const localAlertQueue =
    config.alertQueueUrl && adapters.alertQueue ? undefined : new DynamoAlertQueue(doc, config.tables.accounts);
  const queue = localAlertQueue ?? adapters.alertQueue!(config.region, config.alertQueueUrl!);
  const accounts = new DynamoAccountStore(
    doc,
    config.tables.accounts,
    config.tables.rateLimits,
    new BatchedGet(doc, config.tables.accounts, ['pk', 'sk']),
  );
  const alertDelivery = new AlertDelivery({
    store,
    queue,
    topic:
      config.alertTopicArn && adapters.alertTopic
        ? adapters.alertTopic(config.region, config.alertTopicArn)
        : undefined,
    webhookPolicy: { allowPrivate: config.alertWebhookAllowPrivate },
    policy: (mayRetry) => retryPolicies.alertDelivery(mayRetry, config.alertRetryFirstMs),
    log,
    writeMetric: (line) => process.stdout.write(`${line}\n`),
    now: Date.now,
  });
  return {
    config,
    log,
    usageStats: statsFold(doc, config.tables.usageStats, log),
    spendFold: spendFold(doc, config.tables.accounts, log),
    budgetAlerts: new BudgetAlerts({
      budgets: new DynamoBudgetStore(doc, config.tables.accounts, config.tables.rateLimits),
      store,
      queue,
      tokenName: async (accountId, tokenId) => (await accounts.getToken(accountId, tokenId))?.name,
      now: Date.now,
    }),
    alertDelivery,
    localAlertLoop: localAlertQueue && new AlertDeliveryLoop(localAlertQueue, alertDelivery, log),
  };
}

/** Webhook signing secrets sealed like provider keys, under a purpose of their own (keys/crypto/sealed-text.ts). */
export const webhookSecrets = (sealer: SecretSealer): WebhookSecretSealer => textSealer(sealer, 'alert-webhook');

/**
 * The local server's own store work, never on the request path: creating tables and reading the
 * usage-logs stream (what DynamoDB Streams and the consumer Lambda do in AWS).
 */
export function buildLocalStoreClients(config: Config): { tables: DynamoDBClient; streams: DynamoDBStreamsClient } {
  const local = Boolean(config.dynamoEndpoint);
  // DynamoDB Local accepts any credentials; elsewhere the SDK's default chain finds them.
  const credentials = local ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined;
  return {
    tables: createAdministrationClient({ region: config.region, endpoint: config.dynamoEndpoint }),
    // A stalled store fails the poller's read instead of holding it: its next round, a second later, is the retry.
    streams: new DynamoDBStreamsClient({
      region: config.region,
      endpoint: config.dynamoEndpoint,
      credentials,
      maxAttempts: 1,
      requestHandler: storeRequestHandler(),
    }),
  };
}
