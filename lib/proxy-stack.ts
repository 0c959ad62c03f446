import { CfnOutput, Fn, Stack, Token, Validations, type StackProps } from 'aws-cdk-lib';
import { PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import { FunctionUrlAuthType, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { PROXY_TABLE_CALLS, tableGrants } from '../lambda/store/table-calls';
import { AdminSecret } from './constructs/admin-secret';
import { AlertTopic } from './constructs/alert-topic';
import { ProxyAlarms } from './constructs/alarms';
import { FailedSignInAlarm } from './constructs/failed-sign-in-alarm';
import { ManagedInstances } from './constructs/managed-instances';
import { ProviderKeyEncryption } from './constructs/provider-key';
import { ProxyFunction } from './constructs/proxy-function';
import { StatsConsumer } from './constructs/stats-consumer';
import { ProxyTables } from './constructs/tables';
import { SignInPool } from './constructs/sign-in-pool';
import { UsageDashboard } from './constructs/usage-dashboard';
import { UsageExport } from './constructs/usage-export';
import { namePrefix, tableOutputName } from './names';
import { bedrockGrantArns, type DeploySettings } from './settings';

export interface ProxyStackProps extends StackProps {
  settings: DeploySettings;
  /** Directory holding package-lock.json and lambda/; the function is bundled from there. */
  projectRoot: string;
}

export class ProxyStack extends Stack {
  readonly proxyFunction: ProxyFunction;
  readonly tables: ProxyTables;
  readonly statsConsumer: StatsConsumer;
  readonly providerKeys: ProviderKeyEncryption;
  readonly adminSecret: AdminSecret;
  readonly settings: DeploySettings;
  readonly alarms: ProxyAlarms;
  readonly alertTopic: AlertTopic;
  readonly usageDashboard: UsageDashboard;
  readonly usageExport: UsageExport;
  /** Set with `-c managedInstances=true`. */
  readonly managedInstances?: ManagedInstances;
  /** `-c cognitoSignIn=true`: the user pool people sign in with (docs/people.md). */
  readonly signInPool?: SignInPool;

  constructor(scope: Construct, id: string, props: ProxyStackProps) {
    super(scope, id, props);
    const { settings } = props;
    this.settings = settings;
    const prefix = namePrefix(settings.stage);

    this.tables = new ProxyTables(this, 'Tables', { namePrefix: prefix });
    const providerKeys = (this.providerKeys = new ProviderKeyEncryption(this, 'ProviderKeys', {
      stage: settings.stage,
    }));
    const adminSecret = (this.adminSecret = new AdminSecret(this, 'Admin', { stage: settings.stage }));

    this.proxyFunction = new ProxyFunction(this, 'Proxy', {
      projectRoot: props.projectRoot,
      functionName: `${prefix}function`,
      memoryMb: settings.memoryMb,
      logRetention: settings.functionLogRetention,
      reservedConcurrency: settings.reservedConcurrency,
      provisionedConcurrency: settings.provisionedConcurrency,
      environment: {
        KMS_KEY_ID: providerKeys.key.keyArn,
        ADMIN_SECRET_ARN: adminSecret.secret.secretArn,
        // The app owns CORS (see the URL below), so its allowlist is the only one.
        CORS_ALLOWED_ORIGINS: settings.corsAllowedOrigins.join(','),
        UPSTREAM_TIMEOUT_MS: String(settings.upstreamTimeoutMs),
        RATE_LIMIT_PER_MINUTE: String(settings.rateLimitPerMinute),
        // Bedrock's region, for the role's signature and for a saved Bedrock API key alike (docs/bedrock.md).
        BEDROCK_REGION: settings.bedrockRegion,
        ...(settings.logRetentionDays ? { LOG_RETENTION_DAYS: String(settings.logRetentionDays) } : {}),
      },
    });
    if (settings.managedInstances) {
      this.managedInstances = new ManagedInstances(this, 'ManagedInstances', {
        namePrefix: prefix,
        settings: settings.managedInstances,
        logRetention: settings.functionLogRetention,
      });
      this.managedInstances.addFunction(this.proxyFunction.fn, settings.managedInstances.concurrency);
    }
    const { role } = this.proxyFunction;
    // Exactly the actions the code sends, per table: rows are put and read, never updated or deleted.
    const proxyGrants = tableGrants(PROXY_TABLE_CALLS);
    for (const { id: tableId, shape, table } of this.tables.all) {
      this.proxyFunction.bindTable(
        table,
        shape,
        proxyGrants.filter((grant) => grant.table === tableId),
      );
    }
    providerKeys.grantEnvelopeUse(role);
    adminSecret.grantRead(role);
    if (settings.bedrockAccess) grantBedrock(role, bedrockGrantArns(settings, this.account));

    this.alertTopic = new AlertTopic(this, 'BudgetAlerts', {
      namePrefix: prefix,
      existingTopicArn: settings.alertTopicArn,
      email: settings.alertEmail,
    });
    this.usageExport = new UsageExport(this, 'UsageExport', {
      namePrefix: prefix,
      retentionDays: settings.usageExportDays,
    });
    // Rollups are folded, budget alerts sent and rows exported for Athena from the usage-logs stream by a second function, off the request path.
    this.statsConsumer = new StatsConsumer(this, 'StatsConsumer', {
      projectRoot: props.projectRoot,
      functionName: `${prefix}stats-consumer`,
      windowSeconds: settings.consumerWindowSeconds,
      logRetention: settings.functionLogRetention,
      usageLogs: this.tables.entry('usageLogs'),
      usageStats: this.tables.entry('usageStats'),
      accounts: this.tables.entry('accounts'),
      audit: this.tables.entry('audit'),
      alertTopic: this.alertTopic,
      usageExport: this.usageExport,
      providerKeys,
    });

    // One URL serves the proxy (/api/proxy/...), the management API (/api/...) and the dashboard (/).
    // Auth NONE: the app authenticates proxy tokens and the admin key itself; IAM auth would make
    // every SDK sign requests with AWS credentials. No `cors` here: the app answers CORS itself,
    // because Function URL CORS can't allow "localhost on any port" (origins are exact, no port
    // wildcard) and, if both layers answered, browsers would see duplicate Access-Control headers.
    const url = this.proxyFunction.target.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.RESPONSE_STREAM,
    });

    this.signInPool = configureSignIn(this, settings, url.url, prefix);

    this.alarms = new ProxyAlarms(this, 'Alarms', {
      namePrefix: prefix,
      fn: this.proxyFunction.fn,
      logGroup: this.proxyFunction.logGroup,
      tables: this.tables.all.map(({ shape, table }) => ({ logicalName: shape.logicalName, table })),
      statsConsumer: this.statsConsumer,
      alarmTopicArn: settings.alarmTopicArn,
      alarmEmail: settings.alarmEmail,
    });
    new FailedSignInAlarm(this, 'FailedSignIns', {
      namePrefix: prefix,
      logGroup: this.proxyFunction.logGroup,
      topic: this.alarms.topic,
    });

    this.usageDashboard = new UsageDashboard(this, 'Usage', {
      namePrefix: prefix,
      alarmTopic: this.alarms.topic,
      spendAlarmUsdPerHour: settings.spendAlarmUsdPerHour,
    });

    // The URL ends with "/", so the paths are appended without one.
    new CfnOutput(this, 'ProxyBaseUrl', {
      value: Fn.join('', [url.url, 'api/proxy']),
      description: 'Base address for the SDKs (provider A: as is; others: + /prov-x/v1)',
    });
    new CfnOutput(this, 'DashboardUrl', { value: url.url, description: 'Dashboard and management API' });
    new CfnOutput(this, 'AdminSecretArn', {
      value: adminSecret.secret.secretArn,
      description: 'Secrets Manager secret holding the admin API key',
    });
    new CfnOutput(this, 'FunctionName', { value: this.proxyFunction.fn.functionName });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.alarms.topic.topicArn,
      description: 'SNS topic every alarm notifies',
    });
    new CfnOutput(this, 'UsageExportBucketName', {
      value: this.usageExport.bucket.bucketName,
      description: 'S3 bucket the usage rows are exported to, for Athena',
    });
    new CfnOutput(this, 'UsageWorkGroup', {
      value: this.usageExport.workGroup.ref,
      description: 'Athena workgroup holding the named usage queries',
    });
    new CfnOutput(this, 'BudgetAlertTopicArn', {
      value: this.alertTopic.topic.topicArn,
      description: 'SNS topic every budget alert is published to',
    });
    for (const { shape, table } of this.tables.all) {
      new CfnOutput(this, tableOutputName(shape.logicalName), {
        value: table.tableName,
        description: `DynamoDB table ${shape.logicalName}`,
      });
    }
  }
}

