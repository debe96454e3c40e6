import { isPassingDatabaseError, type Db, type Queryable } from '../../storage/db.js';
import { limits } from '../../limits.js';
import { batchSizeWithin, turnKeeper } from '../../bounded.js';
import { mailDataFor, mailLanguage, payerEmailOf } from './content.js';
import { loadFactsOfTransactions, type TransactionFacts } from './facts.js';
import { planMails } from './kinds.js';
import { renderMail } from './templates.js';
import type { RecipientRefusal } from './transport.js';
import { pickedBy } from '../../storage/batches.js';

/**
 * Mails in two steps (docs/emails.md "Delivery"). The payments code requests them inside the
 * database transaction that moved money or recorded a failure, once the row has its final
 * status: one small `mail_requests` row, so a committed payment always gets its mails and a
 * rolled-back one never does. The delivery job then plans and renders them into `email_outbox`
 * (renderRequestedMails), off the payment path (issue 7: reading the facts and rendering both
 * bodies took two of a settlement's statements and about a tenth of its JavaScript).
 */

/**
 * The request as part of the statement that sets the status: `source` names a CTE returning the
 * changed row's `site_id`, `id` and `status`; `condition` is a boolean SQL expression.
 */
export function mailRequestSql(source: string, condition: string): string {
  return `INSERT INTO mail_requests (site_id, transaction_id, status) SELECT site_id, id, status FROM ${source} WHERE ${condition}`;
}

const requestStatement = { name: 'mail_request', text: `${mailRequestSql('transactions', 'id = $1')} RETURNING id` };

/**
 * Requests the mails for the transaction's current status, in the caller's database transaction
 * (records written outside a settlement: chargebacks and their closing). Requesting twice sends
 * nothing twice: the outbox keeps one row per transaction and kind. Returns the requests written.
 */
export async function requestMails(tx: Queryable, transactionId: number): Promise<number> {
  const rows = await tx.query(requestStatement, [transactionId]);
  if (rows.length === 0) throw new Error(`requestMails: transaction ${transactionId} does not exist`);
  return rows.length;
}

const claimRequestsStatement = {
  name: 'mail_requests_claim',
  text: `DELETE FROM mail_requests WHERE ${pickedBy('id', 'SELECT id FROM mail_requests WHERE last_error IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED')}
         RETURNING id, transaction_id, status`,
};

type MailRequest = {
  id: number;
  transaction_id: number;
  status: string;
};

/** A pending outbox row claimed by a delivery run: what rendering wrote, with its id and the attempt the claim made. */
export type ClaimedMail = Omit<RenderedOutboxRow, 'status' | 'last_error'> & {
  id: number;
  attempts: number;
  /** The recipients still owed the mail after a relay deferred them (migration 029); absent or null: all. */
  retry_recipients?: string[] | null;
  /** Recipients a relay refused for good on an earlier attempt, with its replies (migration 053); absent or null: none. */
  refusals?: RecipientRefusal[] | null;
};

export interface RenderRun {
  /** Requests taken (and deleted); a request may call for no mail at all. */
  requests: number;
  /** Outbox rows written. */
  written: number;
  /** The pending rows written, claimed already (their first attempt, hidden until `claimedUntil`): the caller sends them. */
  claimed: ClaimedMail[];
  /** Requests whose rendering failed, set aside: kept in `mail_requests` with their error and skipped from now on. */
  errors: { requestId: number; transactionId: number; message: string }[];
  /** Requests whose rendering met a passing database error, left queued for the next run (renderOneByOne). */
  deferred: number;
}

/**
 * Turns up to `batchSizeMax` requests, oldest first, into rendered outbox rows and deletes them,
 * in one database transaction: a crash leaves the requests to the next run, and two processes
 * never take the same request (SKIP LOCKED). If the batch fails, its requests are taken again one
 * per database transaction, so one broken request is set aside with its error and the others go
 * on: otherwise it would roll back every batch it is in and hold all later mail up.
 *
 * The rows are written claimed by the caller until `claimedUntil` (docs/emails.md "Delivery"):
 * the run that renders a mail sends it, from what it rendered, instead of claiming it again
 * (one row version and one read of both bodies less per mail). A process that dies before
 * sending leaves them to a later run once the claim has run out, as any claimed row.
 */
