import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { FAILED_SIGN_IN_MESSAGE } from '../../lambda/auth/failed-sign-ins';

/**
 * Failed authentications in five minutes that mean someone is guessing rather than a client
 * holding a revoked token: a misconfigured app retrying its old token stays well below it.
 */
export const FAILED_SIGN_IN_THRESHOLD = 100;

export interface FailedSignInAlarmProps {
  namePrefix: string;
  /** The proxy function's log group, where each failure is one `authentication failed` line. */
  logGroup: ILogGroup;
  /** The topic the stack's other alarms notify. */
  topic: ITopic;
}

/**
 * Counts the proxy's `authentication failed` log lines (a wrong or missing proxy token, admin key
 * or management token; docs/operations.md, "Failed sign-ins") as a metric, and alarms on many of
 * them in five minutes.
 */
export class FailedSignInAlarm extends Construct {
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string, props: FailedSignInAlarmProps) {
    super(scope, id);
    const failures = new MetricFilter(this, 'Failures', {
      logGroup: props.logGroup,
      filterPattern: FilterPattern.stringValue('$.message', '=', FAILED_SIGN_IN_MESSAGE),
      metricNamespace: 'AiUsageProxy',
      metricName: `${props.namePrefix}failed-authentications`,
      metricValue: '1',
    });
    this.alarm = new Alarm(this, 'Alarm', {
      alarmName: `${props.namePrefix}failed-authentications`,
      alarmDescription: `At least ${FAILED_SIGN_IN_THRESHOLD} failed authentications in 5 minutes: someone may be guessing tokens or the admin key.`,
      metric: failures.metric({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: FAILED_SIGN_IN_THRESHOLD,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(props.topic);
    this.alarm.addAlarmAction(action);
    this.alarm.addOkAction(action);
  }
}
