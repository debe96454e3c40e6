import { hashToken } from '../credentials.js';
import { limits } from '../../limits.js';
import type { Queryable } from '../../storage/db.js';
import { pickedBy } from '../../storage/batches.js';

/**
 * What one payment modal auth string has been used for (`modal_auth_uses`, migration 011). The
 * string stays valid for 15 minutes, so without a shared record it could open any number of
 * modal sessions, each with three card attempts and its own draft booking: a card-testing loop
 * on the integrator's account. Every session the string opens shares one record: at most
 * `modalSessionsPerAuthMax` sessions, `modalDraftBookingsPerAuthMax` draft bookings and
 * `modalFailedAttemptsPerAuthMax` failed attempts in all (the attempts are counted in
 * sessions.ts). Only the SHA-256 of the string is stored. The vaulting app's cardvaultuser tokens
 * share the table for their sessions, failed attempts and captures (claimCardVaultTokenSession).
 */
export interface ModalAuthUse {
  auth: string;
  channelId: number;
  /** The timestamp the string was signed with (verifyAuthString). */
  signedAt: Date;
  /** The session will create a draft booking (booking ID 0). */
  createsDraft: boolean;
}

/**
 * Counts one more session (and draft booking) for the auth string, in the caller's transaction
 * (the row stays locked until it ends, and is given back if the session is not opened after
 * all). Answers the record's id, or null when the string has been used up.
 */
export async function claimModalAuthSession(tx: Queryable, use: ModalAuthUse, now: Date): Promise<number | null> {
  // The record must outlive every session the string can open: opened within its lifetime (plus
  // clock tolerance), each living a session's lifetime. Otherwise an old session would lose the
  // shared count and get its own three attempts again.
  const expiresAt = new Date(use.signedAt.getTime() + (limits.modalAuthLifetimeSeconds + limits.modalAuthClockSkewSeconds + limits.hostedSessionLifetimeSeconds) * 1000);
  return claimSession(tx, {
    authHash: hashToken(use.auth), channelId: use.channelId, drafts: use.createsDraft ? 1 : 0, expiresAt,
    sessionsMax: limits.modalSessionsPerAuthMax, draftsMax: limits.modalDraftBookingsPerAuthMax,
  }, now);
}

/**
 * The vaulting app's counterpart: a cardvaultuser token is valid for 15 minutes and sits in a URL
 * handed to the cardholder's browser, and every load of the app opens a new session with its own
 * three attempts. Its sessions share one record, so their failed vault attempts are bounded
 * together (`vaultFailedAttemptsPerTokenMax`, counted in sessions.ts). The token is named by its
 * jti, not its text: the last character of a JWT's signature can be written several ways that
 * all verify, each of which would otherwise count apart. Each load is a hosted_sessions row, so
 * the token opens at most `vaultSessionsPerTokenMax` (no draft bookings here). Only a load that
 * shows the card form counts: a token whose failed attempts or captures are used up opens no
 * session (its page shows only a notice), so such loads never use up its sessions. Answers the
 * record's id, or why no session may be opened.
 */
export async function claimCardVaultTokenSession(tx: Queryable, token: CardVaultToken, now: Date): Promise<CardVaultTokenClaim> {
  const record = cardVaultTokenRecord(token);
  const id = await claimSession(tx, {
    ...record, channelId: token.channelId, drafts: 0, sessionsMax: limits.vaultSessionsPerTokenMax, draftsMax: null,
    failuresMax: limits.vaultFailedAttemptsPerTokenMax, capturesMax: limits.cardVaultCapturesPerTokenMax,
  }, now);
  if (id !== null) return { ok: true, id };
  const used = await tx.one<{ failures: number; captures: number }>('SELECT failures, captures FROM modal_auth_uses WHERE auth_hash = $1', [record.authHash]);
  if (used.failures >= limits.vaultFailedAttemptsPerTokenMax) return { ok: false, reason: 'attempts_exhausted' };
  return { ok: false, reason: used.captures >= limits.cardVaultCapturesPerTokenMax ? 'captures_exhausted' : 'sessions_used_up' };
}

