/**
 * The failed-authentication alarm: a metric filter counts the proxy's `authentication failed` log
 * lines (written once per failure: test/security/failed-sign-ins.test.ts), and an alarm notifies
 * the stack's topic when they pile up.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { FAILED_SIGN_IN_MESSAGE } from '../../lambda/auth/failed-sign-ins';
import { FAILED_SIGN_IN_THRESHOLD } from '../../lib/constructs/failed-sign-in-alarm';
import { synthesize, type SynthesizedStack } from './support/synth';

let synth: SynthesizedStack;
beforeAll(() => {
  synth = synthesize({}, { bundle: false });
});
afterAll(() => synth?.cleanup());

function logicalIdOf(type: string, match: (properties: Record<string, unknown>) => boolean): string {
  const found = Object.entries(synth.template.findResources(type)).filter(([, r]) =>
    match((r as { Properties: Record<string, unknown> }).Properties),
  );
  expect(found).toHaveLength(1);
  return found[0][0];
}

test('a metric filter on the proxy function’s log group counts each failed-authentication line', () => {
  synth.template.hasResourceProperties('AWS::Logs::MetricFilter', {
    FilterPattern: `{ $.message = "${FAILED_SIGN_IN_MESSAGE}" }`,
    LogGroupName: { Ref: Match.stringLikeRegexp('^ProxyLogs') },
    MetricTransformations: [
      { MetricNamespace: 'AiUsageProxy', MetricName: 'dev-ai-usage-proxy-failed-authentications', MetricValue: '1' },
    ],
  });
});

test('the alarm fires at 100 failures in 5 minutes and notifies the stack’s topic when it fires and clears', () => {
  const topic = logicalIdOf('AWS::SNS::Topic', (properties) => String(properties.TopicName).endsWith('-alarms'));
  synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
    AlarmName: 'dev-ai-usage-proxy-failed-authentications',
    Namespace: 'AiUsageProxy',
    MetricName: 'dev-ai-usage-proxy-failed-authentications',
    Statistic: 'Sum',
    Period: 300,
    Threshold: FAILED_SIGN_IN_THRESHOLD,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    EvaluationPeriods: 1,
    TreatMissingData: 'notBreaching',
    AlarmActions: [{ Ref: topic }],
    OKActions: [{ Ref: topic }],
  });
});