/**
 * Sign-in to the dashboard (docs/people.md): the stack's own Cognito user pool, whose app client the
 * function reads from Cognito (the client names the URL, so the function cannot name the client), or
 * the team's issuer, its client secret read from Secrets Manager. Each grant is exactly what it reads.
 */
function configureSignIn(
  stack: ProxyStack,
  settings: DeploySettings,
  functionUrl: string,
  prefix: string,
): SignInPool | undefined {
  const { fn, role } = stack.proxyFunction;
  if (settings.signIn?.kind === 'cognito') {
    const signIn = new SignInPool(stack, 'SignIn', { namePrefix: prefix, functionUrl });
    fn.addEnvironment('OIDC_COGNITO_USER_POOL_ID', signIn.pool.userPoolId);
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['cognito-idp:DescribeUserPoolClient', 'cognito-idp:ListUserPoolClients'],
        resources: [signIn.pool.userPoolArn],
      }),
    );
    return signIn;
  }
  if (settings.signIn?.kind === 'oidc') {
    fn.addEnvironment('OIDC_ISSUER', settings.signIn.issuer);
    fn.addEnvironment('OIDC_CLIENT_ID', settings.signIn.clientId);
    fn.addEnvironment('OIDC_CLIENT_SECRET_ARN', settings.signIn.clientSecretArn);
    if (settings.signIn.groupsClaim) fn.addEnvironment('OIDC_GROUPS_CLAIM', settings.signIn.groupsClaim);
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [settings.signIn.clientSecretArn] }),
    );
  }
  return undefined;
}

/**
 * Amazon Bedrock with the function's own role (docs/bedrock.md): the two invoke actions and nothing
 * else, on the configured model and inference-profile ARNs. Wildcards there are the operator's
 * choice, so their IAM5 findings are acknowledged by name.
 */
function grantBedrock(role: IRole, modelArns: string[]): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
      resources: modelArns,
    }),
  );
  for (const arn of modelArns.filter((resource) => resource.includes('*'))) {
    Validations.of(role).acknowledge({
      // cdk-nag names the stack's account as `<AWS::AccountId>`.
      id: `AwsSolutions-IAM5[Resource::${Token.isUnresolved(arn) ? (Stack.of(role).resolve(arn) as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : '<AWS::AccountId>')).join('') : arn}]`,
      reason: `Bedrock's two invoke actions on ${arn.includes('foundation-model') ? 'foundation models' : 'inference profiles'} the operator configured (bedrockModelArns; docs/bedrock.md): a cross-region inference profile routes to the model in several regions.`,
    });
  }
}
