import { randomBytes } from 'node:crypto';
import { hashToken } from '../credentials.js';
import { limits } from '../../limits.js';
import type { Queryable } from '../../storage/db.js';

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
  transactionId: number | null;
  pendingTransactionId: number | null;
  expiresAt: Date;
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
  transaction_id: number | null;
  pending_transaction_id: number | null;
  expires_at: Date;
}

const columns = `id, kind, site_id, channel_id, user_id, booking_id, amount, currency, host_origin, language, options,
  attempts, transaction_id, pending_transaction_id, expires_at`;

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
    transactionId: row.transaction_id,
    pendingTransactionId: row.pending_transaction_id,
    expiresAt: row.expires_at,
  };
}

export async function createHostedSession(db: Queryable, input: NewHostedSession, now: Date): Promise<{ token: string; session: HostedSession }> {
  const token = hostedSessionTokenPrefix + randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + limits.hostedSessionLifetimeSeconds * 1000);
  const row = await db.one<SessionRow & Record<string, unknown>>(
    `INSERT INTO hosted_sessions (token_hash, kind, site_id, channel_id, user_id, booking_id, amount, currency, host_origin, language, options, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${columns}`,
    [hashToken(token), input.kind, input.siteId, input.channelId, input.userId ?? null, input.bookingId ?? null, input.amount ?? null, input.currency ?? null,
      input.hostOrigin ?? null, input.language, JSON.stringify(input.options ?? {}), expiresAt],
  );
  return { token, session: fromRow(row) };
}

/** The live session of a token, or null when unknown or expired. */
export async function findHostedSession(db: Queryable, token: string, now: Date): Promise<HostedSession | null> {
  if (!looksLikeHostedSessionToken(token)) return null;
  const row = await db.maybeOne<SessionRow & Record<string, unknown>>(
    { name: 'hosted_session_by_token', text: `SELECT ${columns} FROM hosted_sessions WHERE token_hash = $1 AND expires_at > $2` } as never,
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

/**
 * Starts a card attempt: one atomic update that refuses once `hostedFailedAttemptsMax` attempts
 * were made, after a success, or while another attempt awaits its outcome. Counting before the
 * processor is called means parallel requests cannot exceed the limit.
 */
export async function startAttempt(db: Queryable, sessionId: number): Promise<{ ok: true; attempt: number } | { ok: false; reason: AttemptRefusal }> {
  const row = await db.maybeOne<{ attempts: number }>(
    `UPDATE hosted_sessions SET attempts = attempts + 1
      WHERE id = $1 AND attempts < $2 AND transaction_id IS NULL AND pending_transaction_id IS NULL
      RETURNING attempts`,
    [sessionId, limits.hostedFailedAttemptsMax],
  );
  if (row) return { ok: true, attempt: row.attempts };
  const current = await getHostedSession(db, sessionId);
  if (current.transactionId !== null) return { ok: false, reason: 'already_completed' };
  if (current.pendingTransactionId !== null) return { ok: false, reason: 'in_progress' };
  return { ok: false, reason: 'attempts_exhausted' };
}

/** An attempt that never reached the bank (bad input, our own error) is given back. */
export async function cancelAttempt(db: Queryable, sessionId: number): Promise<void> {
  await db.query('UPDATE hosted_sessions SET attempts = greatest(attempts - 1, 0) WHERE id = $1', [sessionId]);
}

/** Records where an attempt ended: complete ends the session, pending waits for 3DS or reconciliation. */
export async function recordAttemptOutcome(db: Queryable, sessionId: number, outcome: { transactionId: number; status: string }): Promise<void> {
  if (outcome.status === 'complete') {
    await db.query('UPDATE hosted_sessions SET transaction_id = $2, pending_transaction_id = NULL WHERE id = $1', [sessionId, outcome.transactionId]);
  } else if (outcome.status === 'pending' || outcome.status === 'incomplete') {
    await db.query('UPDATE hosted_sessions SET pending_transaction_id = $2 WHERE id = $1', [sessionId, outcome.transactionId]);
  } else {
    await db.query('UPDATE hosted_sessions SET pending_transaction_id = NULL WHERE id = $1', [sessionId]);
  }
}

/** The attempts left after `session.attempts` were made (failed or in flight). */
export function attemptsLeft(session: Pick<HostedSession, 'attempts' | 'transactionId'>): number {
  if (session.transactionId !== null) return 0;
  return Math.max(0, limits.hostedFailedAttemptsMax - session.attempts);
}
