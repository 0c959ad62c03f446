import * as fs from 'node:fs';
import * as path from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { PROVIDER_CATALOG } from '../../lambda/providers/catalog';
import { TABLES, type TableShape } from '../../lambda/tables';
import { ADMIN_KEY_LENGTH } from '../../lib/constructs/admin-secret';
import { ENCRYPTION_CONTEXT_CONDITION } from '../../lib/constructs/provider-key';
import { ESM_REQUIRE_BANNER } from '../../lib/constructs/proxy-function';
import { tableOutputName } from '../../lib/names';
import { DEFAULTS } from '../../lib/settings';
import { CONSUMER_MEMORY_MB, STREAM_MAPPING } from '../../lib/constructs/stats-consumer';
import {
  actionsOf,
  policyStatements,
  roleStatements,
  single,
  synthesize,
  type SynthesizedStack,
} from './support/synth';

const SHAPES = Object.values(TABLES) as TableShape[];

// One bundled synthesis for the whole file: bundling is the slow part.
let synth: SynthesizedStack;
beforeAll(() => {
  synth = synthesize();
});
afterAll(() => synth?.cleanup());

const table = (shape: TableShape) =>
  single(synth.template, 'AWS::DynamoDB::Table', (p) => p.TableName === `dev-ai-usage-proxy-${shape.logicalName}`);
const fn = () =>
  single(synth.template, 'AWS::Lambda::Function', (p) => p.FunctionName === 'dev-ai-usage-proxy-function');
const consumer = () =>
  single(synth.template, 'AWS::Lambda::Function', (p) => p.FunctionName === 'dev-ai-usage-proxy-stats-consumer');
const roleOf = (f: { Properties: Record<string, unknown> }) =>
  (f.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
const key = () =>
  single(synth.template, 'AWS::KMS::Key', (p) => String(p.Description).startsWith('Wraps the data keys'));
const secret = () => single(synth.template, 'AWS::SecretsManager::Secret');
const alarmTopic = () => single(synth.template, 'AWS::SNS::Topic', (p) => p.TopicName === 'dev-ai-usage-proxy-alarms');
const alertTopic = () =>
  single(synth.template, 'AWS::SNS::Topic', (p) => p.TopicName === 'dev-ai-usage-proxy-budget-alerts');

describe('DynamoDB tables, built from lambda/tables.ts', () => {
  it('has exactly one table per shape', () => {
    synth.template.resourceCountIs('AWS::DynamoDB::Table', SHAPES.length);
  });

  it.each(SHAPES.map((s) => [s.logicalName, s] as const))('%s: keys, TTL, on-demand billing', (_name, shape) => {
    const { Properties: p } = table(shape);
    const keySchema = [{ AttributeName: shape.partitionKey, KeyType: 'HASH' }];
    const attributes = [{ AttributeName: shape.partitionKey, AttributeType: 'S' }];
    if (shape.sortKey) {
      keySchema.push({ AttributeName: shape.sortKey.name, KeyType: 'RANGE' });
      attributes.push({ AttributeName: shape.sortKey.name, AttributeType: shape.sortKey.type });
    }
    expect(p.KeySchema).toEqual(keySchema);
    expect(p.AttributeDefinitions).toEqual(attributes);
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
    expect(p.TimeToLiveSpecification).toEqual(
      shape.ttlAttribute ? { AttributeName: shape.ttlAttribute, Enabled: true } : undefined,
    );
    // AWS-owned key (free); provider keys are envelope-encrypted under our own key before they get here.
    expect(p.SSESpecification).toEqual({ SSEEnabled: false });
  });

  it('accounts: monthly budget spend counters expire through TTL on expires_at (test/integration/store/budget-store.test.ts checks the attribute written)', () => {
    expect(table(TABLES.accounts).Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expires_at',
      Enabled: true,
    });
  });

  it.each(SHAPES.map((s) => [s.logicalName, s] as const))(
    '%s: durable data has PITR, deletion protection and survives the stack',
    (_name, shape) => {
      const t = table(shape);
      if (shape.durable) {
        expect(t.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
        expect(t.Properties.DeletionProtectionEnabled).toBe(true);
        expect(t.DeletionPolicy).toBe('Retain');
      } else {
        expect(t.Properties.PointInTimeRecoverySpecification).toBeUndefined();
        expect(t.Properties.DeletionProtectionEnabled).toBe(false);
        expect(t.DeletionPolicy).toBe('Delete');
      }
    },
  );

  it('gives the function each physical table name under the variable the runtime reads', () => {
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    for (const shape of SHAPES) expect(env[shape.envVar]).toEqual({ Ref: table(shape).logicalId });
  });

  it('grants the proxy item-level access on each table by ARN, nothing table-wide or wildcarded (the actions: least-privilege.test.ts)', () => {
    const dynamo = roleStatements(synth.template, roleOf(fn())).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('dynamodb:')),
    );
    const granted = dynamo.flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]));
    expect(granted).toHaveLength(SHAPES.length);
    expect(granted).toEqual(
      expect.arrayContaining(SHAPES.map((shape) => ({ 'Fn::GetAtt': [table(shape).logicalId, 'Arn'] }))),
    );
    for (const s of dynamo)
      for (const action of actionsOf(s))
        expect(action).toMatch(/^dynamodb:(GetItem|BatchGetItem|Query|PutItem|UpdateItem|DeleteItem|BatchWriteItem)$/);
  });

  it('streams new usage rows (NEW_IMAGE) and no other table', () => {
    for (const shape of SHAPES)
      expect(table(shape).Properties.StreamSpecification).toEqual(
        shape.stream ? { StreamViewType: shape.stream } : undefined,
      );
    expect(SHAPES.filter((shape) => shape.stream).map((shape) => shape.logicalName)).toEqual(['usage-logs']);
  });
});

