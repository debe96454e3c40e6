// The retained purchases the bench and bench:ab send: each pays a fresh booking of its own, so
// the whole write path runs every time (docs/performance.md).
import type { Db } from '../src/storage/db.js';
import { limits } from '../src/limits.js';
import { retainedPurchaseInput, type Tenant } from './fixtures.js';
import { waitForInFlight, waitForMailDrain } from './in-flight.js';

export class FreshPurchases {
  private bookings: number[] = [];
  private next = 0;
  /** Makes fresh bookings until `count` are unpaid and returns them; null: no top-ups. */
  private more: ((count: number) => Promise<number[]>) | null = null;
  /** `next` when the last run ended, and the most bookings one run (a warm-up or a slice) used. */
  private nextAtSettle = 0;
  private largestRun = 0;
  // Keys count on across refills.
  private sent = 0;
  /** Requests sent after the fresh bookings ran out: each re-sent a paid booking (a quick 400). */
  reused = 0;
  /** False once the requests of a run were still in flight at the bound of `settle`. */
  quiet = true;
  /** Seconds `settle` waited for the service to render and send the runs' mails, in all. */
  mailDrainSeconds = 0;
  /** False once a run's mails were still waiting at the bound of `settle`. */
  mailsDrained = true;

  constructor(
    private readonly db: Db,
    private readonly tenant: Tenant,
    private readonly vaultTransactionId: number,
    /** The Idempotency-Keys of these purchases start with this. */
    readonly keyPrefix: string,
  ) {}

  /**
   * The bookings to pay from now on, in order. With `more`, `settle` tops them up between runs
   * whenever fewer are left than half again the most one run has used: a machine faster than the
   * first estimate (bench:ab's BENCH_AB_PURCHASES_PER_SECOND_MAX) no longer runs out mid-launch.
   */
  refill(bookings: number[], more?: (count: number) => Promise<number[]>): void {
    this.bookings = bookings;
    this.next = 0;
    this.nextAtSettle = 0;
    this.more = more ?? null;
  }

  /** One request's body and key (load.ts `Scenario.body`). Out of bookings: the last is sent again, and `reused` counts it. */
  readonly body = (): { body: string; headers: Record<string, string> } => {
    if (this.next >= this.bookings.length) this.reused += 1;
    const bookingId = this.bookings[Math.min(this.next++, this.bookings.length - 1)]!;
    return { body: JSON.stringify(retainedPurchaseInput(this.tenant, { bookingId, vaultTransactionId: this.vaultTransactionId })), headers: { 'idempotency-key': `${this.keyPrefix}${++this.sent}` } };
  };

  /**
   * Waits for the requests autocannon abandoned at the end of a run (in-flight.ts), bounded by a
   * processor timeout and a margin, then for the service to have rendered and sent their mails,
   * so that work does not fall in the next slice.
   */
  readonly settle = async (): Promise<void> => {
    this.quiet &&= await waitForInFlight(this.db, {
      siteId: this.tenant.siteId, keyPrefix: this.keyPrefix, transactionType: 'retained_purchase', timeoutMs: inFlightBoundMs, pollMs: 50,
    });
    const drain = await waitForMailDrain(this.db, { siteId: this.tenant.siteId, timeoutMs: mailDrainBoundMs, pollMs: 50 });
    this.mailDrainSeconds += drain.seconds;
    this.mailsDrained &&= drain.drained;
    await this.topUp();
  };

  /**
   * Called once a run's requests have ended (`settle`): every booking sent so far is paid, so the
   * unpaid ones `more` returns are exactly those not sent yet, and new ones.
   */
  readonly topUp = async (): Promise<void> => {
    this.largestRun = Math.max(this.largestRun, this.next - this.nextAtSettle);
    const wanted = Math.ceil(this.largestRun * topUpMargin);
    if (this.more && this.bookings.length - this.next < wanted) this.refill(await this.more(wanted), this.more);
    this.nextAtSettle = this.next;
  };
}

/** Bookings kept ready for the next run, relative to the most one run has used. */
const topUpMargin = 1.5;

export const inFlightBoundMs = limits.processorTimeoutMs + 5_000;
/** Far above what the delivery job needs for a slice's mails (a few seconds), far below a hang. */
export const mailDrainBoundMs = 120_000;

/** Fresh bookings for purchases at up to `perSecondMax` over `seconds`: a fifth to spare, and one more in flight per connection. */
export function freshBookingsNeeded(options: { perSecondMax: number; seconds: number; connections: number }): number {
  return Math.ceil(options.perSecondMax * options.seconds * 1.2) + options.connections;
}
