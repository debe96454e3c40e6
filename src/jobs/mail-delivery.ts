import type { AppContext } from '../context.js';
import { limits } from '../limits.js';
import { localeOf, normaliseLanguage } from '../i18n/catalogue.js';
import { MailDeliveryError, type OutgoingMail } from '../domain/emails/transport.js';
import { renderRequestedMails, type ClaimedMail, type RenderRun } from '../domain/emails/outbox.js';
import { forEachConcurrently } from '../concurrently.js';
import { batchSizeWithin } from '../bounded.js';
import { allFulfilled, Batcher } from '../batcher.js';
import { pickedBy } from '../storage/batches.js';

export interface DeliveryRun {
  /** Mail requests of payments taken in this run (a request may call for no mail). */
  requests: number;
  /** Outbox rows rendered from them. */
  rendered: number;
  /** Requests whose rendering failed, set aside with their error in `mail_requests` (docs/emails.md); the job runner logs them as an error. */
  errors: RenderRun['errors'];
  /** Requests whose rendering met a passing database error, left queued for the next run (docs/emails.md "Delivery"). */
  deferred: number;
  claimed: number;
  sent: number;
  /** Failed this time and scheduled again with backoff. */
  retrying: number;
  /** Gave up: a permanent refusal or limits.mailAttemptsMax attempts. */
  failed: number;
  /** Claimed but not sent: the run's send window closed first (sendWindowMs); due again at once. */
  released: number;
  /** A full batch of requests or of due mail: more may be waiting (the job runner runs again soon). */
  backlog: boolean;
}

/**
 * Delivers due outbox rows and renders requested mails into the outbox (up to one batch of each),
 * then sends them (docs/emails.md "Delivery"). Due rows are claimed in a short statement with FOR
 * UPDATE SKIP LOCKED that also pushes their next_attempt_at forward by a lease, so several
 * processes can run this at once and no row is sent by two of them; rendered rows are written
 * claimed by this run. Mail is sent outside any database transaction; the claims of sends under
 * way are renewed every limits.mailClaimRenewalMs (`claimRenewalMs` here, for tests). A process
 * that dies mid-send leaves the row to be retried after the lease: delivery is at least once, with
 * a stable Message-ID per row.
 */
export async function deliverPendingMails(context: AppContext, options: { batchSizeMax?: number; claimRenewalMs?: number } = {}): Promise<DeliveryRun> {
  const batchSize = batchSizeWithin(options.batchSizeMax, { fallback: limits.mailBatchSizeDefault, max: limits.mailBatchSizeMax });
  const claimedAtMs = context.now().getTime();
  const claimedUntil = new Date(claimedAtMs + limits.mailClaimLeaseMs);
  // What is due first (retries, released rows, claims that ran out): however much fresh mail
  // is requested, every run also takes a batch of what waits already.
  const due = await claimDueMails(context, batchSize, claimedUntil);
  const { requests, written, claimed: fresh, errors, deferred } = await renderRequestedMails(context.db, { batchSizeMax: batchSize, claimedUntil });
  // UPDATE ... RETURNING has no order: send oldest first (fresh rows are the newest).
  const rows = [...due.sort((a, b) => a.id - b.id), ...fresh.sort((a, b) => a.id - b.id)];
  const run: DeliveryRun = { requests, rendered: written, errors, deferred, claimed: rows.length, sent: 0, retrying: 0, failed: 0, released: 0, backlog: requests === batchSize || due.length === batchSize };
  await sendAll(context, rows, run, { startByMs: claimedAtMs + sendWindowMs, claimRenewalMs: options.claimRenewalMs ?? limits.mailClaimRenewalMs });
  return run;
}

/**
 * How long after its claim a run may start sending. A claimed row is hidden from other runs for
 * limits.mailClaimLeaseMs; a send started later could still be under way when the lease ends,
 * and another run would claim and send the same mail again. The longest a send can take before
 * an SMTP timeout ends it is a connection, a greeting and an idle socket. (A batch of 100 to a
 * relay that is down takes 25 rounds of the 15 s connection timeout, longer than the lease.)
 * Renewing the claims of sends under way (ClaimRenewer) covers a send that lasts longer; this
 * window still covers one whose renewal cannot be written (the database unreachable meanwhile).
 */