describe('KMS key for provider keys', () => {
  it('rotates, and outlives the stack like the table holding its ciphertexts', () => {
    expect(key().Properties.EnableKeyRotation).toBe(true);
    expect(key().DeletionPolicy).toBe('Retain');
    synth.template.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/dev-ai-usage-proxy-provider-keys' });
  });

  it('grants exactly Decrypt and GenerateDataKey, on this key, bound to the account/provider encryption context', () => {
    const kms = roleStatements(synth.template, roleOf(fn())).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('kms:')),
    );
    const keyArn = { 'Fn::GetAtt': [key().logicalId, 'Arn'] };
    const condition = {
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['account_id', 'provider'] },
      Null: { 'kms:EncryptionContext:account_id': 'false', 'kms:EncryptionContext:provider': 'false' },
    };
    expect(ENCRYPTION_CONTEXT_CONDITION).toEqual(condition);
    expect(kms).toEqual([
      { Sid: 'OpenStoredProviderKeys', Effect: 'Allow', Action: 'kms:Decrypt', Resource: keyArn, Condition: condition },
      {
        Sid: 'SealNewProviderKeys',
        Effect: 'Allow',
        Action: 'kms:GenerateDataKey',
        Resource: keyArn,
        Condition: condition,
      },
    ]);
  });

  it('hands the key to the runtime', () => {
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [key().logicalId, 'Arn'] });
  });
});

describe('admin key secret', () => {
  it('is generated at deploy time as a plain string of letters and digits', () => {
    const generate = secret().Properties.GenerateSecretString as Record<string, unknown>;
    expect(generate).toEqual({ PasswordLength: ADMIN_KEY_LENGTH, ExcludePunctuation: true, IncludeSpace: false });
    expect(ADMIN_KEY_LENGTH).toBeGreaterThanOrEqual(40);
    // No JSON template: the SecretString is the key itself.
    expect(generate.SecretStringTemplate).toBeUndefined();
    expect(secret().Properties.SecretString).toBeUndefined();
  });

  it('is readable by the function and nothing more', () => {
    const statements = policyStatements(synth.template).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('secretsmanager:')),
    );
    expect(statements).toEqual([
      {
        Sid: 'ReadAdminKey',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: { Ref: secret().logicalId },
      },
    ]);
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.ADMIN_SECRET_ARN).toEqual({ Ref: secret().logicalId });
  });
});

