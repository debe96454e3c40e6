import { randomBytes } from 'node:crypto';
import { hashToken } from '../credentials.js';
import { limits } from '../../limits.js';
import type { Db, Queryable } from '../../storage/db.js';

/**
 * A hosted page session: created when the vaulting app, the modal frame or the payment request
 * page opens, and presented by that page (as a bearer token) to capture a card and pay. It is
 * the only authority those pages hold, scoped to one site and channel, and for payments to one
 * booking and amount. Only the token's hash is stored.
 */
export type HostedSessionKind = 'vault' | 'modal' | 'pay';

export interface HostedSessionOptions {
  /** Vaulting app: echoed back on redirect. */
  sessionId?: string;
  /** Vaulting app: where to send the user on completion (already checked to be http(s)). */
  redirect?: string;
  /** Vaulting app on test channels: forced decline code. */
  failCode?: string;
  /** Modal: the fields that were signed into the auth string (for the record). */
  verify?: Record<string, unknown>;
  /** Cardholder details prefilled into the form. */
  cardholder?: Record<string, string>;
  /** Modal: SHA-256 of the opener name of the host script's modal (ModalBookingRequest.opener). */
  openerHash?: string;
}

export interface HostedSession {
  id: number;
  kind: HostedSessionKind;
  siteId: number;
  channelId: number;
  userId: number | null;
  bookingId: number | null;
  amount: number | null;
  currency: string | null;
  hostOrigin: string | null;
  language: string;
  options: HostedSessionOptions;
  attempts: number;
  /** An attempt was started and has no recorded outcome yet (migration 055): another is refused. */
  attemptInFlight: boolean;
  transactionId: number | null;
  pendingTransactionId: number | null;
  /** The session's own latest attempt, whatever its outcome (migration 028). */
  lastTransactionId: number | null;
  /** The page's name for that attempt (`attempt_id`, migration 054), null if it gave none. */
  lastAttemptId: string | null;
  expiresAt: Date;
  /**
   * The shared record of the credential that opened the session (modal-auth-uses.ts): a modal
   * session's auth string, a vaulting app session's cardvaultuser token; null for a payment
   * request page (bounded per booking instead, payments.ts).
   */
  modalAuthId: number | null;
  /** Failed (or in-flight) attempts of every session opened with the same auth string or token. */
  authFailures: number | null;
}

export const hostedSessionTokenPrefix = 'hps_';

export function looksLikeHostedSessionToken(token: string): boolean {
  return token.startsWith(hostedSessionTokenPrefix) && /^hps_[A-Za-z0-9_-]{43}$/.test(token);
}

export interface NewHostedSession {
  kind: HostedSessionKind;
  siteId: number;
  channelId: number;
  userId?: number | null;
  bookingId?: number | null;
  amount?: number | null;
  currency?: string | null;
  hostOrigin?: string | null;
  language: string;
  options?: HostedSessionOptions;
  modalAuthId?: number | null;
  /** A payment the session starts with: a reloaded modal frame's, made by an earlier session (modal.ts). */
  transactionId?: number | null;
  /** A payment the session starts on, awaiting its 3DS challenge: a reloaded modal frame's (modal.ts). */
  pendingTransactionId?: number | null;
}

interface SessionRow {
  id: number;
  kind: HostedSessionKind;
  site_id: number;
  channel_id: number;
  user_id: number | null;
  booking_id: number | null;
  amount: number | null;
  currency: string | null;
  host_origin: string | null;
  language: string;
  options: HostedSessionOptions;
  attempts: number;
  attempt_in_flight: boolean;
  transaction_id: number | null;
  pending_transaction_id: number | null;
  last_transaction_id: number | null;
  last_attempt_id: string | null;
  expires_at: Date;
  modal_auth_id: number | null;
  auth_failures: number | null;
}

// Usable in SELECT ... FROM hosted_sessions and in RETURNING alike.
const columns = `id, kind, site_id, channel_id, user_id, booking_id, amount, currency, host_origin, language, options,
  attempts, attempt_in_flight, transaction_id, pending_transaction_id, last_transaction_id, last_attempt_id, expires_at, modal_auth_id,
  (SELECT a.failures FROM modal_auth_uses a WHERE a.id = hosted_sessions.modal_auth_id) AS auth_failures`;

function fromRow(row: SessionRow): HostedSession {
  return {
    id: row.id,
    kind: row.kind,
    siteId: row.site_id,
    channelId: row.channel_id,
    userId: row.user_id,
    bookingId: row.booking_id,
    amount: row.amount,
    currency: row.currency?.trim() ?? null,
    hostOrigin: row.host_origin,
    language: row.language,
    options: row.options,
    attempts: row.attempts,
    attemptInFlight: row.attempt_in_flight,
    transactionId: row.transaction_id,
    pendingTransactionId: row.pending_transaction_id,
    lastTransactionId: row.last_transaction_id,
    lastAttemptId: row.last_attempt_id,
    expiresAt: row.expires_at,
    modalAuthId: row.modal_auth_id,
    authFailures: row.auth_failures,
  };
}