export async function renderRequestedMails(db: Db, options: { batchSizeMax: number; claimedUntil: Date }): Promise<RenderRun> {
  const batchSize = batchSizeWithin(options.batchSizeMax, { fallback: limits.mailBatchSizeDefault, max: limits.mailBatchSizeMax });
  try {
    return await db.transaction(async (tx) => {
      const requests = await tx.query<MailRequest>(claimRequestsStatement, [batchSize]);
      const written = await renderRequests(tx, requests, options.claimedUntil);
      return { requests: requests.length, written: written.written, claimed: written.claimed, errors: [], deferred: 0 };
    });
  } catch {
    return renderOneByOne(db, batchSize, options.claimedUntil);
  }
}

/**
 * The batch's facts in one statement, its mails planned and rendered in order, and written in
 * one statement, whatever the batch's size: two statements per request were most of a batch's
 * round trips (docs/emails.md "Throughput").
 */
async function renderRequests(tx: Queryable, requests: MailRequest[], claimedUntil: Date): Promise<{ written: number; claimed: ClaimedMail[] }> {
  if (requests.length === 0) return { written: 0, claimed: [] };
  const ordered = [...requests].sort((a, b) => a.id - b.id);
  const factsById = await loadFactsOfTransactions(tx, [...new Set(ordered.map((request) => request.transaction_id))]);
  const rows: RenderedOutboxRow[] = [];
  // Rendering is synchronous: requests' I/O gets the event loop between mails (turnKeeper).
  const keepTurns = turnKeeper();
  for (const request of ordered) {
    const turn = keepTurns();
    if (turn) await turn;
    const loaded = factsById.get(request.transaction_id);
    if (!loaded) throw new Error(`mail request: transaction ${request.transaction_id} does not exist`);
    rows.push(...(await renderedRows({ ...loaded, transaction: { ...loaded.transaction, status: request.status } })));
  }
  return insertMails(tx, rows, claimedUntil);
}

/**
 * At most `count` requests, each in its own database transaction; a failing one is set aside.
 * One that meets a passing database error (isPassingDatabaseError) is left queued for the next
 * run, up to limits.mailRenderTransientFailuresMax times (then set aside), and the run takes no
 * more: the database is struggling, and each request after it would likely meet the same (a
 * statement timeout costing its full wait each time).
 */
async function renderOneByOne(db: Db, count: number, claimedUntil: Date): Promise<RenderRun> {
  const run: RenderRun = { requests: 0, written: 0, claimed: [], errors: [], deferred: 0 };
  for (let index = 0; index < count; index++) {
    let taken: MailRequest | undefined;
    try {
      const written = await db.transaction(async (tx) => {
        const requests = await tx.query<MailRequest>(claimRequestsStatement, [1]);
        taken = requests[0];
        return renderRequests(tx, requests, claimedUntil);
      });
      if (!taken) break;
      run.requests += 1;
      run.written += written.written;
      run.claimed.push(...written.claimed);
    } catch (error) {
      // Not taken: the claim itself failed (the database is away), so the run fails as before.
      if (!taken) throw error;
      const message = `rendering failed: ${(error as Error).message}`.slice(0, limits.mailErrorLengthMax);
      const [outcome] = await db.query<{ set_aside: boolean }>(setAsideStatement, [taken.id, message, isPassingDatabaseError(error), limits.mailRenderTransientFailuresMax]);
      if (outcome?.set_aside === false) {
        run.deferred += 1;
        break;
      }
      run.requests += 1;
      run.errors.push({ requestId: taken.id, transactionId: taken.transaction_id, message });
    }
  }
  return run;
}

/**
 * Sets a request aside with its error ($2), or, for a passing database error ($3), counts it
 * and leaves it queued until it is the limit's ($4). Setting aside resets the count, so a request
 * an operator puts back gets every try again.
 */
const setAsideStatement = {
  name: 'mail_request_set_aside',
  text: `UPDATE mail_requests
            SET last_error = CASE WHEN $3::boolean AND transient_failures + 1 < $4::int THEN NULL ELSE $2 END,
                transient_failures = CASE WHEN $3::boolean AND transient_failures + 1 < $4::int THEN transient_failures + 1 ELSE 0 END
          WHERE id = $1
      RETURNING last_error IS NOT NULL AS set_aside`,
};

export interface SetAsideRequest {
  id: number;
  transaction_id: number;
  status: string;
  created_at: Date;
  last_error: string;
}

/** The requests set aside, oldest first, at most `count` (for operators: `trustfare mail set-aside`). */
export async function setAsideRequests(db: Queryable, count: number): Promise<SetAsideRequest[]> {
  return db.query<SetAsideRequest & Record<string, unknown>>(
    'SELECT id, transaction_id, status, created_at, last_error FROM mail_requests WHERE last_error IS NOT NULL ORDER BY id LIMIT $1',
    [count],
  );
}