describe('function', () => {
  it('runs Node 22+ on arm64 with the chosen memory, a timeout well past the upstream limit, and a concurrency cap', () => {
    const p = fn().Properties;
    expect(Number(String(p.Runtime).match(/^nodejs(\d+)\.x$/)?.[1])).toBeGreaterThanOrEqual(22);
    expect(p.Architectures).toEqual(['arm64']);
    expect(p.MemorySize).toBe(256);
    expect(p.Timeout).toBe(900);
    expect(p.Handler).toBe('index.handler');
    // A cap by default (docs/deploy.md, "Concurrency cap and timeout").
    expect(p.ReservedConcurrentExecutions).toBe(DEFAULTS.reservedConcurrency);
  });

  it('gets the runtime settings and nothing secret in its environment', () => {
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject({ CORS_ALLOWED_ORIGINS: '', UPSTREAM_TIMEOUT_MS: '30000', RATE_LIMIT_PER_MINUTE: '100' });
    expect(Number(env.UPSTREAM_TIMEOUT_MS) / 1000).toBeLessThan(Number(fn().Properties.Timeout) / 10);
    expect(env.LOG_RETENTION_DAYS).toBeUndefined();
    expect(env.NODE_OPTIONS).toBeUndefined();
    expect(env.ADMIN_KEY).toBeUndefined();
  });

  it('sets no provider base URL: in AWS every catalog provider uses its default (docs/providers.md)', () => {
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(env).length).toBeGreaterThan(0);
    for (const provider of PROVIDER_CATALOG) expect(env[provider.upstream.envVar]).toBeUndefined();
  });

  it('logs JSON lines to its own log group with a retention', () => {
    const logGroupId = (fn().Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    const logs = {
      logicalId: logGroupId,
      ...(synth.template.toJSON().Resources[logGroupId] as { Properties: Record<string, unknown> }),
    };
    expect(logs.Properties.RetentionInDays).toBe(30);
    expect(fn().Properties.LoggingConfig).toEqual({
      LogFormat: 'JSON',
      ApplicationLogLevel: 'INFO',
      SystemLogLevel: 'WARN',
      LogGroup: { Ref: logs.logicalId },
    });
  });

  it('has a role with no managed policies and no wildcard resources', () => {
    const role = single(synth.template, 'AWS::IAM::Role', (p) => String(p.Description).endsWith('-function'));
    expect(role.logicalId).toBe(roleOf(fn()));
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = roleStatements(synth.template, role.logicalId);
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) {
      expect(JSON.stringify(s.Resource)).not.toContain('*');
      expect(actionsOf(s).join(' ')).not.toContain('*');
    }
  });

  it('is bundled as minified ESM with the SDK and the dashboard inside and a require shim', () => {
    const code = fn().Properties.Code as { S3Key: string };
    const assetDir = path.join(synth.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    expect(fs.readdirSync(assetDir)).toEqual(['index.mjs']);
    const bundle = fs.readFileSync(path.join(assetDir, 'index.mjs'), 'utf8');
    expect(bundle.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    expect(bundle).toMatch(/export\s*\{[^}]*\bas handler\b/);
    // Statement-level imports are the only way an ESM bundle reaches outside itself: Node built-ins only.
    const imported = [
      ...bundle.matchAll(
        /(?:^|[;\n])\s*import\s*(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s*[\w$]+)?\s*(?:from\s*)?["']([^"']+)["']/g,
      ),
    ].map((m) => m[1]);
    expect(imported.filter((specifier) => !specifier.startsWith('node:'))).toEqual([]);
    // The pinned SDK clients are inside: their service identifiers are in the code.
    for (const marker of ['DynamoDB_20120810', 'TrentService', 'secretsmanager'])
      expect(bundle.includes(marker)).toBe(true);
    // The dashboard and version that scripts/build.mjs injects are injected here too.
    expect(bundle.includes('virtual:dashboard-assets')).toBe(false);
    expect(bundle.includes('<!doctype html>')).toBe(true);
    expect(bundle.includes('__PROXY_VERSION__')).toBe(false);
    // A regression guard, not a target.
    expect(Buffer.byteLength(bundle)).toBeLessThan(3 * 1024 * 1024);
  });

  it('leaves nothing of the bundling step behind in the cloud assembly', () => {
    expect(fs.readdirSync(synth.outdir).filter((name) => name.includes('dashboard-assets'))).toEqual([]);
  });
});

describe('stats consumer (rollups from the usage-logs stream)', () => {
  it('runs Node 22+ on arm64 with its own small memory and a bounded timeout', () => {
    const p = consumer().Properties;
    expect(Number(String(p.Runtime).match(/^nodejs(\d+)\.x$/)?.[1])).toBeGreaterThanOrEqual(22);
    expect(p.Architectures).toEqual(['arm64']);
    expect(p.MemorySize).toBe(CONSUMER_MEMORY_MB);
    expect(p.Timeout).toBe(60);
    expect((p.Environment as { Variables: Record<string, unknown> }).Variables).toEqual({
      [TABLES.usageStats.envVar]: { Ref: table(TABLES.usageStats).logicalId },
      [TABLES.accounts.envVar]: { Ref: table(TABLES.accounts).logicalId },
      ALERT_TOPIC_ARN: { Ref: alertTopic().logicalId },
      USAGE_EXPORT_BUCKET: { Ref: single(synth.template, 'AWS::S3::Bucket').logicalId },
      KMS_KEY_ID: {
        'Fn::GetAtt': [synth.stack.getLogicalId(synth.stack.providerKeys.key.node.defaultChild as never), 'Arn'],
      },
    });
  });

  it('reads the stream in batches, reports failed rows, bisects, retries for a bounded time and sends what it gives up on to a dead-letter queue', () => {
    const mapping = single(synth.template, 'AWS::Lambda::EventSourceMapping');
    const queue = single(synth.template, 'AWS::SQS::Queue');
    expect(mapping.Properties).toEqual({
      FunctionName: { Ref: consumer().logicalId },
      EventSourceArn: { 'Fn::GetAtt': [table(TABLES.usageLogs).logicalId, 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: STREAM_MAPPING.batchSize,
      MaximumBatchingWindowInSeconds: STREAM_MAPPING.maxBatchingWindow.toSeconds(),
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: STREAM_MAPPING.retryAttempts,
      MaximumRecordAgeInSeconds: STREAM_MAPPING.maxRecordAge.toSeconds(),
      ParallelizationFactor: 1,
      TumblingWindowInSeconds: STREAM_MAPPING.tumblingWindow.toSeconds(),
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue.logicalId, 'Arn'] } } },
    });
    expect(queue.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
  });

  it('may read that one stream, update rollup items, read budgets, write alert items and budget spend, and send to its queue, nothing more', () => {
    const statements = roleStatements(synth.template, roleOf(consumer()));
    const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
    const streamArn = { 'Fn::GetAtt': [table(TABLES.usageLogs).logicalId, 'StreamArn'] };
    expect(dynamo).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
          Resource: streamArn,
        }),
        expect.objectContaining({ Action: 'dynamodb:ListStreams', Resource: '*' }),
        expect.objectContaining({
          Action: 'dynamodb:UpdateItem',
          Resource: { 'Fn::GetAtt': [table(TABLES.usageStats).logicalId, 'Arn'] },
        }),
        expect.objectContaining({
          Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
          Resource: { 'Fn::GetAtt': [table(TABLES.accounts).logicalId, 'Arn'] },
        }),
        // Writes to the accounts table only in the alert and budget subjects' partitions (docs/deploy.md, "Permissions").
        expect.objectContaining({
          Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
          Resource: { 'Fn::GetAtt': [table(TABLES.accounts).logicalId, 'Arn'] },
          Condition: {
            'ForAllValues:StringLike': {
              'dynamodb:LeadingKeys': ['ACCOUNT#*#ALERTS', 'ACCOUNT#*#G#*', 'ACCOUNT#*#R#*', 'ACCOUNT#*#T#*'],
            },
          },
        }),
      ]),
    );
    expect(dynamo).toHaveLength(5);
    // The only "*": ListStreams, which has no resource-level permission, and the export's objects under usage/.
    for (const s of statements)
      if (JSON.stringify(s.Resource).includes('*'))
        expect(
          s.Action === 'dynamodb:ListStreams' ||
            (s.Action === 's3:PutObject' && JSON.stringify(s.Resource).endsWith('/usage/*"]]}')),
        ).toBe(true);
  });

  it('is its own small bundle: no dashboard, no Secrets Manager client (KMS only to open webhook secrets), only Node built-ins imported', () => {
    const code = consumer().Properties.Code as { S3Key: string };
    const bundle = fs.readFileSync(
      path.join(synth.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs'),
      'utf8',
    );
    expect(bundle.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    expect(bundle).toMatch(/export\s*\{[^}]*\bas handler\b/);
    const imported = [
      ...bundle.matchAll(
        /(?:^|[;\n])\s*import\s*(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s*[\w$]+)?\s*(?:from\s*)?["']([^"']+)["']/g,
      ),
    ].map((m) => m[1]);
    expect(imported.filter((specifier) => !specifier.startsWith('node:'))).toEqual([]);
    expect(bundle.includes('DynamoDB_20120810')).toBe(true);
    for (const absent of ['<!doctype html>', 'secretsmanager']) expect(bundle.includes(absent)).toBe(false);
  });
});