export async function createHostedSession(db: Queryable, input: NewHostedSession, now: Date): Promise<{ token: string; session: HostedSession }> {
  const token = hostedSessionTokenPrefix + randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + limits.hostedSessionLifetimeSeconds * 1000);
  const row = await db.one<SessionRow & Record<string, unknown>>(
    `INSERT INTO hosted_sessions (token_hash, kind, site_id, channel_id, user_id, booking_id, amount, currency, host_origin, language, options, expires_at, modal_auth_id,
       transaction_id, pending_transaction_id, last_transaction_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING ${columns}`,
    [hashToken(token), input.kind, input.siteId, input.channelId, input.userId ?? null, input.bookingId ?? null, input.amount ?? null, input.currency ?? null,
      input.hostOrigin ?? null, input.language, JSON.stringify(input.options ?? {}), expiresAt, input.modalAuthId ?? null, input.transactionId ?? null,
      input.pendingTransactionId ?? null, input.transactionId ?? input.pendingTransactionId ?? null],
  );
  return { token, session: fromRow(row) };
}

/**
 * The live session of a token, or null when unknown or expired. A vaulting app's session also
 * ends with its user's grant, as the cardvaultuser token that opened it would (card-vault-user.ts):
 * once the user is no longer a member of the site, is made read-only, or changes password, the
 * page stores no more cards (the REST API sees such changes on the next request too).
 */
export async function findHostedSession(db: Queryable, token: string, now: Date): Promise<HostedSession | null> {
  if (!looksLikeHostedSessionToken(token)) return null;
  const row = await db.maybeOne<SessionRow & Record<string, unknown>>(
    {
      name: 'hosted_session_by_token',
      text: `SELECT ${columns} FROM hosted_sessions
              WHERE token_hash = $1 AND expires_at > $2
                AND (kind <> 'vault' OR EXISTS (
                      SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id
                       WHERE m.user_id = hosted_sessions.user_id AND m.site_id = hosted_sessions.site_id AND NOT m.read_only
                         AND u.password_changed_at <= hosted_sessions.created_at))`,
    } as never,
    [hashToken(token), now],
  );
  return row ? fromRow(row) : null;
}

export async function getHostedSession(db: Queryable, id: number): Promise<HostedSession> {
  return fromRow(await db.one<SessionRow & Record<string, unknown>>(`SELECT ${columns} FROM hosted_sessions WHERE id = $1`, [id]));
}

export async function attachBooking(db: Queryable, sessionId: number, bookingId: number): Promise<void> {
  await db.query('UPDATE hosted_sessions SET booking_id = $2 WHERE id = $1 AND booking_id IS NULL', [sessionId, bookingId]);
}

export type AttemptRefusal = 'attempts_exhausted' | 'already_completed' | 'in_progress';
export type CaptureRefusal = 'captures_exhausted' | 'already_completed' | 'in_progress';

/** Failed attempts allowed across every session of one shared record, by the kind of session. */
function sharedFailuresMax(kind: HostedSessionKind): number {
  return kind === 'vault' ? limits.vaultFailedAttemptsPerTokenMax : limits.modalFailedAttemptsPerAuthMax;
}

/**
 * Starts a card attempt. The session row is locked while it is judged: refused once
 * `hostedFailedAttemptsMax` attempts were made, after a success, or while another attempt awaits
 * its outcome; a modal or vaulting app session also needs its credential's shared count
 * (`modalFailedAttemptsPerAuthMax` across every session the auth string opened,
 * `vaultFailedAttemptsPerTokenMax` across every session the cardvaultuser token opened). Both
 * counts are taken before the processor is called, so parallel requests cannot exceed either limit.
 */
