import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, type UsageMetric } from '../../lambda/usage/usage-metrics';

export interface UsageDashboardProps {
  namePrefix: string;
  /** The alarm topic: the spend alarm notifies it like every other alarm. */
  alarmTopic: ITopic;
  /** Dollars of spend in one hour above which the spend alarm fires; no alarm when unset. */
  spendAlarmUsdPerHour?: number;
}

/** One line per provider (or per model), found by search: a provider or model that appears needs no change here. */
function byDimension(metric: UsageMetric, statistic: string, dimensions: string, label: string): MathExpression {
  return new MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},${dimensions}} MetricName="${metric}"', '${statistic}', 300)`,
    label,
    period: Duration.minutes(5),
  });
}

/**
 * The CloudWatch dashboard of the usage metrics the stream consumer writes as Embedded Metric
 * Format lines (docs/alerts.md, "Metrics"), and the optional alarm on spend per hour.
 */
export class UsageDashboard extends Construct {
  readonly dashboard: Dashboard;
  readonly spendAlarm?: Alarm;

  constructor(scope: Construct, id: string, props: UsageDashboardProps) {
    super(scope, id);
    const graph = (title: string, metric: UsageMetric, statistic = 'Sum', dimensions = 'Provider') =>
      new GraphWidget({
        title,
        width: 12,
        left: [byDimension(metric, statistic, dimensions, '')],
      });
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${props.namePrefix}usage`,
      widgets: [
        [
          new TextWidget({
            markdown:
              '## AI usage proxy\nFrom the usage rows, by provider and by model (`AiUsageProxy` namespace). Cost is estimated from per-token prices.',
            width: 24,
            height: 2,
          }),
        ],
        [graph('Requests by provider', 'Requests'), graph('Errors by provider', 'Errors')],
        [graph('Cost (USD) by provider', 'CostUSD'), graph('Cost (USD) by model', 'CostUSD', 'Sum', 'Provider,Model')],
        [graph('Input tokens by provider', 'InputTokens'), graph('Output tokens by provider', 'OutputTokens')],
        [graph('Latency p95 (ms) by provider', 'LatencyMs', 'p95'), graph('Cache hits by provider', 'CacheHits')],
      ],
    });

    if (props.spendAlarmUsdPerHour !== undefined) {
      this.spendAlarm = new Alarm(this, 'SpendPerHour', {
        alarmName: `${props.namePrefix}spend-per-hour`,
        alarmDescription: `The proxy's estimated spend in one hour exceeded $${props.spendAlarmUsdPerHour} (docs/alerts.md).`,
        metric: new Metric({
          namespace: METRICS_NAMESPACE,
          metricName: 'CostUSD' satisfies UsageMetric,
          statistic: 'Sum',
          period: Duration.hours(1),
        }),
        threshold: props.spendAlarmUsdPerHour,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      this.spendAlarm.addAlarmAction(new SnsAction(props.alarmTopic));
      this.spendAlarm.addOkAction(new SnsAction(props.alarmTopic));
    }
  }
}