const sendWindowMs = limits.mailClaimLeaseMs - (2 * limits.smtpConnectionTimeoutMs + limits.smtpSocketTimeoutMs);

/**
 * Sends the rows, started oldest first, up to limits.mailSendConcurrency at a time: one SMTP
 * round of a few tens of milliseconds per mail would otherwise bound a process to a few dozen
 * mails a second. Outcomes are recorded as sends finish, those that finish while a write is under
 * way together in the next (one statement, not one per mail: at hundreds of mails a second the
 * per-mail updates were a quarter of the database's work; docs/performance.md, session 14). A
 * send does not wait for its outcome's write, but none starts after a write failed. Rows not
 * started by `startByMs` are released for the next run.
 */
async function sendAll(context: AppContext, rows: readonly ClaimedMail[], run: DeliveryRun, timing: { startByMs: number; claimRenewalMs: number }): Promise<void> {
  const unsent: ClaimedMail[] = [];
  const renewer = new ClaimRenewer(context, timing.claimRenewalMs);
  const outcomes = new Batcher<Outcome, void>(
    async (batch) => {
      await recordOutcomes(context, batch);
      return allFulfilled(batch.map(() => undefined));
    },
    { batchMax: limits.mailBatchSizeMax, inFlightMax: 1 },
  );
  const writes: Promise<void>[] = [];
  const written: { failure: { error: unknown } | null } = { failure: null };
  try {
    await forEachConcurrently(rows, limits.mailSendConcurrency, async (row) => {
      if (written.failure) throw written.failure.error;
      if (context.now().getTime() > timing.startByMs) {
        unsent.push(row);
        return;
      }
      renewer.sending.add(row);
      const outcome = await deliverOne(context, row).finally(() => renewer.sending.delete(row));
      run[outcome.status === 'sent' ? 'sent' : outcome.status === 'failed' ? 'failed' : 'retrying'] += 1;
      writes.push(outcomes.add(outcome).catch((error: unknown) => {
        written.failure ??= { error };
      }));
    });
  } finally {
    // The run ends only once its outcomes are written, or their write failed, even when a send
    // threw: a job's run never ends while its work goes on.
    await Promise.all([...writes, renewer.stop()]);
  }
  if (written.failure) throw written.failure.error;
  if (unsent.length === 0) return;
  run.released = await releaseClaims(context, unsent);
  run.backlog = true;
}

/**
 * `status = 'pending'`, written so that it does not match the partial index email_outbox_due_idx
 * (the status check constraint allows only these three). With the equality the planner may look
 * the ids up by scanning that index whole, which its statistics say is tiny, when a backlog makes
 * it large: measured at 0.33 ms per mail with a few thousand due, 7 ms for a batch of three,
 * against a primary-key look-up's hundredths.
 */
const stillPendingSql = "o.status <> 'sent' AND o.status <> 'failed'";

/**
 * Keeps the claims of the sends under way a lease ahead of the clock, every `intervalMs`. A relay
 * can drag one send out for longer than the lease (every reply inside the socket timeout, which
 * counts only silence), and pooled nodemailer cannot abort one send; without the renewal another
 * run would claim the row when its lease ran out and send the mail a second time. A renewal
 * matches the claim's attempt count, like recordOutcomes. One that fails (the database unreachable)
 * is not retried until the next tick: the send goes on, covered by what is left of its lease. (A
 * renewal read just before a retry's outcome is written can push that retry up to a lease later.)
 */
class ClaimRenewer {
  readonly sending = new Set<ClaimedMail>();
  private readonly timer: NodeJS.Timeout;
  private renewal: Promise<void> = Promise.resolve();

