import type { AppContext } from '../context.js';
import { limits } from '../limits.js';
import { localeOf, normaliseLanguage } from '../i18n/catalogue.js';
import { isDeferral, MailDeliveryError, type OutgoingMail, type RecipientRefusal } from '../domain/emails/transport.js';
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
  /** Each mail this run gave up on, as the job runner logs it (one warning each, no address). */
  failures: MailFailure[];
  /** One warning when mails were deferred (`retrying`), with the relay's replies (no address), for the job runner. */
  warnings: MailDeferral[];
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
  const run: DeliveryRun = { requests, rendered: written, errors, deferred, claimed: rows.length, sent: 0, retrying: 0, failed: 0, failures: [], warnings: [], released: 0, backlog: requests === batchSize || due.length === batchSize };
  const failed: Outcome[] = [];
  const retried: Outcome[] = [];
  // A run whose outcomes could not all be written throws: its mails are sent again after the lease.
  await sendAll(context, rows, run, { failed, retried }, { startByMs: claimedAtMs + sendWindowMs, claimRenewalMs: options.claimRenewalMs ?? limits.mailClaimRenewalMs });
  run.failures = await mailFailures(context, failed);
  run.warnings = mailDeferrals(retried);
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
async function sendAll(context: AppContext, rows: readonly ClaimedMail[], run: DeliveryRun, ended: { failed: Outcome[]; retried: Outcome[] }, timing: { startByMs: number; claimRenewalMs: number }): Promise<void> {
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
      if (outcome.status !== 'sent') ended[outcome.status === 'failed' ? 'failed' : 'retried'].push(outcome);
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
      RETURNING id, site_id, transaction_id, kind, language, from_name, reply_to, to_addresses, bcc_addresses, subject, text_body, html_body, attempts, retry_recipients, refusals`,
    [context.now(), claimedUntil, batchSize],
  );
}

/** What a send came to: the row's new status, recorded by recordOutcomes. */
interface Outcome {
  row: ClaimedMail;
  /** `pending`: a temporary failure, due again at nextAttemptAt. */
  status: 'sent' | 'pending' | 'failed';
  /** Pending for these recipients only (the relay took the others); failed: who never got it. Null: as they were. */
  retryRecipients: string[] | null;
  /** Recipients refused for good so far (this attempt and earlier ones), kept until the mail ends. */
  refusals: RecipientRefusal[];
  /** Why whoever is owed it did not get it: the relay's refusals (this attempt's and earlier ones for good), or its reply to the whole mail (no recipient). For the log line of a failure. */
  replies: { recipient: string | null; code: number | null; reply: string }[];
  deliveryId: string | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

/**
 * A mail is `sent` once everyone it is for has taken it. A recipient the relay refused for good
 * (5xx) is not tried again; while others are deferred (4xx) the mail stays pending for them alone;
 * once nobody is left to try, or at the last attempt, it is `failed` for whoever never got it
 * (retry_recipients), so `mail failed` lists it and `mail resend` sends it to them alone
 * (docs/emails.md "Delivery"). Until this audit a refusal for good beside an accepted copy ended
 * `sent`, the payer's receipt lost or the merchant's copy forgotten once the payer took it.
 */
async function deliverOne(context: AppContext, row: ClaimedMail): Promise<Outcome> {
  const earlier = row.refusals ?? [];
  try {
    const receipt = await context.mailer.send(outgoingMail(context, row));
    return recipientsOutcome(context, row, { deliveryId: receipt.deliveryId, refusals: receipt.refusals, earlier });
  } catch (error) {
    if (error instanceof MailDeliveryError && error.refusals) return recipientsOutcome(context, row, { deliveryId: null, refusals: error.refusals, earlier });
    const permanent = error instanceof MailDeliveryError && error.permanent;
    const reply = { recipient: null, code: error instanceof MailDeliveryError ? error.responseCode : null, reply: (error as Error).message };
    const message = [reply.reply, refusalsNote('refused for good', earlier)].filter(Boolean).join('; ').slice(0, limits.mailErrorLengthMax);
    const base = { row, deliveryId: null, error: message, refusals: earlier, replies: [reply, ...earlier] };
    if (!permanent && row.attempts < limits.mailAttemptsMax) {
      return { ...base, status: 'pending', retryRecipients: null, nextAttemptAt: new Date(context.now().getTime() + retryDelayMs(row.attempts)) };
    }
    // Failed for everyone this attempt was for, and for those refused for good before.
    const owed = row.retry_recipients && earlier.length > 0 ? inAddressOrder(row, [...row.retry_recipients, ...earlier.map((refusal) => refusal.recipient)]) : null;
    return { ...base, status: 'failed', retryRecipients: owed, nextAttemptAt: null };
  }
}

/** The outcome of an attempt the relay answered recipient by recipient (some taken, or every one refused at RCPT TO). */
function recipientsOutcome(context: AppContext, row: ClaimedMail, answer: { deliveryId: string | null; refusals: RecipientRefusal[]; earlier: RecipientRefusal[] }): Outcome {
  const deferred = answer.refusals.filter(isDeferral);
  const refused = [...answer.earlier, ...answer.refusals.filter((refusal) => !isDeferral(refusal))];
  const base = { row, deliveryId: answer.deliveryId, refusals: refused, replies: [...refused, ...deferred] };
  if (deferred.length === 0 && refused.length === 0) return { ...base, status: 'sent', error: null, retryRecipients: null, nextAttemptAt: null };
  const last = row.attempts >= limits.mailAttemptsMax;
  const error = [refusalsNote('refused for good', refused), refusalsNote(last ? `still deferred at the last attempt (${row.attempts})` : 'deferred', deferred)]
    .filter(Boolean).join('; ').slice(0, limits.mailErrorLengthMax);
  if (deferred.length > 0 && !last) {
    return { ...base, status: 'pending', error, retryRecipients: deferred.map((refusal) => refusal.recipient), nextAttemptAt: new Date(context.now().getTime() + retryDelayMs(row.attempts)) };
  }
  return { ...base, status: 'failed', error, retryRecipients: inAddressOrder(row, [...deferred, ...refused].map((refusal) => refusal.recipient)), nextAttemptAt: null };
}

/** `label: a@x (550 No such mailbox), b@y (...)`, or '' for none. */
function refusalsNote(label: string, refusals: readonly RecipientRefusal[]): string {
  return refusals.length === 0 ? '' : `${label}: ${refusals.map((refusal) => `${refusal.recipient} (${refusal.reply})`).join(', ')}`;
}

/** The addresses, each once, in the order the mail names them (To, then Bcc). */
function inAddressOrder(row: ClaimedMail, addresses: readonly string[]): string[] {
  const wanted = new Set(addresses);
  const named = [...row.to_addresses, ...row.bcc_addresses];
  return [...new Set([...named.filter((address) => wanted.has(address)), ...addresses])];
}

/**
 * A mail the delivery gave up on, as the job runner logs it (one warning each; JobResult
 * `failures`). Decision: no address. Logs travel further and live longer than the outbox row
 * (shipped to aggregators, read by whoever runs the service), the service logs no other personal
 * data (docs/auth.md "Logs": no bodies), and the row keeps the addresses for `trustfare mail
 * failed`; so the recipients are named by their place (`to`: the payer or the notice's addressee,
 * `bcc`: the merchant's copies), and addresses in the relay's replies read `[address]`.
 */
export interface MailFailure {
  message: string;
  mail: number;
  kind: string;
  site: number;
  transaction: number;
  bookings: number[];
  attempts: number;
  /** How many of its To and Bcc recipients never got it. */
  owed: { to: number; bcc: number };
  /** The relay's replies of the last attempt: per recipient, or to the whole mail (no `recipient`). */
  replies: { recipient?: 'to' | 'bcc'; code: number | null; text: string }[];
}

const failureMessage = 'mail failed for good: `trustfare mail failed` lists it, `trustfare mail resend` sends it again';

/** The log lines of the failed outcomes, with the bookings of their transactions (one statement). */
async function mailFailures(context: AppContext, outcomes: readonly Outcome[]): Promise<MailFailure[]> {
  if (outcomes.length === 0) return [];
  // A database away now loses the bookings of the line, not the line.
  const rows = await context.db.query<{ transaction_id: number; bookings: number[] }>(
    'SELECT transaction_id, array_agg(booking_id ORDER BY position) AS bookings FROM transaction_bookings WHERE transaction_id = ANY($1::bigint[]) GROUP BY transaction_id',
    [outcomes.map((outcome) => outcome.row.transaction_id)],
  ).catch(() => []);
  const bookings = new Map(rows.map((row) => [Number(row.transaction_id), row.bookings.map(Number)]));
  return outcomes.map(({ row, retryRecipients, replies }) => {
    const owed = retryRecipients ?? row.retry_recipients ?? [...row.to_addresses, ...row.bcc_addresses];
    const place = (address: string) => (row.to_addresses.includes(address) ? 'to' as const : 'bcc' as const);
    return {
      message: failureMessage, mail: row.id, kind: row.kind, site: row.site_id, transaction: row.transaction_id, bookings: bookings.get(Number(row.transaction_id)) ?? [], attempts: row.attempts,
      owed: { to: owed.filter((address) => place(address) === 'to').length, bcc: owed.filter((address) => place(address) === 'bcc').length },
      replies: replies.map(({ recipient, code, reply }) => ({ ...(recipient === null ? {} : { recipient: place(recipient) }), code, text: withoutAddresses(reply) })),
    };
  });
}

/**
 * The warning of a run whose mails were deferred. Decision: one line per run, logged at warn. At
 * info only (the run's counts) a relay that was down, or refused SMTP_URL's login or MAIL_FROM,
 * showed at LOG_LEVEL=warn only when its first mails failed for good, about an hour later. The
 * replies are those of the whole run, each once and without addresses (as MailFailure's).
 */
export interface MailDeferral {
  message: string;
  retrying: number;
  replies: { code: number | null; text: string }[];
}

const deferralMessage = `mail not sent, tried again with backoff (failed for good after ${limits.mailAttemptsMax} attempts): check the relay and SMTP_URL; \`trustfare mail deliver\` tries at once`;

function mailDeferrals(outcomes: readonly Outcome[]): MailDeferral[] {
  if (outcomes.length === 0) return [];
  const replies = new Map<string, { code: number | null; text: string }>();
  for (const { code, reply } of outcomes.flatMap((outcome) => outcome.replies)) {
    const text = withoutAddresses(reply);
    replies.set(`${code} ${text}`, { code, text });
  }
  return [{ message: deferralMessage, retrying: outcomes.length, replies: [...replies.values()].slice(0, limits.mailDeferralRepliesLoggedMax) }];
}

/** The text with every email address in it (a relay's reply often quotes the recipient) as `[address]`. */
function withoutAddresses(text: string): string {
  return text.replace(/<?[^\s<>()[\]"',;:]+@[^\s<>()[\]"',;:]+>?/g, '[address]');
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
        SET status = r.status, delivery_id = COALESCE(r.delivery_id, o.delivery_id), last_error = r.last_error,
            next_attempt_at = COALESCE(r.next_attempt_at, o.next_attempt_at),
            sent_at = CASE WHEN r.status = 'sent' THEN $7::timestamptz ELSE o.sent_at END,
            retry_recipients = CASE WHEN r.retry IS NULL THEN o.retry_recipients ELSE ARRAY(SELECT jsonb_array_elements_text(r.retry)) END,
            refusals = r.refusals
       FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $8::jsonb[], $9::jsonb[])
            AS r(id, attempts, status, delivery_id, last_error, next_attempt_at, retry, refusals)
      WHERE o.id = r.id AND o.attempts = r.attempts AND ${stillPendingSql}`,
    [
      outcomes.map((outcome) => outcome.row.id), outcomes.map((outcome) => outcome.row.attempts), outcomes.map((outcome) => outcome.status),
      outcomes.map((outcome) => outcome.deliveryId), outcomes.map((outcome) => outcome.error), outcomes.map((outcome) => outcome.nextAttemptAt), context.now(),
      outcomes.map((outcome) => (outcome.retryRecipients ? JSON.stringify(outcome.retryRecipients) : null)),
      outcomes.map((outcome) => (outcome.refusals.length > 0 ? JSON.stringify(outcome.refusals) : null)),
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
