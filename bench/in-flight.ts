// Waiting for the requests autocannon abandoned at the end of a run (see docs/performance.md).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../src/storage/db.js';

export interface InFlightOptions {
  siteId: number;
  /** The Idempotency-Keys of the run start with this. */
  keyPrefix: string;
  /** Transactions of this type are what the run creates. */
  transactionType: string;
  timeoutMs: number;
  pollMs: number;
}

/**
 * autocannon stops at the end of its duration without waiting for the answers still on their way
 * (up to one request per connection), but the service runs each of them to the end. Counting
 * right away finds some of their transactions not yet settled. This waits until none of the run's
 * requests is in flight: no Idempotency-Key of the run still `in_flight` (claimed with the attempt,
 * marked done when the answer is sent) and the number of the run's transactions unchanged between
 * two looks (a request before its attempt commits shows neither). Bounded by `timeoutMs`
 * (a processor timeout plus a margin); returns whether the service went quiet in time.
 */
export async function waitForInFlight(db: Queryable, options: InFlightOptions): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  let lastCount = -1;
  for (;;) {
    const row = await db.one<{ in_flight: number; count: number }>(
      `SELECT (SELECT count(*) FROM idempotency_keys WHERE site_id = $1 AND starts_with(key, $2) AND status = 'in_flight')::int AS in_flight,
              (SELECT count(*) FROM transactions WHERE site_id = $1 AND type = $3)::int AS count`,
      [options.siteId, options.keyPrefix, options.transactionType],
    );
    if (row.in_flight === 0 && row.count === lastCount) return true;
    if (Date.now() >= deadline) return false;
    lastCount = row.count;
    await sleep(options.pollMs);
  }
}

/**
 * The mail work a run leaves behind: requests not yet rendered and rendered mails not yet sent,
 * which the service's delivery job works through in the background (docs/emails.md,
 * "Throughput"). Waiting until none is left keeps that work out of the next measured slice (the
 * ceiling's, in an interleaved run). Bounded by `timeoutMs`; returns whether it drained in time
 * and the seconds waited.
 */
export async function waitForMailDrain(db: Queryable, options: { siteId: number; timeoutMs: number; pollMs: number }): Promise<{ drained: boolean; seconds: number }> {
  const startedAt = Date.now();
  for (;;) {
    const { left } = await db.one<{ left: number }>(
      `SELECT (SELECT count(*) FROM mail_requests WHERE site_id = $1 AND last_error IS NULL)::int
            + (SELECT count(*) FROM email_outbox WHERE site_id = $1 AND status = 'pending')::int AS left`,
      [options.siteId],
    );
    const seconds = (Date.now() - startedAt) / 1000;
    if (left === 0) return { drained: true, seconds };
    if (Date.now() - startedAt >= options.timeoutMs) return { drained: false, seconds };
    await sleep(options.pollMs);
  }
}
