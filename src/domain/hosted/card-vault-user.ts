import { passwordStampSql, revokedByPasswordChange, verifyJwt } from '../credentials.js';
import type { Queryable } from '../../storage/db.js';

/**
 * The one check of a `cardvaultuser` JWT, for everything that accepts one: the vaulting app
 * (openVaultApp) and the card capture endpoint (src/routes/cards/auth.ts). The token must be
 * genuine, live and of that kind; its user must still be a member of the site it was issued for,
 * not read-only (the vaulting app writes: it stores cards and records vault transactions), and
 * must not have changed password since it was issued (the REST API's rule for user tokens,
 * revokedByPasswordChange). The token endpoint refuses read-only members already; this covers
 * tokens issued before the user was made read-only or changed password.
 */
export type CardVaultUserCheck =
  /** `tokenId` and `issuedAt` name the token and its age: the vaulting app counts attempts per token. */
  | { ok: true; userId: number; siteId: number; sitePath: string; tokenId: string; issuedAt: number }
  /** Not a genuine, live cardvaultuser token. */
  | { ok: false; reason: 'invalid_token' }
  /** Genuine, but its user changed password since it was issued. */
  | { ok: false; reason: 'revoked' }
  /** Genuine, but its user is no longer a member of the token's site (or `sitePath` is another site). */
  | { ok: false; reason: 'not_member' }
  | { ok: false; reason: 'read_only' };

export async function checkCardVaultUser(
  db: Queryable,
  options: { jwtSecret: Uint8Array; token: string; now: Date; /** The site the caller addressed, when it named one. */ sitePath?: string },
): Promise<CardVaultUserCheck> {
  const claims = await verifyJwt(options.jwtSecret, options.token, 'cardvaultuser', options.now);
  // Every cardvaultuser token is issued for one site, with a jti and iat (signJwt); one without is not ours to honour.
  if (!claims || claims.siteId === undefined || claims.tokenId === undefined || claims.issuedAt === undefined) return { ok: false, reason: 'invalid_token' };
  const row = await db.maybeOne<{ path: string; read_only: boolean; password_changed_at: number }>(
    {
      name: 'card_vault_user_check',
      text: `SELECT s.path, m.read_only, ${passwordStampSql} AS password_changed_at
               FROM memberships m JOIN sites s ON s.id = m.site_id JOIN users u ON u.id = m.user_id
              WHERE m.user_id = $1 AND m.site_id = $2`,
    },
    [claims.userId, claims.siteId],
  );
  if (!row || (options.sitePath !== undefined && row.path !== options.sitePath)) return { ok: false, reason: 'not_member' };
  if (revokedByPasswordChange(claims, row.password_changed_at)) return { ok: false, reason: 'revoked' };
  if (row.read_only) return { ok: false, reason: 'read_only' };
  return { ok: true, userId: claims.userId, siteId: claims.siteId, sitePath: row.path, tokenId: claims.tokenId, issuedAt: claims.issuedAt };
}
