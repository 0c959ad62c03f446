import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  ApplicationLogLevel,
  Architecture,
  EventSourceMapping,
  LoggingFormat,
  Runtime,
  StartingPosition,
  SystemLogLevel,
} from 'aws-cdk-lib/aws-lambda';
import { SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CONSUMER_TABLE_CALLS, tableGrants } from '../../lambda/store/table-calls';
import type { TableShape } from '../../lambda/store/tables';
import type { AlertTopic } from './alert-topic';
import type { ProviderKeyEncryption } from './provider-key';
import type { UsageExport } from './usage-export';
import { esmBundling } from './proxy-function';
import { tableGrantStatement } from './table-grant';

export const CONSUMER_ENTRY = 'lambda/entry/stream-consumer.ts';

/**
 * How the usage-logs stream reaches the fold (docs/deploy.md explains each figure):
 * - a batch is up to 1,000 rows (~1 MB of images, far under the 6 MB invocation limit) or whatever
 *   arrived in the batching window (`consumerWindowSeconds`, 60 s by default): each rollup item
 *   costs one write per batch, so waiting turns many rows into one write each for the hour and
 *   the day, for the price of stats and spend lagging rows by up to the window;
 * - a failed batch is retried, split in halves (bisect) to isolate a poison record, and resumed
 *   from the first row the fold reports as failed (ReportBatchItemFailures); rows counted already
 *   are skipped by the fold's per-shard watermarks, so retries never count twice;
 * - after 10 retries or 24 hours (the stream's own retention) the batch's position goes to the
 *   dead-letter queue, so an operator can replay it instead of it blocking the shard;
 * - the tumbling window is there only because Lambda then names the shard in each event, which
 *   keys the watermarks; the fold keeps no window state.
 */
export const STREAM_MAPPING = {
  batchSize: 1_000,
  retryAttempts: 10,
  maxRecordAge: Duration.hours(24),
  tumblingWindow: Duration.minutes(15),
  parallelizationFactor: 1,
} as const;

/** The audit stream's batches: entries are few; one object per day and batch. */
export const AUDIT_STREAM_MAPPING = { batchSize: 100 } as const;

/**
 * How the alert queue reaches the function (docs/alerts.md): up to 10 alerts per invocation, sent
 * in parallel, each failed one reported alone (partial batch responses). A message is hidden for 6
 * minutes while an invocation has it (six times the function's timeout, as AWS advises for SQS
 * sources); one whose invocation failed 5 times (not a failed delivery: those are queued again with
 * their next attempt) moves to the alert dead-letter queue.
 */
export const ALERT_QUEUE_MAPPING = {
  batchSize: 10,
  visibilityTimeout: Duration.minutes(6),
  maxReceiveCount: 5,
} as const;

/** Memory of the consumer: it holds one batch and makes a few writes; CPU per batch is milliseconds. */
export const CONSUMER_MEMORY_MB = 128;

export interface StatsConsumerProps {
  projectRoot: string;
  /** The stream's batching window (`consumerWindowSeconds`). */
  windowSeconds: number;
  functionName: string;
  logRetention: RetentionDays;
  usageLogs: { table: ITable; shape: TableShape };
  usageStats: { table: ITable; shape: TableShape };
  /** Budgets are read and alerts claimed here (docs/alerts.md). */
  accounts: { table: ITable; shape: TableShape };
  alertTopic: AlertTopic;
  /** Its stream carries each audit entry to the export (docs/people.md). */
  audit: { table: ITable; shape: TableShape };
  /** Where the rows and audit entries are exported for Athena (docs/alerts.md). */
  usageExport: UsageExport;
  /** The key the webhook signing secrets are sealed with: the consumer opens them to sign alerts. */
  providerKeys: ProviderKeyEncryption;
}

