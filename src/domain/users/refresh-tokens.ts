import { hashToken, newTokenId, passwordStampSql, signJwt, verifyJwt } from '../credentials.js';
import type { Queryable } from '../../storage/db.js';

/**
 * Refresh tokens are JWTs of kind `refresh` without expiry, one per user (spec, "Authentication"
 * 4: kept indefinitely, rotated by DELETE token/refresh, "a new refresh token is then issued at the
 * next authentication"). Only its SHA-256 is stored, with its `jti` (`token_id`) and `iat`
 * (`created_at`), from which a login re-signs the same token with JWT_SECRET (migration 047). A
 * token works while its row exists and the user's password is the one its login checked: DELETE
 * token/refresh and a password change delete the rows, and the row keeps the `password_changed_at`
 * its login read (`passwordStamp`), so a login that checked the old password while the change ran,
 * and inserted its token after the change deleted the others, holds a token that never works
 * (migration 036).
 */
export async function refreshTokenOfLogin(db: Queryable, options: { jwtSecret: Uint8Array; userId: number; passwordStamp: string; now: Date }): Promise<string> {
  const { jwtSecret, userId } = options;
  // A row of a password state that is gone (written by a login that raced a change) never works; it makes way.
  await db.query('DELETE FROM refresh_tokens r USING users u WHERE r.user_id = $1 AND u.id = r.user_id AND r.password_changed_at <> u.password_changed_at', [userId]);
  const tokenId = newTokenId();
  const fresh = await signJwt(jwtSecret, { userId, kind: 'refresh', tokenId }, options.now);
  // Concurrent first logins: one row wins, and every one of them answers with its token.
  await db.query(
    `INSERT INTO refresh_tokens (user_id, token_id, token_hash, created_at, password_changed_at) VALUES ($1, $2, $3, $4, $5::timestamptz)
     ON CONFLICT (user_id) WHERE token_id IS NOT NULL DO NOTHING`,
    [userId, tokenId, hashToken(fresh), options.now, options.passwordStamp],
  );
  const row = await db.maybeOne<{ id: number; token_id: string; token_hash: string; created_at: Date; password_stamp: string }>(
    'SELECT id, token_id, token_hash, created_at, password_changed_at::text AS password_stamp FROM refresh_tokens WHERE user_id = $1 AND token_id IS NOT NULL',
    [userId],
  );
  // The current token belongs to another password state than the one this login checked (it raced
  // a change, or a rotation removed the row): this login's own token, never stored, never works.
  if (!row || row.token_id === tokenId || row.password_stamp !== options.passwordStamp) return fresh;
  const token = await signJwt(jwtSecret, { userId, kind: 'refresh', tokenId: row.token_id }, row.created_at);
  const tokenHash = hashToken(token);
  // Signed under a JWT_SECRET replaced since: that token no longer verifies, so this one takes its row.
  if (tokenHash !== row.token_hash) await db.query('UPDATE refresh_tokens SET token_hash = $2 WHERE id = $1', [row.id, tokenHash]);
  return token;
}

/**
 * The user of a refresh token that is valid and not revoked, with the password state it is bound
 * to (`passwordAt`, for the user JWT it is exchanged for), or null.
 */
export async function verifyRefreshToken(db: Queryable, options: { jwtSecret: Uint8Array; token: string; now: Date }): Promise<{ userId: number; passwordAt: number } | null> {
  const claims = await verifyJwt(options.jwtSecret, options.token, 'refresh', options.now);
  if (!claims) return null;
  const row = await db.maybeOne<{ user_id: number; password_at: number }>(
    `UPDATE refresh_tokens r SET last_used_at = $3 FROM users u
      WHERE r.token_hash = $1 AND r.user_id = $2 AND u.id = r.user_id AND u.password_changed_at = r.password_changed_at
      RETURNING r.user_id, ${passwordStampSql} AS password_at`,
    [hashToken(options.token), claims.userId, options.now],
  );
  return row ? { userId: row.user_id, passwordAt: row.password_at } : null;
}

/** Revokes the user's refresh token (and any issued before migration 047); the next login issues a new one. */
export async function revokeRefreshTokens(db: Queryable, userId: number): Promise<number> {
  const rows = await db.query('DELETE FROM refresh_tokens WHERE user_id = $1 RETURNING id', [userId]);
  return rows.length;
}
