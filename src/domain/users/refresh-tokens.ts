import { hashToken, passwordStampSql, signJwt, verifyJwt } from '../credentials.js';
import { limits } from '../../limits.js';
import type { Queryable } from '../../storage/db.js';

/**
 * Refresh tokens are JWTs of kind `refresh` without expiry; one is issued per login and only its
 * SHA-256 is stored. A token works while its row exists and the user's password is the one its
 * login checked: DELETE token/refresh and a password change delete the rows, and the row keeps the
 * `password_changed_at` its login read (`passwordStamp`), so a login that checked the old password
 * while the change ran, and inserted its token after the change deleted the others, holds a token
 * that never works (migration 036).
 */
export async function issueRefreshToken(db: Queryable, options: { jwtSecret: Uint8Array; userId: number; passwordStamp: string; now: Date }): Promise<string> {
  const token = await signJwt(options.jwtSecret, { userId: options.userId, kind: 'refresh' }, options.now);
  await db.query('INSERT INTO refresh_tokens (user_id, token_hash, created_at, password_changed_at) VALUES ($1, $2, $3, $4::timestamptz)', [
    options.userId, hashToken(token), options.now, options.passwordStamp,
  ]);
  // Bounded per user: beyond the limit, the token least recently used (or issued, if never used)
  // is dropped. A refresh token may be kept indefinitely (spec): dropping the oldest issued killed
  // an integration's token, refreshed every 15 minutes, after 20 logins elsewhere (a script that
  // logs in on each run), while tokens of those logins, never used again, stayed.
  await db.query(
    `DELETE FROM refresh_tokens WHERE user_id = $1 AND id NOT IN (
       SELECT id FROM refresh_tokens WHERE user_id = $1 ORDER BY coalesce(last_used_at, created_at) DESC, id DESC LIMIT $2)`,
    [options.userId, limits.refreshTokensPerUserMax],
  );
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

/** Revokes every refresh token of the user; the next login issues a new one. */
export async function revokeRefreshTokens(db: Queryable, userId: number): Promise<number> {
  const rows = await db.query('DELETE FROM refresh_tokens WHERE user_id = $1 RETURNING id', [userId]);
  return rows.length;
}
