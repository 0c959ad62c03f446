import { eachInFlight } from '../base/in-flight';
import { describeError, type Logger } from '../base/logger';
import type { AlertDelivery } from './alert-delivery';
import type { DynamoAlertQueue } from './dynamodb/alert-queue';

/** Messages taken per round, and delivered at once: one slow receiver holds one of these, no fold. */
const PER_ROUND = 16;
const IN_FLIGHT = 8;
/** Longer than an attempt can take (every target's 5 s), so a message is never taken twice while being sent. */
const LEASE_MS = 60_000;

/**
 * The local server's alert sender (SQS invokes the consumer's function in AWS): about once a
 * second it takes the queued alerts that are due and makes one attempt at each, apart from the
 * usage stream's reader, so no webhook holds a fold (docs/alerts.md).
 */
export class AlertDeliveryLoop {
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly queue: DynamoAlertQueue,
    private readonly delivery: AlertDelivery,
    private readonly log: Logger,
    private readonly intervalMs = 1_000,
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.round = this.deliverDue()
        .catch((error: unknown) => this.log.warn('queued budget alerts not read; retrying', describeError(error)))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
        });
    };
    tick();
  }

  /** Finishes the round in progress; what is left waits in the queue for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
  }

  /** One round: every due message taken, one attempt each; a message whose store work failed comes again after its lease. */
  async deliverDue(): Promise<void> {
    const taken = await this.queue.take(PER_ROUND, LEASE_MS);
    await eachInFlight(taken, IN_FLIGHT, async ({ message, done }) => {
      try {
        await this.delivery.deliver(message);
        await done();
      } catch (error) {
        this.log.warn('budget alert delivery not recorded; it will be tried again', describeError(error));
      }
    });
  }
}
