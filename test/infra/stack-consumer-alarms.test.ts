// The stack's stream consumer, its alarms and the budget-alert topic; the tables, key, secret, function and URL: stack.test.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { TABLES, type TableShape } from '../../lambda/store/tables';
import { ESM_REQUIRE_BANNER } from '../../lib/constructs/proxy-function';
import {
  ALERT_QUEUE_MAPPING,
  AUDIT_STREAM_MAPPING,
  CONSUMER_MEMORY_MB,
  STREAM_MAPPING,
} from '../../lib/constructs/stats-consumer';
import { DEFAULTS } from '../../lib/settings';
import { actionsOf, policyStatements, roleStatements, single } from './support/synth';
import { defaultStack } from './support/stack-resources';

const SHAPES = Object.values(TABLES) as TableShape[];

const { stack, table, fn, consumer, roleOf, alarmTopic, alertTopic } = defaultStack();
/** A table's stream, as the template refers to it. */
const streamOf = (shape: TableShape) => ({ 'Fn::GetAtt': [table(shape).logicalId, 'StreamArn'] });

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
      [TABLES.audit.envVar]: { Ref: table(TABLES.audit).logicalId },
      ALERT_TOPIC_ARN: { Ref: alertTopic().logicalId },
      ALERT_QUEUE_URL: {
        Ref: stack.synth.stack.getLogicalId(stack.synth.stack.statsConsumer.alertQueue.node.defaultChild as never),
      },
      USAGE_EXPORT_BUCKET: { Ref: single(stack.synth.template, 'AWS::S3::Bucket').logicalId },
      KMS_KEY_ID: {
        'Fn::GetAtt': [
          stack.synth.stack.getLogicalId(stack.synth.stack.providerKeys.key.node.defaultChild as never),
          'Arn',
        ],
      },
    });
  });

  it('reads the stream in batches, reports failed rows, bisects, retries for a bounded time and sends what it gives up on to a dead-letter queue', () => {
    const logicalId = (queue: { node: { defaultChild?: unknown } }) =>
      stack.synth.stack.getLogicalId(queue.node.defaultChild as never);
    const deadLetters = logicalId(stack.synth.stack.statsConsumer.deadLetters);
    const mapping = single(
      stack.synth.template,
      'AWS::Lambda::EventSourceMapping',
      (p) => JSON.stringify(p.EventSourceArn) === JSON.stringify(streamOf(TABLES.usageLogs)),
    );
    const queue = {
      logicalId: deadLetters,
      Properties: (stack.synth.template.findResources('AWS::SQS::Queue') as Record<string, { Properties: object }>)[
        deadLetters
      ].Properties,
    };
    expect(mapping.Properties).toEqual({
      FunctionName: { Ref: consumer().logicalId },
      EventSourceArn: streamOf(TABLES.usageLogs),
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: STREAM_MAPPING.batchSize,
      MaximumBatchingWindowInSeconds: DEFAULTS.consumerWindowSeconds,
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

  it('exports the audit stream: whole batches again on failure, for a bounded time, then to the same dead-letter queue', () => {
    const deadLetters = stack.synth.stack.getLogicalId(
      stack.synth.stack.statsConsumer.deadLetters.node.defaultChild as never,
    );
    const mapping = single(
      stack.synth.template,
      'AWS::Lambda::EventSourceMapping',
      (p) => JSON.stringify(p.EventSourceArn) === JSON.stringify(streamOf(TABLES.audit)),
    );
    expect(mapping.Properties).toEqual({
      FunctionName: { Ref: consumer().logicalId },
      EventSourceArn: streamOf(TABLES.audit),
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: AUDIT_STREAM_MAPPING.batchSize,
      MaximumBatchingWindowInSeconds: DEFAULTS.consumerWindowSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: STREAM_MAPPING.retryAttempts,
      MaximumRecordAgeInSeconds: STREAM_MAPPING.maxRecordAge.toSeconds(),
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [deadLetters, 'Arn'] } } },
    });
  });

  it('delivers budget alerts from its own queue: partial batch responses, a dead-letter queue after 5 failed invocations, encrypted and TLS-only', () => {
    const alertQueue = stack.synth.stack.statsConsumer.alertQueue;
    const queueId = stack.synth.stack.getLogicalId(alertQueue.node.defaultChild as never);
    const deadId = stack.synth.stack.getLogicalId(
      stack.synth.stack.statsConsumer.alertDeadLetters.node.defaultChild as never,
    );
    const mapping = single(stack.synth.template, 'AWS::Lambda::EventSourceMapping', (p) => !('StartingPosition' in p));
    expect(mapping.Properties).toEqual({
      FunctionName: { Ref: consumer().logicalId },
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      BatchSize: ALERT_QUEUE_MAPPING.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const queues = stack.synth.template.findResources('AWS::SQS::Queue') as Record<string, { Properties: object }>;
    expect(queues[queueId].Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: ALERT_QUEUE_MAPPING.visibilityTimeout.toSeconds(),
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [deadId, 'Arn'] },
        maxReceiveCount: ALERT_QUEUE_MAPPING.maxReceiveCount,
      },
    });
    expect(queues[deadId].Properties).toMatchObject({ SqsManagedSseEnabled: true });
    // Both refuse plain HTTP.
    const policies = Object.values(stack.synth.template.findResources('AWS::SQS::QueuePolicy')).map((r) =>
      JSON.stringify(r),
    );
    for (const id of [queueId, deadId])
      expect(policies.some((p) => p.includes(id) && p.includes('aws:SecureTransport'))).toBe(true);
  });

  it('may read the usage and audit streams, read and update rollup items, read budgets, write alert items and budget spend, and send to its queue, nothing more', () => {
    const statements = roleStatements(stack.synth.template, roleOf(consumer()));
    const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
          Resource: [streamOf(TABLES.audit), streamOf(TABLES.usageLogs)],
        }),
        expect.objectContaining({ Action: 'dynamodb:ListStreams', Resource: '*' }),
        // It reads the rollup items too: it keeps each sealed hour's and day's sums from them.
        expect.objectContaining({
          Action: ['dynamodb:Query', 'dynamodb:UpdateItem'],
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
    // The only "*": ListStreams, which has no resource-level permission, and the export's objects under
    // usage/ and audit/.
    const puts = statements.filter((s) => s.Action === 's3:PutObject');
    expect(puts).toHaveLength(1);
    const prefixes = (puts[0]!.Resource as unknown[]).map((r) => JSON.stringify(r).match(/\/(\w+)\/\*"\]\]\}$/)?.[1]);
    expect(prefixes.sort()).toEqual(['audit', 'usage']);
    for (const s of statements)
      if (JSON.stringify(s.Resource).includes('*'))
        expect(s.Action === 'dynamodb:ListStreams' || s.Action === 's3:PutObject').toBe(true);
  });

  it('is its own small bundle: no dashboard, no Secrets Manager client (KMS only to open webhook secrets), only Node built-ins imported', () => {
    const code = consumer().Properties.Code as { S3Key: string };
    const bundle = fs.readFileSync(
      path.join(stack.synth.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs'),
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

describe('alarms', () => {
  it('watch function errors, throttles and p99 duration', () => {
    const fnRef = [{ Name: 'FunctionName', Value: { Ref: fn().logicalId } }];
    stack.synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-function-errors',
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Dimensions: fnRef,
      Statistic: 'Sum',
      Threshold: 1,
    });
    stack.synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-function-throttles',
      MetricName: 'Throttles',
      Dimensions: fnRef,
      Threshold: 1,
    });
    // A refused usage row's only copy is its log line: a metric filter counts them.
    stack.synth.template.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern: '{ $.message = "usage row spooled" }',
    });
    stack.synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-spooled-usage-rows',
      Namespace: 'AiUsageProxy',
      Threshold: 1,
    });
    stack.synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
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
    stack.synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
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
    stack.synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-stats-consumer-errors',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: consumer().logicalId } }],
    });
    stack.synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'dev-ai-usage-proxy-stats-dead-letters',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 1,
    });
  });

  it("treat no traffic as fine and notify the stack's alarm topic when they fire and when they clear", () => {
    const alarms = Object.values(stack.synth.template.findResources('AWS::CloudWatch::Alarm')) as {
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
    const alarmKey = single(stack.synth.template, 'AWS::KMS::Key', (p) =>
      String(p.Description).startsWith('Encrypts the alarm notifications'),
    );
    expect(topic.Properties).toMatchObject({
      TopicName: 'dev-ai-usage-proxy-alarms',
      KmsMasterKeyId: { 'Fn::GetAtt': [alarmKey.logicalId, 'Arn'] },
    });
    expect(alarmKey.Properties.EnableKeyRotation).toBe(true);
    const policy = single(stack.synth.template, 'AWS::SNS::TopicPolicy', (p) =>
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
    stack.synth.template.resourceCountIs('AWS::SNS::Subscription', 0);
    stack.synth.template.hasOutput('AlarmTopicArn', { Value: { Ref: topic.logicalId } });
  });
});

