import { generateApiToken } from '../credentials.js';
import { limits } from '../../limits.js';
import type { Queryable, Db } from '../../storage/db.js';
import { AccountError } from './errors.js';
import { textProblem } from '../text.js';
import { calendarDateProblem } from '../gmt.js';

/** An API token as the spec's "API token record"; never the token or its hash. */
export interface ApiTokenRecord {
  id: number;
  tokenable_type: string;
  tokenable_id: number;
  name: string;
  abilities: string[];
  last_used_at: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Tokens belong to a user (the only kind of tokenable). */
export const tokenableType = 'user';

interface TokenRow {
  id: number;
  user_id: number;
  name: string;
  abilities: string[];
  last_used_at: Date | null;
  expires_at: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function listApiTokens(db: Queryable, owner: { siteId: number; userId: number }): Promise<ApiTokenRecord[]> {
  // At most apiTokensPerUserMax rows exist per user and site; the LIMIT only documents the bound.
  const rows = await db.query<TokenRow & Record<string, unknown>>(
    'SELECT id, user_id, name, abilities, last_used_at, expires_at, created_at, updated_at FROM api_tokens WHERE site_id = $1 AND user_id = $2 ORDER BY id LIMIT $3',
    [owner.siteId, owner.userId, limits.perPageMax],
  );
  return rows.map((row) => ({
    id: row.id,
    tokenable_type: tokenableType,
    tokenable_id: row.user_id,
    name: row.name,
    abilities: row.abilities,
    last_used_at: row.last_used_at ? row.last_used_at.toISOString() : null,
    expires_at: row.expires_at,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }));
}

export interface CreatedApiToken {
  id: number;
  /** Shown once; only its hash is stored. */
  token: string;
  expires_at: string | null;
}

export interface NewApiToken {
  siteId: number;
  userId: number;
  name: string;
  expiresAt?: string | null | undefined;
  now: Date;
  /** The API token making the request, when one does (null for a login's JWT, the CLI, the seed): the new token may not outlive it. */
  creatorTokenId?: number | null;
}

/**
 * Creates a token for the user in the site. At most `apiTokensPerUserMax` per user and site,
 * expired ones included (the spec: delete one first). `expiresAt` is a `Y-m-d` date from today
 * (GMT) on; the token works until 23:59:59 GMT that day.
 */
export async function createApiToken(db: Db, input: NewApiToken): Promise<CreatedApiToken> {
  return db.transaction((tx) => insertApiToken(tx, input));
}

/** createApiToken inside the caller's transaction (the seed creates a site, user and token at once). */
export async function insertApiToken(tx: Queryable, input: NewApiToken): Promise<CreatedApiToken> {
  const name = input.name.trim();
  const nameProblem = textProblem(name, { maxLength: limits.nameLengthMax, kind: 'name' });
  if (nameProblem) throw new AccountError('invalid', `name ${nameProblem}`, 'name');
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt !== null) {
    const problem = expiryProblem(expiresAt, input.now);
    if (problem) throw new AccountError('invalid', problem, 'expires_at');
  }
  // The membership row lock serialises concurrent creations, so the count below is exact.
  const member = await tx.maybeOne('SELECT 1 FROM memberships WHERE site_id = $1 AND user_id = $2 FOR UPDATE', [input.siteId, input.userId]);
  if (!member) throw new AccountError('not_found', 'the user is not a member of this site', 'username');
  const { count } = await tx.one<{ count: number }>('SELECT count(*)::int AS count FROM api_tokens WHERE site_id = $1 AND user_id = $2', [input.siteId, input.userId]);
  if (count >= limits.apiTokensPerUserMax) {
    throw new AccountError('limit', `A user may hold at most ${limits.apiTokensPerUserMax} API tokens (expired ones count). Delete one before creating another.`, 'name');
  }
  await refuseOutlivingCreator(tx, input, expiresAt);
  const { token, hash } = generateApiToken();
  const row = await tx.one<{ id: number }>(
    'INSERT INTO api_tokens (site_id, user_id, name, token_hash, expires_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id',
    [input.siteId, input.userId, name, hash, expiresAt, input.now],
  );
  return { id: row.id, token, expires_at: expiresAt };
}

/**
 * A token created with an API token that expires must expire by the same day: otherwise a token
 * given a short life (or leaked) could create a successor without expiry and live for ever. The
 * user's login (a JWT: password, and the code once two-factor authentication is on) creates any.
 * The creator is read in the caller's transaction; deleted since it authenticated, it creates nothing.
 */
async function refuseOutlivingCreator(tx: Queryable, input: NewApiToken, expiresAt: string | null): Promise<void> {
  if (input.creatorTokenId == null) return;
  const creator = await tx.maybeOne<{ expires_at: string | null }>(
    'SELECT expires_at::text AS expires_at FROM api_tokens WHERE id = $1 AND site_id = $2 AND user_id = $3',
    [input.creatorTokenId, input.siteId, input.userId],
  );
  if (!creator) throw new AccountError('not_found', 'the API token making this request was deleted', 'token');
  if (creator.expires_at === null || (expiresAt !== null && expiresAt <= creator.expires_at)) return;
  throw new AccountError('invalid', `must be ${creator.expires_at} or earlier: the API token making this request expires then, and a token cannot create one that outlives it (a login can)`, 'expires_at');
}

function expiryProblem(date: string, now: Date): string | null {
  const dateProblem = calendarDateProblem(date);
  if (dateProblem) return dateProblem;
  const today = now.toISOString().slice(0, 10);
  if (date < today) return 'must be today or a later date (GMT)';
  const latest = new Date(now.getTime() + limits.apiTokenExpiryDaysMax * 86_400_000).toISOString().slice(0, 10);
  if (date > latest) return `must be at most ${limits.apiTokenExpiryDaysMax} days from today`;
  return null;
}

/** Deletes one of the user's tokens in the site; false when there is no such token of theirs. */
export async function deleteApiToken(db: Queryable, owner: { siteId: number; userId: number }, tokenId: number): Promise<boolean> {
  const rows = await db.query('DELETE FROM api_tokens WHERE id = $1 AND site_id = $2 AND user_id = $3 RETURNING id', [tokenId, owner.siteId, owner.userId]);
  return rows.length === 1;
}

export async function deleteAllApiTokens(db: Queryable, owner: { siteId: number; userId: number }): Promise<number> {
  const rows = await db.query('DELETE FROM api_tokens WHERE site_id = $1 AND user_id = $2 RETURNING id', [owner.siteId, owner.userId]);
  return rows.length;
}