describe('function URL', () => {
  it('streams responses, leaves auth to the app and CORS to the app, and is served from the live alias', () => {
    const url = single(synth.template, 'AWS::Lambda::Url');
    expect(url.Properties).toEqual({
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      TargetFunctionArn: { 'Fn::GetAtt': [fn().logicalId, 'Arn'] },
      Qualifier: 'live',
    });
  });

  it('is invokable by anyone only through the URL', () => {
    synth.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      FunctionUrlAuthType: 'NONE',
      Principal: '*',
    });
    synth.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      InvokedViaFunctionUrl: true,
      Principal: '*',
    });
    synth.template.resourceCountIs('AWS::Lambda::Permission', 2);
  });
});

describe('alarms', () => {
  it('watch function errors, throttles and p99 duration', () => {
    const fnRef = [{ Name: 'FunctionName', Value: { Ref: fn().logicalId } }];
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-function-errors',
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Dimensions: fnRef,
      Statistic: 'Sum',
      Threshold: 1,
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-function-throttles',
      MetricName: 'Throttles',
      Dimensions: fnRef,
      Threshold: 1,
    });
    // A refused usage row's only copy is its log line: a metric filter counts them.
    synth.template.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern: '{ $.message = "usage row spooled" }',
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-spooled-usage-rows',
      Namespace: 'AiUsageProxy',
      Threshold: 1,
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-function-p99-duration',
      MetricName: 'Duration',
      ExtendedStatistic: 'p99',
      Dimensions: fnRef,
      Threshold: 60_000,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
  });

  it.each(SHAPES.map((s) => [s.logicalName, s] as const))('watch DynamoDB throttles on %s', (_name, shape) => {
    const tableRef = [{ Name: 'TableName', Value: { Ref: table(shape).logicalId } }];
    const metric = (name: string) =>
      Match.objectLike({
        MetricStat: Match.objectLike({
          Metric: { MetricName: name, Namespace: 'AWS/DynamoDB', Dimensions: tableRef },
          Stat: 'Sum',
        }),
      });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `dev-ai-usage-proxy-${shape.logicalName}-throttles`,
      Threshold: 1,
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'FILL(reads, 0) + FILL(writes, 0)' }),
        metric('ReadThrottleEvents'),
        metric('WriteThrottleEvents'),
      ]),
    });
  });

  it('watch the stats consumer: repeated failures, and any batch in its dead-letter queue', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-stats-consumer-errors',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: consumer().logicalId } }],
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-stats-dead-letters',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 1,
    });
  });

  it("treat no traffic as fine and notify the stack's alarm topic when they fire and when they clear", () => {
    const alarms = Object.values(synth.template.findResources('AWS::CloudWatch::Alarm')) as {
      Properties: Record<string, unknown>;
    }[];
    // Six in ProxyAlarms, one per table, and the failed-authentications alarm (its own construct).
    expect(alarms).toHaveLength(7 + SHAPES.length);
    const topic = alarmTopic();
    for (const a of alarms) {
      expect(a.Properties.TreatMissingData).toBe('notBreaching');
      expect(a.Properties.AlarmActions).toEqual([{ Ref: topic.logicalId }]);
      expect(a.Properties.OKActions).toEqual([{ Ref: topic.logicalId }]);
    }
  });

  it("the topic is encrypted with its own rotating key, refuses plain HTTP, and admits only this stage's alarms of this account", () => {
    const topic = alarmTopic();
    const alarmKey = single(synth.template, 'AWS::KMS::Key', (p) =>
      String(p.Description).startsWith('Encrypts the alarm notifications'),
    );
    expect(topic.Properties).toMatchObject({
      TopicName: 'dev-ai-usage-proxy-alarms',
      KmsMasterKeyId: { 'Fn::GetAtt': [alarmKey.logicalId, 'Arn'] },
    });
    expect(alarmKey.Properties.EnableKeyRotation).toBe(true);
    const policy = single(synth.template, 'AWS::SNS::TopicPolicy', (p) =>
      JSON.stringify(p.Topics).includes(topic.logicalId),
    ).Properties.PolicyDocument as {
      Statement: Record<string, unknown>[];
    };
    expect(policy.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        expect.objectContaining({
          Sid: 'CloudWatchAlarmsPublish',
          Effect: 'Allow',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: 'sns:Publish',
        }),
      ]),
    );
    const publish = policy.Statement.find((st) => st.Sid === 'CloudWatchAlarmsPublish')!;
    expect(JSON.stringify(publish.Condition)).toContain(':alarm:dev-ai-usage-proxy-*');
    expect(JSON.stringify(publish.Condition)).toContain('aws:SourceAccount');
    // No e-mail unless one is given.
    synth.template.resourceCountIs('AWS::SNS::Subscription', 0);
    synth.template.hasOutput('AlarmTopicArn', { Value: { Ref: topic.logicalId } });
  });
});

