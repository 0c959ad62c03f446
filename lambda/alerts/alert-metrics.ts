import { METRICS_NAMESPACE } from '../usage/usage-metrics';

/** The metric of an alert whose every delivery attempt failed (docs/alerts.md, "Metrics"). */
export const ALERT_FAILURE_METRIC = 'AlertDeliveriesFailed';

/** One Embedded Metric Format line counting one alert given up on, with no dimension. */
export function alertFailureMetricLine(now: number): string {
  return JSON.stringify({
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        { Namespace: METRICS_NAMESPACE, Dimensions: [[]], Metrics: [{ Name: ALERT_FAILURE_METRIC, Unit: 'Count' }] },
      ],
    },
    [ALERT_FAILURE_METRIC]: 1,
  });
}
