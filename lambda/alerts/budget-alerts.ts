import { randomUUID } from 'node:crypto';
import { subjectsOf, type BudgetSubject } from '../budgets/budget';
import type { BudgetStore } from '../budgets/ports';
import { eachInFlight } from '../base/in-flight';
import type { UsageRow } from '../usage/usage-row';
import { alertPayload, reachedAlerts, type BudgetAlert } from './alert';
import type { AlertQueue, AlertStore } from './ports';

/** Budgets read at once while checking a batch. */
const READS_IN_FLIGHT = 8;

export interface BudgetAlertDeps {
  budgets: BudgetStore;
  store: AlertStore;
  /** Where claimed alerts wait for their delivery (alert-delivery.ts). */
  queue: AlertQueue;
  /** A token's name, for the alert's text; undefined when it has none. */
  tokenName: (accountId: string, tokenId: string) => Promise<string | undefined>;
  now: () => number;
}

interface Check {
  accountId: string;
  subject: BudgetSubject;
  /** The latest row time of this subject in the batch, within one UTC day. */
  at: number;
}

/**
 * Budget alerts (docs/alerts.md), found by the usage-logs stream's consumer, never on the request
 * path. The consumer folds a batch's spend into its subjects' counters before it checks the batch
 * (stream-consumer.ts), so reading a budget then sees at least the spend of the rows checked. Each
 * fraction reached is claimed with a conditional write, so however many consumers read the same
 * rows, one alert exists; its delivery is then queued, and sent by another loop (alert-delivery.ts),
 * so no webhook, however slow, holds the fold.
 */
export class BudgetAlerts {
  constructor(private readonly deps: BudgetAlertDeps) {}

  /**
   * Throws when a budget, a claim or the queue could not be read or written: the batch is then
   * delivered again, and an alert claimed but not yet queued is queued then (at least once).
   */
  async check(rows: readonly UsageRow[]): Promise<void> {
    const checks = new Map<string, Check>();
    for (const row of rows) {
      if (!(row.cost_nanos > 0)) continue;
      const at = Date.parse(row.ts);
      for (const subject of subjectsOf(row)) {
        const id = `${row.account_id}\u0000${JSON.stringify(subject)}\u0000${row.ts.slice(0, 10)}`;
        const seen = checks.get(id);
        if (!seen || seen.at < at) checks.set(id, { accountId: row.account_id, subject, at });
      }
    }
    const reached: BudgetAlert[] = [];
    await eachInFlight([...checks.values()], READS_IN_FLIGHT, async ({ accountId, subject, at }) => {
      const status = await this.deps.budgets.statusOf(accountId, subject, at);
      if (status) reached.push(...reachedAlerts(accountId, status, at));
    });
    await eachInFlight(reached, READS_IN_FLIGHT, (alert) => this.queue(alert));
  }

  private async queue(alert: BudgetAlert): Promise<void> {
    const id = `alr_${randomUUID()}`;
    const sentAt = new Date(this.deps.now()).toISOString();
    if (alert.subject.kind === 'token')
      alert = { ...alert, tokenName: await this.deps.tokenName(alert.accountId, alert.subject.tokenId) };
    const claim = await this.deps.store.claim(alert, id, sentAt, alertPayload(alert, id));
    if (claim.queued) return;
    await this.deps.queue.enqueue(
      { accountId: alert.accountId, alertId: claim.id, sentAt: claim.sentAt, attempt: 1 },
      0,
    );
    await this.deps.store.markQueued(alert);
  }
}
