/**
 * The CloudWatch side of docs/alerts.md: a dashboard over every metric the stream consumer writes
 * (lambda/usage/usage-metrics.ts), by provider and by model, and the spend alarm only when asked for.
 */
import { METRICS_NAMESPACE, USAGE_METRICS } from '../../lambda/usage/usage-metrics';
import { synthesize, type SynthesizedStack } from './support/synth';

let plain: SynthesizedStack;
let withAlarm: SynthesizedStack;
beforeAll(() => {
  plain = synthesize();
  withAlarm = synthesize({ spendAlarmUsdPerHour: 25 });
});
afterAll(() => {
  plain?.cleanup();
  withAlarm?.cleanup();
});

function dashboardBody(synth: SynthesizedStack): string {
  const dashboards = Object.values(synth.template.findResources('AWS::CloudWatch::Dashboard')) as {
    Properties: { DashboardName: string; DashboardBody: unknown };
  }[];
  expect(dashboards.map((d) => d.Properties.DashboardName)).toEqual(['dev-ai-usage-proxy-usage']);
  return JSON.stringify(synth.stack.resolve(dashboards[0].Properties.DashboardBody));
}

test('the dashboard graphs every usage metric, by provider, and the cost by model too', () => {
  const body = dashboardBody(plain);
  for (const metric of Object.keys(USAGE_METRICS))
    expect(body).toContain(`{${METRICS_NAMESPACE},Provider} MetricName=\\\\\\"${metric}\\\\\\"`);
  expect(body).toContain(`{${METRICS_NAMESPACE},Provider,Model} MetricName=\\\\\\"CostUSD\\\\\\"`);
});

test('no spend alarm by default; -c spendAlarmUsdPerHour=25 alarms on the hourly sum of CostUSD, to the alarm topic', () => {
  const spendAlarms = (synth: SynthesizedStack) =>
    Object.values(synth.template.findResources('AWS::CloudWatch::Alarm')).filter(
      (a) => (a as { Properties: { MetricName?: string } }).Properties.MetricName === 'CostUSD',
    ) as { Properties: Record<string, unknown> }[];
  expect(spendAlarms(plain)).toEqual([]);
  const [alarm] = spendAlarms(withAlarm);
  expect(alarm.Properties).toMatchObject({
    AlarmName: 'dev-ai-usage-proxy-spend-per-hour',
    Namespace: METRICS_NAMESPACE,
    Statistic: 'Sum',
    Period: 3600,
    Threshold: 25,
    ComparisonOperator: 'GreaterThanThreshold',
    TreatMissingData: 'notBreaching',
  });
  expect(alarm.Properties.Dimensions).toBeUndefined();
  const topics = Object.entries(withAlarm.template.findResources('AWS::SNS::Topic')).filter(
    ([, t]) => (t as { Properties: { TopicName: string } }).Properties.TopicName === 'dev-ai-usage-proxy-alarms',
  );
  expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topics[0][0] }]);
});