export async function startAttempt(db: Db, sessionId: number): Promise<{ ok: true; attempt: number } | { ok: false; reason: AttemptRefusal }> {
  return db.transaction(async (tx) => {
    const open = await tx.maybeOne<{ modal_auth_id: number | null; kind: HostedSessionKind }>(
      `SELECT modal_auth_id, kind FROM hosted_sessions
        WHERE id = $1 AND attempts < $2 AND transaction_id IS NULL AND pending_transaction_id IS NULL AND NOT attempt_in_flight
          FOR UPDATE`,
      [sessionId, limits.hostedFailedAttemptsMax],
    );
    if (!open) {
      const current = await getHostedSession(tx, sessionId);
      if (current.transactionId !== null) return { ok: false, reason: 'already_completed' };
      if (current.pendingTransactionId !== null || current.attemptInFlight) return { ok: false, reason: 'in_progress' };
      return { ok: false, reason: 'attempts_exhausted' };
    }
    if (open.modal_auth_id !== null) {
      const sameModal = open.kind === 'modal' ? await sameModalPayment(tx, { sessionId, modalAuthId: open.modal_auth_id }) : null;
      if (sameModal) return { ok: false, reason: sameModal };
      const counted = await tx.maybeOne(
        'UPDATE modal_auth_uses SET failures = failures + 1 WHERE id = $1 AND failures < $2 RETURNING failures',
        [open.modal_auth_id, sharedFailuresMax(open.kind)],
      );
      if (!counted) return { ok: false, reason: 'attempts_exhausted' };
    }
    const row = await tx.one<{ attempts: number }>('UPDATE hosted_sessions SET attempts = attempts + 1, attempt_in_flight = true WHERE id = $1 RETURNING attempts', [sessionId]);
    return { ok: true, attempt: row.attempts };
  });
}

/**
 * Whether another session of the same modal (its reloaded frame: same auth string, booking and
 * `opener`, docs/modal.md) has paid the booking or has a payment under way. A frame reloaded
 * while its payment was at the bank opened a session that knew nothing of it, and the payer paid
 * the deposit again. The shared record is locked first, so sessions of one string starting at
 * the same moment are judged one after the other. The earlier session's payment counts by its
 * transaction's status (the reloaded frame never reads it back, so a settled one would hold it
 * forever), and a 3DS challenge does not hold it: the reload took the challenge away from the
 * payer, it will expire, and the reloaded frame must be able to pay.
 */
async function sameModalPayment(tx: Queryable, options: { sessionId: number; modalAuthId: number }): Promise<'already_completed' | 'in_progress' | null> {
  await tx.query('SELECT 1 FROM modal_auth_uses WHERE id = $1 FOR UPDATE', [options.modalAuthId]);
  const row = await tx.one<{ completed: boolean; in_progress: boolean }>(
    `SELECT coalesce(bool_or(o.transaction_id IS NOT NULL OR t.status = 'complete'), false) AS completed,
            coalesce(bool_or(o.attempt_in_flight OR t.status = 'incomplete'), false) AS in_progress
       FROM hosted_sessions s
       JOIN hosted_sessions o ON o.modal_auth_id = s.modal_auth_id AND o.booking_id = s.booking_id AND o.id <> s.id
                             AND o.options->>'openerHash' = s.options->>'openerHash'
       LEFT JOIN transactions t ON t.id = o.pending_transaction_id
      WHERE s.id = $1`,
    [options.sessionId],
  );
  return row.completed ? 'already_completed' : row.in_progress ? 'in_progress' : null;
}

/** When the window of the payment request pages' per-booking bounds opened, seen at `now`. */
export function payRequestWindowStart(now: Date): Date {
  return new Date(now.getTime() - limits.payRequestFailedAttemptsWindowSeconds * 1000);
}

// The cards captured by the payment request pages of booking `booking` opened after `since`
// (a session lives 30 minutes, so these are the captures of the window, give or take one page).
const bookingCapturesSql = (booking: string, since: string) =>
  `(SELECT coalesce(sum(o.captures), 0)::int FROM hosted_sessions o WHERE o.booking_id = ${booking} AND o.kind = 'pay' AND o.created_at > ${since})`;

/**
 * Counts one card the session submits to the capture endpoint, accepted or not, or refuses it:
 * `already_completed` once the session's payment (or vault) completed, since it has nothing left to
 * pay and the card would only be stored and a capture token minted for nothing; `in_progress` while
 * its payment awaits its outcome (a 3DS challenge, an unknown result), which startAttempt would
 * refuse the card's payment for (it was stored, and counted, all the same); otherwise
 * `captures_exhausted` after `limits.hostedCardCapturesPerSessionMax`, for a payment request page once its
 * booking's pages together captured `payRequestCapturesPerBookingMax` within the window, and for
 * a vaulting app page once its cardvaultuser token captured `cardVaultCapturesPerTokenMax`
 * (directly or by any of its pages, on the token's shared record). Each page load opens a new
 * session with its own allowance, so the booking's and the token's bounds are what end a card
 * tester's reloading. One statement: the session row is locked first (as startAttempt does, then
 * the shared record) and its bound re-checked on it, so parallel captures cannot pass it, nor the
 * token's; the booking's sum is read as the statement starts, so pages capturing at the same
 * moment can pass it by the captures in flight (as with `payRequestFailedAttemptsPerBookingMax`).
 */