export type CardVaultTokenClaim = { ok: true; id: number } | { ok: false; reason: 'attempts_exhausted' | 'captures_exhausted' | 'sessions_used_up' };

/** A cardvaultuser token as its shared record knows it: `channelId` is recorded if the record is new. */
export interface CardVaultToken {
  tokenId: string;
  issuedAt: number;
  channelId: number;
}

/**
 * The token's record: named by its jti, and kept until every session the token can open has
 * ended, so no live session loses the shared counts.
 */
function cardVaultTokenRecord(token: CardVaultToken): { authHash: string; expiresAt: Date } {
  return {
    authHash: hashToken(`cardvaultuser:${token.tokenId}`),
    expiresAt: new Date((token.issuedAt + limits.cardVaultJwtLifetimeSeconds + limits.hostedSessionLifetimeSeconds) * 1000),
  };
}

/** The id of the token's shared record (which its vaulting app sessions name), or null before it has one. */
export async function cardVaultTokenRecordId(db: Queryable, token: CardVaultToken): Promise<number | null> {
  const row = await db.maybeOne<{ id: number }>('SELECT id FROM modal_auth_uses WHERE auth_hash = $1', [cardVaultTokenRecord(token).authHash]);
  return row?.id ?? null;
}

/**
 * Counts one card posted to the capture endpoint with the token itself, or refuses it (false)
 * once the token captured `cardVaultCapturesPerTokenMax` cards, directly or through its vaulting
 * app sessions (countCardCapture counts those on the same record). One conditional upsert, so
 * parallel captures cannot pass the bound. `channelId` must be a channel of the token's site.
 */
export async function countCardVaultTokenCapture(db: Queryable, token: CardVaultToken, now: Date): Promise<boolean> {
  await pruneExpired(db, now);
  const { authHash, expiresAt } = cardVaultTokenRecord(token);
  const counted = await db.maybeOne(
    `INSERT INTO modal_auth_uses AS u (auth_hash, channel_id, captures, expires_at) VALUES ($1, $2, 1, $3)
     ON CONFLICT (auth_hash) DO UPDATE SET captures = u.captures + 1 WHERE u.captures < $4
     RETURNING captures`,
    [authHash, token.channelId, expiresAt, limits.cardVaultCapturesPerTokenMax],
  );
  return counted !== undefined;
}

/**
 * One more session on the record of `authHash` (created if new), or null past a bound given:
 * sessions, drafts, or (`failuresMax`, `capturesMax`) a record whose failed attempts or captures
 * are used up, where a session could take no card.
 */
async function claimSession(
  tx: Queryable,
  claim: { authHash: string; channelId: number; drafts: number; expiresAt: Date; sessionsMax: number | null; draftsMax: number | null; failuresMax?: number; capturesMax?: number },
  now: Date,
): Promise<number | null> {
  await pruneExpired(tx, now);
  const row = await tx.maybeOne<{ id: number }>(
    `INSERT INTO modal_auth_uses AS u (auth_hash, channel_id, sessions, draft_bookings, expires_at)
     VALUES ($1, $2, 1, $3, $4)
     ON CONFLICT (auth_hash) DO UPDATE SET sessions = u.sessions + 1, draft_bookings = u.draft_bookings + EXCLUDED.draft_bookings
      WHERE ($5::int IS NULL OR u.sessions < $5) AND ($6::int IS NULL OR u.draft_bookings + EXCLUDED.draft_bookings <= $6)
        AND ($7::int IS NULL OR u.failures < $7) AND ($8::int IS NULL OR u.captures < $8)
     RETURNING id`,
    [claim.authHash, claim.channelId, claim.drafts, claim.expiresAt, claim.sessionsMax, claim.draftsMax, claim.failuresMax ?? null, claim.capturesMax ?? null],
  );
  return row?.id ?? null;
}

/** A bounded batch of records no live session can use any more; rows locked elsewhere are left. */
async function pruneExpired(tx: Queryable, now: Date): Promise<void> {
  await tx.query(
    `DELETE FROM modal_auth_uses WHERE ${pickedBy('id', 'SELECT id FROM modal_auth_uses WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED')}`,
    [now, limits.modalAuthUsesPruneBatch],
  );
}