/**
 * One of the consumer's queues, like every queue of the stack encrypted with SQS's own key and
 * reached over TLS only. A dead-letter destination says why it has no dead-letter queue of its own
 * (`deadLetterDestination`, acknowledged to the checks that would ask for one).
 */
function consumerQueue(
  scope: Construct,
  id: string,
  {
    deadLetterDestination,
    ...props
  }: Pick<QueueProps, 'retentionPeriod' | 'visibilityTimeout' | 'deadLetterQueue'> & { deadLetterDestination?: string },
): Queue {
  const queue = new Queue(scope, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, ...props });
  if (deadLetterDestination)
    Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: deadLetterDestination });
  return queue;
}

/**
 * The second function: folds the usage-logs stream into the hourly and daily rollups and sends the
 * budget alerts the rows call for, and exports the rows for Athena, off the request path. Its role can
 * read that one stream, update rollup items, read budgets and write alert items (nothing else of
 * either table), publish to the alert topic, put objects under the export bucket's usage/ prefix and
 * send failed batch positions to its own dead-letter queue.
 */
export class StatsConsumer extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly deadLetters: Queue;
  readonly mapping: EventSourceMapping;
  readonly auditMapping: EventSourceMapping;
  /** Claimed budget alerts waiting for delivery, apart from the fold. */
  readonly alertQueue: Queue;
  readonly alertDeadLetters: Queue;

  constructor(scope: Construct, id: string, props: StatsConsumerProps) {
    super(scope, id);
    const streamArn = props.usageLogs.table.tableStreamArn;
    if (!streamArn) throw new Error('the usage-logs table has no stream');
    const auditStreamArn = props.audit.table.tableStreamArn;
    if (!auditStreamArn) throw new Error('the audit table has no stream');

    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: RemovalPolicy.DESTROY });
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runtime role of ${props.functionName}`,
    });
    this.logGroup.grantWrite(this.role);

    this.deadLetters = consumerQueue(this, 'DeadLetters', {
      // As long as SQS keeps anything: time for an operator to notice the alarm and replay.
      retentionPeriod: Duration.days(14),
      deadLetterDestination:
        'This queue is itself the dead-letter destination of the usage-stream mapping: it receives the positions of stream batches the rollup fold gave up on, for an operator to replay; nothing consumes it, so it needs no dead-letter queue of its own.',
    });

    this.alertDeadLetters = consumerQueue(this, 'AlertDeadLetters', {
      retentionPeriod: Duration.days(14),
      deadLetterDestination:
        'This queue is itself the dead-letter destination of the alert queue: it keeps alert messages whose invocations kept failing, for an operator to look at; nothing consumes it.',
    });
    this.alertQueue = consumerQueue(this, 'AlertQueue', {
      visibilityTimeout: ALERT_QUEUE_MAPPING.visibilityTimeout,
      // An alert's attempts span at most about 5 hours, each attempt a new message.
      retentionPeriod: Duration.days(1),
      deadLetterQueue: { queue: this.alertDeadLetters, maxReceiveCount: ALERT_QUEUE_MAPPING.maxReceiveCount },
    });

    this.fn = new NodejsFunction(this, 'Function', {
      functionName: props.functionName,
      description:
        'Folds the usage-logs stream into the hourly and daily usage rollups, queues budget alerts and sends them',
      entry: path.join(props.projectRoot, CONSUMER_ENTRY),
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: path.join(props.projectRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: CONSUMER_MEMORY_MB,
      // A batch is at most a few hundred conditional writes in parallel.
      timeout: Duration.minutes(1),
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      systemLogLevelV2: SystemLogLevel.WARN,
      environment: {
        [props.usageStats.shape.envVar]: props.usageStats.table.tableName,
        [props.accounts.shape.envVar]: props.accounts.table.tableName,
        [props.audit.shape.envVar]: props.audit.table.tableName,
        ALERT_TOPIC_ARN: props.alertTopic.topic.topicArn,
        ALERT_QUEUE_URL: this.alertQueue.queueUrl,
        USAGE_EXPORT_BUCKET: props.usageExport.bucket.bucketName,
        KMS_KEY_ID: props.providerKeys.key.keyArn,
      },
      bundling: esmBundling(props.projectRoot),
    });

    // Reading the streams: the three per-stream actions on these two streams alone. ListStreams has no
    // resource-level permission, so it is granted on "*" (it lists stream ARNs, never data).
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        resources: [streamArn, auditStreamArn],
      }),
    );
    this.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }));
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams supports no resource-level permission, so Lambda\'s event source mapping can only be allowed it on "*"; it returns stream ARNs and no data, and every data read (GetRecords) is limited to the usage-logs and audit streams.',
    });
    // The actions the fold and the alerts send (lambda/store/table-calls.ts), each on its own table;
    // writes declared to reach only some partitions are granted on those partitions alone.
    const tables = { usageStats: props.usageStats.table, accounts: props.accounts.table } as const;
    for (const grant of tableGrants(CONSUMER_TABLE_CALLS)) {
      if (!(grant.table in tables))
        throw new Error(`the stream consumer may use only the rollups and accounts, not ${grant.table}`);
      this.role.addToPrincipalPolicy(tableGrantStatement(grant, tables[grant.table as keyof typeof tables].tableArn));
    }
    props.alertTopic.grantPublish(this.role);
    props.usageExport.grantExport(this.role);
    props.providerKeys.grantOpen(this.role);
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(props.usageExport.bucket.node.defaultChild as CfnElement)}.Arn>/usage/*]`,
      reason:
        'The usage export writes one object per day and batch, named by its stream position, under the usage/ prefix of its own bucket: PutObject alone, on that prefix alone.',
    });
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(props.usageExport.bucket.node.defaultChild as CfnElement)}.Arn>/audit/*]`,
      reason:
        'The audit export writes one object per day and batch, named by its stream position, under the audit/ prefix of the export bucket: PutObject alone, on that prefix alone.',
    });

    this.mapping = new EventSourceMapping(this, 'Mapping', {
      target: this.fn,
      eventSourceArn: streamArn,
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: STREAM_MAPPING.batchSize,
      maxBatchingWindow: Duration.seconds(props.windowSeconds),
      bisectBatchOnError: true,
      reportBatchItemFailures: true,
      retryAttempts: STREAM_MAPPING.retryAttempts,
      maxRecordAge: STREAM_MAPPING.maxRecordAge,
      parallelizationFactor: STREAM_MAPPING.parallelizationFactor,
      tumblingWindow: STREAM_MAPPING.tumblingWindow,
      onFailure: new SqsDlq(this.deadLetters),
    });
    // Each audit entry, exported beside the usage rows: a batch whose export failed comes again whole.
    this.auditMapping = new EventSourceMapping(this, 'AuditMapping', {
      target: this.fn,
      eventSourceArn: auditStreamArn,
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: AUDIT_STREAM_MAPPING.batchSize,
      maxBatchingWindow: Duration.seconds(props.windowSeconds),
      reportBatchItemFailures: true,
      retryAttempts: STREAM_MAPPING.retryAttempts,
      maxRecordAge: STREAM_MAPPING.maxRecordAge,
      onFailure: new SqsDlq(this.deadLetters),
    });
    this.deadLetters.grantSendMessages(this.role);
    // The fold queues each claimed alert; the queue invokes this function with them (its own event source).
    this.alertQueue.grantSendMessages(this.role);
    this.fn.addEventSource(
      new SqsEventSource(this.alertQueue, {
        batchSize: ALERT_QUEUE_MAPPING.batchSize,
        reportBatchItemFailures: true,
      }),
    );
    // The mapping reads the stream with the function's role: it must exist first.
    this.mapping.node.addDependency(this.role);
    this.auditMapping.node.addDependency(this.role);
  }
}