describe('budget alert topic (docs/alerts.md)', () => {
  it('is encrypted with its own rotating key, refuses plain HTTP, and only the stream consumer may publish to it', () => {
    const topic = alertTopic();
    const alertKey = single(stack.synth.template, 'AWS::KMS::Key', (p) =>
      String(p.Description).startsWith('Encrypts the budget alerts'),
    );
    expect(topic.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [alertKey.logicalId, 'Arn'] });
    expect(alertKey.Properties.EnableKeyRotation).toBe(true);
    const policy = single(stack.synth.template, 'AWS::SNS::TopicPolicy', (p) =>
      JSON.stringify(p.Topics).includes(topic.logicalId),
    ).Properties.PolicyDocument as { Statement: Record<string, unknown>[] };
    expect(policy.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ]),
    );
    const publishers = policyStatements(stack.synth.template).filter((s) => actionsOf(s).includes('sns:Publish'));
    expect(publishers).toEqual([expect.objectContaining({ Resource: { Ref: topic.logicalId } })]);
    expect(roleStatements(stack.synth.template, roleOf(consumer()))).toEqual(
      expect.arrayContaining([expect.objectContaining({ Action: 'sns:Publish', Resource: { Ref: topic.logicalId } })]),
    );
    stack.synth.template.hasOutput('BudgetAlertTopicArn', { Value: { Ref: topic.logicalId } });
  });
});