export async function countCardCapture(db: Queryable, sessionId: number, now: Date): Promise<CaptureRefusal | null> {
  const counted = await db.maybeOne(
    `WITH session AS (
       SELECT s.id, s.kind, s.modal_auth_id FROM hosted_sessions s
        WHERE s.id = $1 AND s.captures < $2 AND s.transaction_id IS NULL AND s.pending_transaction_id IS NULL
          AND (s.kind <> 'pay' OR s.booking_id IS NULL OR ${bookingCapturesSql('s.booking_id', '$4')} < $3)
          FOR UPDATE),
     shared AS (
       UPDATE modal_auth_uses u SET captures = u.captures + 1 FROM session
        WHERE session.kind = 'vault' AND u.id = session.modal_auth_id AND u.captures < $5
        RETURNING u.id)
     UPDATE hosted_sessions s SET captures = s.captures + 1 FROM session
      WHERE s.id = session.id AND (session.kind <> 'vault' OR session.modal_auth_id IS NULL OR EXISTS (SELECT 1 FROM shared))
      RETURNING s.captures`,
    [sessionId, limits.hostedCardCapturesPerSessionMax, limits.payRequestCapturesPerBookingMax, payRequestWindowStart(now), limits.cardVaultCapturesPerTokenMax],
  );
  if (counted !== undefined) return null;
  // Refused: say why, as startAttempt does (a completed page's answer is not "no more cards").
  const current = await getHostedSession(db, sessionId);
  if (current.transactionId !== null) return 'already_completed';
  return current.pendingTransactionId !== null ? 'in_progress' : 'captures_exhausted';
}

/** Whether the booking's payment request pages captured all the cards they may in the window. */
export async function payRequestCapturesExhausted(db: Queryable, bookingId: number, now: Date): Promise<boolean> {
  const { captures } = await db.one<{ captures: number }>(`SELECT ${bookingCapturesSql('$1', '$2')} AS captures`, [bookingId, payRequestWindowStart(now)]);
  return captures >= limits.payRequestCapturesPerBookingMax;
}

/**
 * Gives one attempt back to the session and to its auth string: an attempt that never reached
 * the bank (bad input, our own error). One statement, session row first like startAttempt.
 */
export async function cancelAttempt(db: Queryable, sessionId: number): Promise<void> {
  await db.query(
    `WITH session AS (UPDATE hosted_sessions SET attempts = greatest(attempts - 1, 0), attempt_in_flight = false WHERE id = $1 RETURNING modal_auth_id)
     UPDATE modal_auth_uses SET failures = greatest(failures - 1, 0) WHERE id = (SELECT modal_auth_id FROM session)`,
    [sessionId],
  );
}

/**
 * Records where an attempt ended: complete ends the session, pending waits for 3DS or
 * reconciliation. A success was not a failed attempt, so the auth string gets it back (once).
 * `attemptId`: the page's name for a new attempt (null when it gave none), kept with it so a page
 * asks for this attempt's outcome, not an earlier one's; left out when an attempt already recorded
 * settles (after its challenge), which keeps its name.
 */
export async function recordAttemptOutcome(db: Queryable, sessionId: number, outcome: { transactionId: number; status: string; attemptId?: string | null }): Promise<void> {
  const named = outcome.attemptId !== undefined;
  // Only the attempt's own answer (named) ends it: a settled challenge read back by a page must
  // not release a newer attempt started meanwhile.
  const attempt = `last_transaction_id = $2, last_attempt_id = CASE WHEN $3::boolean THEN $4::text ELSE last_attempt_id END,
    attempt_in_flight = attempt_in_flight AND NOT $3::boolean`;
  const values = [sessionId, outcome.transactionId, named, outcome.attemptId ?? null];
  if (outcome.status === 'complete') {
    await db.query(
      `WITH session AS (
         UPDATE hosted_sessions SET transaction_id = $2, pending_transaction_id = NULL, ${attempt} WHERE id = $1 AND transaction_id IS NULL RETURNING modal_auth_id)
       UPDATE modal_auth_uses SET failures = greatest(failures - 1, 0) WHERE id = (SELECT modal_auth_id FROM session)`,
      values,
    );
  } else if (outcome.status === 'pending' || outcome.status === 'incomplete') {
    await db.query(`UPDATE hosted_sessions SET pending_transaction_id = $2, ${attempt} WHERE id = $1`, values);
  } else {
    await db.query(`UPDATE hosted_sessions SET pending_transaction_id = NULL, ${attempt} WHERE id = $1`, values);
  }
}

/**
 * The attempts left: the session's own (after `attempts` failed or in flight), and for a modal or
 * vaulting app session no more than its auth string or token has left across all of its sessions.
 */
export function attemptsLeft(session: Pick<HostedSession, 'kind' | 'attempts' | 'transactionId' | 'authFailures'>): number {
  if (session.transactionId !== null) return 0;
  const own = limits.hostedFailedAttemptsMax - session.attempts;
  const shared = session.authFailures === null ? own : sharedFailuresMax(session.kind) - session.authFailures;
  return Math.max(0, Math.min(own, shared));
}