  constructor(private readonly context: AppContext, intervalMs: number) {
    this.timer = setInterval(() => {
      // One renewal at a time: a slow database does not pile them up.
      this.renewal = this.renewal.then(() => this.renew());
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the ticks; settles once a renewal under way has ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.renewal;
  }

  private async renew(): Promise<void> {
    const rows = [...this.sending];
    if (rows.length === 0) return;
    await this.context.db.query(
      `UPDATE email_outbox o SET next_attempt_at = $3
         FROM unnest($1::bigint[], $2::int[]) AS claimed(id, attempts)
        WHERE o.id = claimed.id AND o.attempts = claimed.attempts AND ${stillPendingSql}`,
      [rows.map((row) => row.id), rows.map((row) => row.attempts), new Date(this.context.now().getTime() + limits.mailClaimLeaseMs)],
    ).catch(() => undefined);
  }
}

/** Undoes the claims of rows never sent: due now, and the attempt not counted (it was never made). */
async function releaseClaims(context: AppContext, rows: readonly ClaimedMail[]): Promise<number> {
  const released = await context.db.query(
    `UPDATE email_outbox o SET attempts = o.attempts - 1, next_attempt_at = $3
       FROM unnest($1::bigint[], $2::int[]) AS claimed(id, attempts)
      WHERE o.id = claimed.id AND o.attempts = claimed.attempts AND ${stillPendingSql}
      RETURNING o.id`,
    [rows.map((row) => row.id), rows.map((row) => row.attempts), context.now()],
  );
  return released.length;
}

async function claimDueMails(context: AppContext, batchSize: number, claimedUntil: Date): Promise<ClaimedMail[]> {
  return context.db.query<ClaimedMail & Record<string, unknown>>(
    `UPDATE email_outbox
        SET attempts = attempts + 1, next_attempt_at = $2
      WHERE ${pickedBy('id', `SELECT id FROM email_outbox
                                WHERE status = 'pending' AND next_attempt_at <= $1
                                ORDER BY next_attempt_at, id
                                LIMIT $3
                                FOR UPDATE SKIP LOCKED`)}
      RETURNING id, site_id, transaction_id, kind, language, from_name, reply_to, to_addresses, bcc_addresses, subject, text_body, html_body, attempts, retry_recipients`,
    [context.now(), claimedUntil, batchSize],
  );
}

/** What a send came to: the row's new status, recorded by recordOutcomes. */
interface Outcome {
  row: ClaimedMail;
  /** `pending`: a temporary failure, due again at nextAttemptAt. */
  status: 'sent' | 'pending' | 'failed';
  /** Pending for these recipients only (the relay took the others). */
  retryRecipients: string[] | null;
  deliveryId: string | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

async function deliverOne(context: AppContext, row: ClaimedMail): Promise<Outcome> {
  try {
    const receipt = await context.mailer.send(outgoingMail(context, row));
    const note = receipt.rejected.length > 0 ? `refused recipients: ${receipt.rejected.join(', ')}` : null;
    if (receipt.deferred.length === 0) return { row, status: 'sent', deliveryId: receipt.deliveryId, error: note, retryRecipients: null, nextAttemptAt: null };
    // Deferred recipients (4xx) are owed the mail: pending again for them alone, so accepted
    // copies (a merchant's Bcc) are not sent twice and the payer's receipt is not lost. At the
    // last attempt the mail failed for them (not `sent`: they never got it), and
    // retry_recipients names them, for the operator and for `mail resend`.
    if (row.attempts >= limits.mailAttemptsMax) {
      const deferred = `still deferred at the last attempt (${row.attempts}): ${receipt.deferred.join(', ')}`;
      const error = (note === null ? deferred : `${note}; ${deferred}`).slice(0, limits.mailErrorLengthMax);
      return { row, status: 'failed', deliveryId: receipt.deliveryId, error, retryRecipients: receipt.deferred, nextAttemptAt: null };
    }
    return { row, status: 'pending', deliveryId: receipt.deliveryId, error: note, retryRecipients: receipt.deferred, nextAttemptAt: new Date(context.now().getTime() + retryDelayMs(row.attempts)) };
  } catch (error) {
    const permanent = error instanceof MailDeliveryError && error.permanent;
    const exhausted = row.attempts >= limits.mailAttemptsMax;
    const message = (error as Error).message.slice(0, limits.mailErrorLengthMax);
    // Refused all, some for good: the next attempt (or `mail resend` of the failed mail) is for the deferred ones alone.
    const retryRecipients = error instanceof MailDeliveryError && error.deferred ? error.deferred : null;
    if (permanent || exhausted) return { row, status: 'failed', deliveryId: null, error: message, retryRecipients, nextAttemptAt: null };
    return { row, status: 'pending', deliveryId: null, error: message, retryRecipients, nextAttemptAt: new Date(context.now().getTime() + retryDelayMs(row.attempts)) };
  }
}

/**
 * Empties the bodies of sent and failed mails written more than limits.mailBodyRetentionDays ago,
 * a batch at a time (the prune-mail-bodies job; docs/emails.md "Retention"). The rows stay, with
 * `bodies_pruned_at`. A full batch reports a backlog, so the job runner goes on at once.
 */
export async function pruneMailBodies(context: AppContext, options: { batchSize?: number } = {}): Promise<{ pruned: number; backlog: boolean }> {
  const batchSize = batchSizeWithin(options.batchSize, { fallback: limits.jobBatchSize, max: limits.mailBatchSizeMax });
  const now = context.now();
  const rows = await context.db.query(
    `UPDATE email_outbox SET text_body = '', html_body = '', bodies_pruned_at = $2
      WHERE ${pickedBy('id', `SELECT id FROM email_outbox
                                WHERE status <> 'pending' AND bodies_pruned_at IS NULL AND created_at < $1
                                ORDER BY created_at, id
                                LIMIT $3
                                FOR UPDATE SKIP LOCKED`)}
      RETURNING id`,
    [new Date(now.getTime() - limits.mailBodyRetentionDays * 86_400_000), now, batchSize],
  );
  return { pruned: rows.length, backlog: rows.length === batchSize };
}

/** Exponential backoff after the n-th failed attempt: base × 2^(n-1), capped. */
export function retryDelayMs(attempts: number): number {
  return Math.min(limits.mailRetryDelayBaseMs * 2 ** Math.max(0, attempts - 1), limits.mailRetryDelayMaxMs);
}

/**
 * Records the outcomes, each only if its row is still the one this worker claimed (same attempt
 * count, still pending): a worker whose lease ran out must not overwrite a newer attempt's result.
 */
async function recordOutcomes(context: AppContext, outcomes: readonly Outcome[]): Promise<void> {
  await context.db.query(
    `UPDATE email_outbox o
        SET status = r.status, delivery_id = r.delivery_id, last_error = r.last_error,
            next_attempt_at = COALESCE(r.next_attempt_at, o.next_attempt_at),
            sent_at = CASE WHEN r.status = 'sent' THEN $7::timestamptz ELSE o.sent_at END,
            retry_recipients = CASE WHEN r.retry IS NULL THEN o.retry_recipients ELSE ARRAY(SELECT jsonb_array_elements_text(r.retry)) END
       FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $8::jsonb[])
            AS r(id, attempts, status, delivery_id, last_error, next_attempt_at, retry)
      WHERE o.id = r.id AND o.attempts = r.attempts AND ${stillPendingSql}`,
    [
      outcomes.map((outcome) => outcome.row.id), outcomes.map((outcome) => outcome.row.attempts), outcomes.map((outcome) => outcome.status),
      outcomes.map((outcome) => outcome.deliveryId), outcomes.map((outcome) => outcome.error), outcomes.map((outcome) => outcome.nextAttemptAt), context.now(),
      outcomes.map((outcome) => (outcome.retryRecipients ? JSON.stringify(outcome.retryRecipients) : null)),
    ],
  );
}

function outgoingMail(context: AppContext, row: ClaimedMail): OutgoingMail {
  const domain = context.config.mailFrom.split('@')[1] ?? 'localhost';
  return {
    from: { name: row.from_name, address: context.config.mailFrom },
    to: row.to_addresses,
    bcc: row.bcc_addresses,
    ...(row.retry_recipients ? { envelopeTo: row.retry_recipients } : {}),
    replyTo: row.reply_to,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    messageId: `<${row.kind}.${row.transaction_id}.${row.id}@${domain}>`,
    locale: localeOf(normaliseLanguage(row.language)),
    date: context.now(),
  };
}
