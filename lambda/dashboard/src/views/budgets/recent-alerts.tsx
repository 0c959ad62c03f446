import { useApi } from '../../api-context';
import { EmptyState } from '../../components/empty-state';
import { ErrorMessage } from '../../components/error-message';
import { SkeletonRows } from '../../components/skeleton';
import { formatDateTime } from '../../format';
import type { SentAlert } from '../../types';
import { useAsync } from '../../use-async';

/** What became of an alert: still being tried, or given up on (docs/alerts.md, "Budget alerts"). */
const STATE_PREFIX: Record<SentAlert['state'], string> = {
  pending: 'Trying again: ',
  delivered: '',
  failed: 'Failed, given up: ',
};

/** Where an alert went: "webhook ✓", or "Failed, given up: webhook failed (answered 500) after 24 tries". */
function deliveryText(alert: SentAlert): string {
  if (alert.deliveries.length === 0) return alert.state === 'pending' ? 'Queued' : 'no webhook or topic set';
  return (
    STATE_PREFIX[alert.state] +
    alert.deliveries
      .map((d) =>
        d.delivered
          ? `${d.target} ✓`
          : `${d.target} failed${d.problem ? ` (${d.problem})` : ''} after ${d.attempts} ${d.attempts === 1 ? 'try' : 'tries'}`,
      )
      .join(', ')
  );
}

/** The account's most recent budget alerts (docs/alerts.md), newest first. */
export function RecentAlerts() {
  const api = useApi();
  const alerts = useAsync(() => api.alerts(), []);
  return (
    <section class="card table-card" data-testid="recent-alerts" aria-labelledby="recent-alerts-title">
      <h2 class="card-title" id="recent-alerts-title">
        Recent alerts
      </h2>
      <p class="muted">
        Sent once per budget, threshold and period when the spend reaches a budget&apos;s “alert at” percentage: to the
        account&apos;s webhook (<code>PUT /api/alerts/webhook</code>) and the stack&apos;s alert topic.
      </p>
      <ErrorMessage error={alerts.error} testId="recent-alerts-error" onRetry={alerts.reload} />
      {!alerts.data ? (
        <SkeletonRows rows={2} label="Loading recent alerts…" />
      ) : alerts.data.alerts.length === 0 ? (
        <EmptyState title="No alerts yet." testId="recent-alerts-empty" />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Recent alerts">
          <table class="table" data-testid="recent-alerts-table">
            <thead>
              <tr>
                <th scope="col">Sent</th>
                <th scope="col">Alert</th>
                <th scope="col">Delivered</th>
              </tr>
            </thead>
            <tbody>
              {alerts.data.alerts.map((alert) => (
                <tr
                  key={alert.id}
                  data-testid="recent-alert-row"
                  data-threshold={alert.threshold}
                  data-state={alert.state}
                >
                  <td class="nowrap">{formatDateTime(alert.sent_at)}</td>
                  <td class="break">{alert.text}</td>
                  <td>{deliveryText(alert)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