/** Puts set-aside requests back in the queue (one by id, or all); returns the ids put back. */
export async function retrySetAsideRequests(db: Queryable, which: { id: number } | 'all'): Promise<number[]> {
  const rows = await db.query<{ id: number }>(
    `UPDATE mail_requests SET last_error = NULL WHERE last_error IS NOT NULL AND ($1::bigint IS NULL OR id = $1) RETURNING id`,
    [which === 'all' ? null : which.id],
  );
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

/**
 * Puts failed mails back in the outbox (`trustfare mail resend`, docs/emails.md "Sending a failed
 * mail again"): pending, due at `now`, with every attempt again, for the recipients it was still
 * owed to (`retry_recipients` stays: those who took it already do not get it twice; those a relay
 * refused for good are tried again, so their `refusals` go). One by id, or
 * the oldest `count` written since a time; `more` says failed mails written since are left. A mail
 * whose bodies were pruned has nothing to send and stays failed. A mail never rendered
 * (`requested`, below) is requested again instead.
 */
export async function resendFailedMails(db: Queryable, which: { id: number } | { since: Date }, options: { count: number; now: Date }): Promise<{ resent: number[]; requested: number[]; more: boolean }> {
  const chosen = 'id' in which ? 'id = $1' : 'created_at >= $1';
  const oldest = (text: string) => `SELECT id FROM email_outbox WHERE ${failedNotPruned} AND text_body ${text} AND ${chosen} ORDER BY created_at, id LIMIT $2 FOR UPDATE`;
  const key = 'id' in which ? which.id : which.since;
  const count = 'id' in which ? 1 : options.count;
  const resent = await db.query<{ id: number }>(
    `UPDATE email_outbox SET status = 'pending', attempts = 0, next_attempt_at = $3, refusals = NULL WHERE ${pickedBy('id', oldest("<> ''"))} RETURNING id`,
    [key, count, options.now],
  );
  // No text: before session 28 a template that threw was stored as a failed row with the subject
  // '(not rendered)' and no text, which must not go to anyone. It holds the transaction's one place
  // for that kind of mail (UNIQUE (transaction_id, kind)), so nothing could ever write the mail:
  // the row gives its place up to a mail request, and the delivery job renders the mail from the
  // transaction as it does any (and sets the request aside if it still cannot).
  const requested = await db.query<{ id: number }>(
    `WITH unrendered AS (DELETE FROM email_outbox WHERE ${pickedBy('id', oldest("= ''"))} RETURNING id, site_id, transaction_id, kind),
          queued AS (INSERT INTO mail_requests (site_id, transaction_id, status)
                     SELECT DISTINCT site_id, transaction_id, CASE WHEN kind = 'failure' THEN 'failed' ELSE 'complete' END FROM unrendered)
     SELECT id FROM unrendered`,
    [key, count - resent.length],
  );
  const more = 'id' in which ? false : (await db.one<{ more: boolean }>(`SELECT EXISTS (SELECT 1 FROM email_outbox WHERE ${failedNotPruned} AND ${chosen}) AS more`, [key])).more;
  const ids = (rows: { id: number }[]) => rows.map((row) => row.id).sort((a, b) => a - b);
  return { resent: ids(resent), requested: ids(requested), more };
}

/** Failed mails whose bodies were not pruned. `status <> 'pending'` lets a look-up by time read email_outbox_prunable_idx (created_at, id). */
const failedNotPruned = `status = 'failed' AND status <> 'pending' AND bodies_pruned_at IS NULL`;

export interface FailedMail {
  id: number;
  transaction_id: number;
  kind: string;
  created_at: Date;
  /** Who never got it: the recipients a relay refused for good or still deferred at the last attempt while others took it, else every To and Bcc address. */
  owed_to: string[];
  last_error: string | null;
}

/**
 * Failed mails not pruned, written since `since`, oldest first, at most `count` (`trustfare mail
 * failed`): what `mail resend` would send again (or request again), and to whom. `more` says
 * others are left.
 */
export async function failedMails(db: Queryable, since: Date, count: number): Promise<{ mails: FailedMail[]; more: boolean }> {
  const rows = await db.query<FailedMail & Record<string, unknown>>(
    `SELECT id, transaction_id, kind, created_at, COALESCE(retry_recipients, to_addresses || bcc_addresses) AS owed_to, last_error
       FROM email_outbox
      WHERE ${failedNotPruned} AND created_at >= $1
      ORDER BY created_at, id
      LIMIT $2`,
    [since, count + 1],
  );
  return { mails: rows.slice(0, count), more: rows.length > count };
}

/** What an operator needs to know of one outbox mail that was not resent; undefined when there is none with that id. */
export async function outboxMail(db: Queryable, id: number): Promise<{ status: string; transaction_id: number; kind: string; language: string } | undefined> {
  return db.maybeOne('SELECT status, transaction_id, kind, language FROM email_outbox WHERE id = $1', [id]);
}

/** An `email_outbox` row as rendering writes it (the batch insert takes these as JSON: arrays as JSON arrays). */
export interface RenderedOutboxRow {
  site_id: number;
  transaction_id: number;
  kind: string;
  language: string;
  from_name: string;
  reply_to: string | null;
  to_addresses: string[];
  bcc_addresses: string[];
  subject: string;
  text_body: string;
  html_body: string;
  status: 'pending' | 'failed';
  last_error: string | null;
}

/** Every mail the facts call for at their transaction's status, planned and rendered now. */
async function renderedRows(facts: TransactionFacts): Promise<RenderedOutboxRow[]> {
  const plans = planMails({
    type: facts.transaction.type,
    status: facts.transaction.status,
    payerEmail: payerEmailOf(facts),
    channel: {
      primaryMail: facts.channel.primary_mail,
      bccTransactionalMails: facts.channel.mail_bcc_transactional_mails,
      mailFailures: facts.channel.mail_failures,
      chargebackMail: facts.channel.chargeback_mail,
    },
  });
  return plans.map((plan) => {
    const language = mailLanguage(plan.kind, facts);
    const data = mailDataFor(plan.kind, facts, language);
    // A template that throws fails the request, which the run then sets aside (renderOneByOne)
    // for `mail retry` once the cause is fixed. Stored as a `failed` row instead, it could never
    // be sent: the row holds the request's one (transaction, kind) place.
    const rendered = renderMail(data);
    return {
      site_id: facts.transaction.site_id, transaction_id: facts.transaction.id, kind: plan.kind, language, from_name: data.company, reply_to: plan.replyTo,
      to_addresses: plan.to, bcc_addresses: plan.bcc, subject: rendered.subject, text_body: rendered.text, html_body: rendered.html,
      status: 'pending', last_error: null,
    };
  });
}

// One row per transaction and kind: a mail requested twice (in one batch or in two) is written
// once. Pending rows are written claimed: their first attempt made, due again only after $2.
const insertStatement = {
  name: 'mail_outbox_insert',
  text: `INSERT INTO email_outbox (site_id, transaction_id, kind, language, from_name, reply_to, to_addresses, bcc_addresses, subject, text_body, html_body, status, last_error,
                                  attempts, next_attempt_at)
         SELECT site_id, transaction_id, kind, language, from_name, reply_to, to_addresses, bcc_addresses, subject, text_body, html_body, status, last_error,
                CASE WHEN status = 'pending' THEN 1 ELSE 0 END, CASE WHEN status = 'pending' THEN $2::timestamptz ELSE now() END
           FROM json_to_recordset($1::json) AS r(site_id bigint, transaction_id bigint, kind text, language text, from_name text, reply_to text,
                                                 to_addresses text[], bcc_addresses text[], subject text, text_body text, html_body text, status text, last_error text)
         ON CONFLICT (transaction_id, kind) DO NOTHING
         RETURNING id, transaction_id, kind, attempts, status`,
};

async function insertMails(tx: Queryable, rows: RenderedOutboxRow[], claimedUntil: Date): Promise<{ written: number; claimed: ClaimedMail[] }> {
  if (rows.length === 0) return { written: 0, claimed: [] };
  const inserted = await tx.query<{ id: number; transaction_id: number; kind: string; attempts: number; status: string }>(insertStatement, [JSON.stringify(rows), claimedUntil]);
  const byKey = new Map(rows.map((row) => [`${row.transaction_id}:${row.kind}`, row]));
  const claimed = inserted.flatMap(({ id, transaction_id, kind, attempts, status }) => {
    if (status !== 'pending') return [];
    const { status: _status, last_error: _error, ...mail } = byKey.get(`${transaction_id}:${kind}`)!;
    return [{ ...mail, id, attempts }];
  });
  return { written: inserted.length, claimed };
}
