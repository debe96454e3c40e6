import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { limits } from '../limits.js';

/**
 * credential_epoch (migration 016) as a scalar subquery, for a statement to read it in its own
 * snapshot: what remembered principals and authors' names are checked against. A bigint; append
 * `::text` where it is compared as the string a process remembers.
 */
export const credentialEpochSql = '(SELECT e.epoch FROM credential_epoch e)';

/**
 * What a JWT is for. `user` tokens call the REST API; `refresh` tokens only obtain new user
 * tokens; `cardvaultuser` tokens only open the vaulting app.
 */
export type JwtKind = 'user' | 'refresh' | 'cardvaultuser';

export interface JwtClaims {
  userId: number;
  kind: JwtKind;
  /** Site the token was issued for (cardvaultuser tokens are bound to one site). */
  siteId?: number;
  /** `iat` of a verified token, in Unix seconds. */
  issuedAt?: number;
  /**
   * `jti`: random per token signed, so it names the token (card-vault-user.ts). Given when signing,
   * it re-signs a token issued before (with its `iat`): a user's one refresh token (refresh-tokens.ts).
   */
  tokenId?: string;
  /**
   * `pwd_at`: the user's password_changed_at, in microseconds since the epoch (passwordStampSql),
   * as the login or refresh that issued the token read it with what it checked. The token works
   * while the user's is the same (revokedByPasswordChange).
   */
  passwordAt?: number;
}

/**
 * SQL: a user's password_changed_at (`users` alias `u`) as the exact integer JWTs carry (`pwd_at`):
 * microseconds since the epoch (numeric arithmetic, no float rounding; within a double's exact range).
 */
export const passwordStampSql = '(extract(epoch FROM u.password_changed_at) * 1000000)::bigint';

const issuer = 'trustfare';
// The algorithm is pinned: tokens with any other `alg`, including `none`, are refused.
const algorithm = 'HS256';

/** A new random `jti`. */
export function newTokenId(): string {
  return randomBytes(12).toString('base64url');
}

export async function signJwt(secret: Uint8Array, claims: JwtClaims, now: Date = new Date()): Promise<string> {
  const issuedAt = Math.floor(now.getTime() / 1000);
  const jwt = new SignJWT({ kind: claims.kind, ...(claims.siteId ? { site: claims.siteId } : {}), ...(claims.passwordAt !== undefined ? { pwd_at: claims.passwordAt } : {}) })
    .setProtectedHeader({ alg: algorithm, typ: 'JWT' })
    .setIssuer(issuer)
    .setSubject(String(claims.userId))
    .setIssuedAt(issuedAt)
    .setJti(claims.tokenId ?? newTokenId());
  // Refresh tokens do not expire (decisions.md); they are revoked by rotation instead.
  if (claims.kind !== 'refresh') {
    const lifetime = claims.kind === 'cardvaultuser' ? limits.cardVaultJwtLifetimeSeconds : limits.jwtLifetimeSeconds;
    jwt.setExpirationTime(issuedAt + lifetime);
  }
  return jwt.sign(secret);
}

/**
 * Whether each of the token's three parts is base64url exactly as it re-encodes. The decoder
 * ignores the spare bits of a part's last character and a trailing `=`, so one token had several
 * spellings that all verified, each a credential of its own to everything keyed by the token's
 * text (the rate limit gave each spelling its own allowance: session 29). Only the one we issue
 * verifies.
 */
function isCanonicalJwt(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every((part) => /^[A-Za-z0-9_-]*$/.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part);
}

/** Returns the claims of a valid token of the expected kind, or null for anything else. */
export async function verifyJwt(secret: Uint8Array, token: string, expected: JwtKind, now: Date = new Date()): Promise<JwtClaims | null> {
  if (!isCanonicalJwt(token)) return null;
  try {
    const { payload } = await jwtVerify(token, secret, {
      algorithms: [algorithm],
      issuer,
      currentDate: now,
      requiredClaims: expected === 'refresh' ? ['sub', 'iat'] : ['sub', 'iat', 'exp'],
    });
    if (payload.kind !== expected) return null;
    const userId = Number(payload.sub);
    if (!Number.isSafeInteger(userId) || userId <= 0) return null;
    const siteId = typeof payload.site === 'number' ? payload.site : undefined;
    return {
      userId, kind: expected,
      ...(siteId ? { siteId } : {}),
      ...(typeof payload.iat === 'number' ? { issuedAt: payload.iat } : {}),
      ...(typeof payload.jti === 'string' && payload.jti ? { tokenId: payload.jti } : {}),
      ...(Number.isSafeInteger(payload.pwd_at) ? { passwordAt: payload.pwd_at as number } : {}),
    };
  } catch (error) {
    if (error instanceof joseErrors.JOSEError || error instanceof TypeError) return null;
    throw error;
  }
}

/**
 * A password change ends the JWTs issued for the password before it: user tokens on the REST API
 * and cardvaultuser tokens in the vaulting app and card capture alike. The one rule for both.
 * `passwordChangedAt`: the user's, read now (passwordStampSql). A token carries the one its issuer
 * read with the hash it checked (`pwd_at`), so a login that checked the old password while the
 * change ran issues a token that never works; comparing `iat` with the change let it work for its
 * 15 minutes (issued after the change, for the old password). Tokens without it (issued before
 * session 29) keep the old rule: issued before the change, to the second.
 */
export function revokedByPasswordChange(claims: Pick<JwtClaims, 'issuedAt' | 'passwordAt'>, passwordChangedAt: number | null | undefined): boolean {
  if (claims.passwordAt !== undefined) return claims.passwordAt !== passwordChangedAt;
  return claims.issuedAt === undefined || claims.issuedAt < Math.floor((passwordChangedAt ?? 0) / 1_000_000);
}

export function looksLikeJwt(token: string): boolean {
  return token.split('.').length === 3;
}

/** API tokens are opaque: a recognisable prefix and 32 random bytes. Only the hash is stored. */
export const apiTokenPrefix = 'tfat_';

export function generateApiToken(): { token: string; hash: string } {
  const token = apiTokenPrefix + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

/** SHA-256 is right for high-entropy random tokens (unlike passwords, which use Argon2id). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
