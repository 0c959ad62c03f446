import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { pascalCase } from '../names';
import { AlarmTopic } from './alarm-topic';

/**
 * p99 above one minute, sustained for 15 minutes, means providers are slow or streams are long
 * for most users, long before invocations near the 15-minute limit where rows would be lost.
 * Streaming-heavy workloads may want it higher.
 */
export const P99_DURATION_THRESHOLD = Duration.minutes(1);

const PERIOD = Duration.minutes(5);

export interface ProxyAlarmsProps {
  namePrefix: string;
  fn: IFunction;
  /** The function's log group: a refused usage row is printed there as its only copy. */
  logGroup: ILogGroup;
  tables: { logicalName: string; table: Table }[];
  /** The rollup consumer: its failures and its dead-letter queue mean the overview is missing rows. */
  statsConsumer: { fn: IFunction; deadLetters: IQueue };
  /** An existing topic to notify instead of creating one. */
  alarmTopicArn?: string;
  /** Subscribed to the topic by e-mail. */
  alarmEmail?: string;
}

/**
 * The few signals that need a human: the function failing or throttled, it being slow, a usage row
 * spooled, the rollups falling behind, or a table throttling. Every alarm notifies one SNS topic,
 * when it fires and when it clears: the stack's own (created unless an existing one is given), to
 * which `alarmEmail` subscribes an address.
 */
export class ProxyAlarms extends Construct {
  readonly alarms: Alarm[] = [];
  readonly topic: ITopic;

  constructor(scope: Construct, id: string, props: ProxyAlarmsProps) {
    super(scope, id);
    const { fn, namePrefix } = props;

    // Errors are unhandled failures and timeouts of the function itself; provider 4xx/5xx are
    // ordinary responses the proxy passes through and logs, so they don't count here.
    this.add(
      'FunctionErrors',
      `${namePrefix}function-errors`,
      'The proxy function failed (unhandled error or timeout).',
      fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      1,
    );
    // A throttle is a request the client never got served: the reserved or account concurrency is exhausted.
    this.add(
      'FunctionThrottles',
      `${namePrefix}function-throttles`,
      'Requests were refused with 429: the reserved concurrency (or the account pool) is exhausted.',
      fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
      1,
    );
    this.add(
      'FunctionP99Duration',
      `${namePrefix}function-p99-duration`,
      `p99 duration above ${P99_DURATION_THRESHOLD.toSeconds()} s for 15 minutes: providers are slow or streams run long.`,
      fn.metricDuration({ period: PERIOD, statistic: 'p99' }),
      P99_DURATION_THRESHOLD.toMilliseconds(),
      3,
    );

    // A usage row the store refused after every retry is printed as one `usage row spooled` line:
    // the only copy of that row, to be replayed into the table (docs/failure-modes.md, "Limits worth knowing").
    const spooled = new MetricFilter(this, 'SpooledRows', {
      logGroup: props.logGroup,
      filterPattern: FilterPattern.stringValue('$.message', '=', 'usage row spooled'),
      metricNamespace: 'AiUsageProxy',
      metricName: `${namePrefix}spooled-usage-rows`,
      metricValue: '1',
    });
    this.add(
      'SpooledUsageRows',
      `${namePrefix}spooled-usage-rows`,
      'A usage row could not be written and was printed to the log instead: replay it.',
      spooled.metric({ period: PERIOD, statistic: 'Sum' }),
      1,
    );

    // Rollups: a consumer that keeps failing retries its batch (the overview falls behind); a batch
    // it gave up on lands in the dead-letter queue and is missing from the overview until replayed.
    const consumer = props.statsConsumer;
    this.add(
      'StatsConsumerErrors',
      `${namePrefix}stats-consumer-errors`,
      'The usage-stream consumer failed: the overview falls behind the logs.',
      consumer.fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      1,
      3,
    );
    this.add(
      'StatsDeadLetters',
      `${namePrefix}stats-dead-letters`,
      'A usage-stream batch was given up on: its rows are missing from the overview until it is replayed (docs/failure-modes.md).',
      consumer.deadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      1,
    );

    for (const { logicalName, table } of props.tables) {
      // On-demand tables still throttle on a hot partition or the account's table limits; a
      // throttled rate-limit or usage write shows up as a 5xx or a missing row.
      const throttles = new MathExpression({
        expression: 'FILL(reads, 0) + FILL(writes, 0)',
        usingMetrics: {
          reads: table.metric('ReadThrottleEvents', { period: PERIOD, statistic: 'Sum' }),
          writes: table.metric('WriteThrottleEvents', { period: PERIOD, statistic: 'Sum' }),
        },
        period: PERIOD,
        label: `${logicalName} throttle events`,
      });
      this.add(
        `${pascalCase(logicalName)}Throttles`,
        `${namePrefix}${logicalName}-throttles`,
        `DynamoDB throttled requests on the ${logicalName} table.`,
        throttles,
        1,
      );
    }

    this.topic = props.alarmTopicArn
      ? Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn)
      : new AlarmTopic(this, 'Topic', { namePrefix }).topic;
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.topic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }

  private add(
    id: string,
    alarmName: string,
    description: string,
    metric: IMetric,
    threshold: number,
    periods = 1,
  ): void {
    this.alarms.push(
      new Alarm(this, id, {
        alarmName,
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: periods,
        datapointsToAlarm: periods,
        // No traffic is not a problem.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }
}