describe('outputs', () => {
  it('give the proxy base, the dashboard, the admin secret and every table name', () => {
    const urlId = single(synth.template, 'AWS::Lambda::Url').logicalId;
    const functionUrl = { 'Fn::GetAtt': [urlId, 'FunctionUrl'] };
    synth.template.hasOutput('ProxyBaseUrl', { Value: { 'Fn::Join': ['', [functionUrl, 'api/proxy']] } });
    synth.template.hasOutput('DashboardUrl', { Value: functionUrl });
    synth.template.hasOutput('AdminSecretArn', { Value: { Ref: secret().logicalId } });
    for (const shape of SHAPES)
      synth.template.hasOutput(tableOutputName(shape.logicalName), { Value: { Ref: table(shape).logicalId } });
  });
});

describe('budget alert topic (docs/alerts.md)', () => {
  it('is encrypted with its own rotating key, refuses plain HTTP, and only the stream consumer may publish to it', () => {
    const topic = alertTopic();
    const alertKey = single(synth.template, 'AWS::KMS::Key', (p) =>
      String(p.Description).startsWith('Encrypts the budget alerts'),
    );
    expect(topic.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [alertKey.logicalId, 'Arn'] });
    expect(alertKey.Properties.EnableKeyRotation).toBe(true);
    const policy = single(synth.template, 'AWS::SNS::TopicPolicy', (p) =>
      JSON.stringify(p.Topics).includes(topic.logicalId),
    ).Properties.PolicyDocument as { Statement: Record<string, unknown>[] };
    expect(policy.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ]),
    );
    const publishers = policyStatements(synth.template).filter((s) => actionsOf(s).includes('sns:Publish'));
    expect(publishers).toEqual([expect.objectContaining({ Resource: { Ref: topic.logicalId } })]);
    expect(roleStatements(synth.template, roleOf(consumer()))).toEqual(
      expect.arrayContaining([expect.objectContaining({ Action: 'sns:Publish', Resource: { Ref: topic.logicalId } })]),
    );
    synth.template.hasOutput('BudgetAlertTopicArn', { Value: { Ref: topic.logicalId } });
  });
});
