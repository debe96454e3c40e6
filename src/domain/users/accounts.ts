import { limits } from '../../limits.js';
import type { Queryable, Transaction } from '../../storage/db.js';
import { AccountError } from './errors.js';
import { textProblem } from '../text.js';
import { patternPhrase } from '../patterns.js';
import { emailAddressPattern, isEmailAddress } from '../reference-data.js';
import { hashPassword, passwordProblem } from './passwords.js';
import { clearLoginFailures } from './lockout.js';
import { revokeRefreshTokens } from './refresh-tokens.js';
import { generateTotpSecret, matchTotp, openTotpSecret, otpauthUri, sealTotpSecret } from './totp.js';

export type Role = 'member_admin' | 'member';
export const roles: readonly Role[] = ['member_admin', 'member'];

export interface SiteRecord {
  id: number;
  path: string;
  name: string;
}

// Top-level paths of the service itself; a site may not shadow them.
const reservedSitePaths = new Set(['api', 'assets', 'docs', 'healthz', 'modal', 'openapi', 'pay', 'readyz', 'static', 'vault', 'web', 'site-json']);
const sitePathPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;
const usernamePattern = /^[A-Za-z0-9][A-Za-z0-9._@+-]*$/;

export async function createSite(db: Queryable, input: { path: string; name: string }): Promise<SiteRecord> {
  if (!sitePathPattern.test(input.path)) throw new AccountError('invalid', 'path must be 1-63 lowercase letters, digits or dashes, starting with a letter or digit', 'path');
  if (reservedSitePaths.has(input.path)) throw new AccountError('invalid', `path ${input.path} is reserved`, 'path');
  const name = input.name.trim();
  const nameProblem = textProblem(name, { maxLength: limits.nameLengthMax, kind: 'name' });
  if (nameProblem) throw new AccountError('invalid', `name ${nameProblem}`, 'name');
  const row = await db.maybeOne<{ id: number; path: string; name: string }>('INSERT INTO sites (path, name) VALUES ($1, $2) ON CONFLICT (path) DO NOTHING RETURNING id, path, name', [input.path, name]);
  if (!row) throw new AccountError('conflict', `site ${input.path} already exists`, 'path');
  return row;
}

export async function findSite(db: Queryable, path: string): Promise<SiteRecord> {
  const row = await db.maybeOne<{ id: number; path: string; name: string }>('SELECT id, path, name FROM sites WHERE path = $1', [path]);
  if (!row) throw new AccountError('not_found', `no site with path ${path}`, 'site');
  return row;
}

export interface UserRecord {
  id: number;
  username: string;
  email: string;
  displayName: string;
  isPlatformAdmin: boolean;
}

export interface NewUser {
  username: string;
  password: string;
  email: string;
  displayName?: string;
  isPlatformAdmin?: boolean;
}

export async function createUser(db: Queryable, input: NewUser): Promise<UserRecord> {
  if (input.username.length > limits.usernameLengthMax || !usernamePattern.test(input.username)) {
    throw new AccountError('invalid', `username must be 1-${limits.usernameLengthMax} letters, digits or . _ @ + -`, 'username');
  }
  if (input.email.length > limits.emailLengthMax || !isEmailAddress(input.email)) throw new AccountError('invalid', `email must be ${patternPhrase(emailAddressPattern)}`, 'email');
  const problem = passwordProblem(input.password);
  if (problem) throw new AccountError('invalid', `password ${problem}`, 'password');
  const displayName = (input.displayName ?? input.username).trim();
  const displayNameProblem = textProblem(displayName, { maxLength: limits.nameLengthMax, kind: 'name' });
  if (displayNameProblem) throw new AccountError('invalid', `display name ${displayNameProblem}`, 'display_name');
  const passwordHash = await hashPassword(input.password);
  // Usernames are unique regardless of case (migration 046's index): logins and the lock-out find them so.
  const row = await db.maybeOne<{ id: number }>(
    `INSERT INTO users (username, email, display_name, password_hash, is_platform_admin) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING RETURNING id`,
    [input.username, input.email, displayName, passwordHash, input.isPlatformAdmin ?? false],
  );
  if (!row) throw new AccountError('conflict', `username ${input.username} is taken`, 'username');
  return { id: row.id, username: input.username, email: input.email, displayName, isPlatformAdmin: input.isPlatformAdmin ?? false };
}

export async function findUser(db: Queryable, username: string): Promise<UserRecord> {
  const row = await db.maybeOne<{ id: number; username: string; email: string; display_name: string; is_platform_admin: boolean }>(
    'SELECT id, username, email, display_name, is_platform_admin FROM users WHERE lower(username COLLATE "C") = lower($1::text COLLATE "C")',
    [username],
  );
  if (!row) throw new AccountError('not_found', `no user named ${username}`, 'username');
  return { id: row.id, username: row.username, email: row.email, displayName: row.display_name, isPlatformAdmin: row.is_platform_admin };
}

export interface Membership {
  siteId: number;
  userId: number;
  role: Role;
  readOnly: boolean;
}

/**
 * The members who can act for their site when no user is at hand: the payment modal makes its
 * bookings and payments as one of them (siteActor, src/domain/hosted/modal.ts). A read-only member
 * may write nothing, so cannot.
 */
export const siteActorCondition = 'NOT read_only';

/**
 * Refuses to change the membership of `userId` so that it no longer can act for the site when it
 * is the site's last member that can (siteActorCondition): the payment modal could then open no
 * session for any of the site's channels. Locks those members first, inside the caller's
 * transaction, so two removals at once cannot each leave the other as the last one (the second
 * reads the members left once the first commits). A site that never had such a member (a new
 * site) is not this check's concern.
 */
async function keepSiteActor(tx: Transaction, input: { siteId: number; userId: number }): Promise<void> {
  const actors = await tx.query<{ user_id: number }>(
    `SELECT user_id FROM memberships WHERE site_id = $1 AND ${siteActorCondition} ORDER BY user_id FOR UPDATE`,
    [input.siteId],
  );
  if (actors.length === 1 && actors[0]!.user_id === input.userId) {
    throw new AccountError(
      'conflict',
      'the user is the last member of this site who is not read-only, the member the payment modal makes its bookings as: add another member who is not read-only first',
      'username',
    );
  }
}

/**
 * Adds the user to the site, or changes the role and read-only flag of an existing membership;
 * refused when it would make the site's last member who can act for it read-only (keepSiteActor).
 */
export async function setMembership(tx: Transaction, input: Membership): Promise<Membership> {
  if (!roles.includes(input.role)) throw new AccountError('invalid', `role must be one of ${roles.join(', ')}`, 'role');
  if (input.readOnly) await keepSiteActor(tx, input);
  await tx.query(
    `INSERT INTO memberships (site_id, user_id, role, read_only) VALUES ($1, $2, $3, $4)
     ON CONFLICT (site_id, user_id) DO UPDATE SET role = EXCLUDED.role, read_only = EXCLUDED.read_only`,
    [input.siteId, input.userId, input.role, input.readOnly],
  );
  return input;
}

/**
 * Removes the user from the site. Their API tokens there go with the membership (migration 030's
 * trigger, so a removal made in SQL revokes them too); their logins elsewhere are untouched.
 * Refused for the site's last member who can act for it (keepSiteActor). Returns the number of API
 * tokens revoked.
 */
export async function removeMembership(tx: Transaction, input: { siteId: number; userId: number }): Promise<{ apiTokensRevoked: number }> {
  await keepSiteActor(tx, input);
  // One statement: the count sees the tokens as they were before the trigger deletes them.
  const row = await tx.one<{ removed: number; tokens: number }>(
    `WITH removed AS (DELETE FROM memberships WHERE site_id = $1 AND user_id = $2 RETURNING user_id)
     SELECT (SELECT count(*)::int FROM removed) AS removed, (SELECT count(*)::int FROM api_tokens WHERE site_id = $1 AND user_id = $2) AS tokens`,
    [input.siteId, input.userId],
  );
  if (row.removed === 0) throw new AccountError('not_found', 'the user is not a member of this site', 'username');
  return { apiTokensRevoked: row.tokens };
}

/**
 * Sets a new password. Every refresh token of the user stops working and any lock-out is lifted;
 * API tokens are separate credentials and stay valid (docs/auth.md).
 */
/** Marks whether the user may sign off payouts (the user object's `can_sign_off_payout`). */
export async function setCanSignOffPayout(db: Queryable, options: { userId: number; canSignOffPayout: boolean }): Promise<void> {
  await db.query('UPDATE users SET can_sign_off_payout = $2 WHERE id = $1', [options.userId, options.canSignOffPayout]);
}

export async function setPassword(db: Queryable, userId: number, password: string): Promise<void> {
  const problem = passwordProblem(password);
  if (problem) throw new AccountError('invalid', `password ${problem}`, 'password');
  const passwordHash = await hashPassword(password);
  const row = await db.maybeOne<{ username: string }>('UPDATE users SET password_hash = $2, password_changed_at = now() WHERE id = $1 RETURNING username', [userId, passwordHash]);
  if (!row) throw new AccountError('not_found', 'no such user', 'username');
  await revokeRefreshTokens(db, userId);
  await clearLoginFailures(db, row.username);
}

/**
 * Starts (or restarts) two-factor enrolment: a new secret, not yet required at login until
 * confirmed with a code from the authenticator app.
 */
export async function enrolTwoFactor(db: Queryable, options: { userId: number; username: string; signingSecret: Uint8Array; issuer: string }): Promise<{ secret: string; otpauth_uri: string }> {
  const secret = generateTotpSecret();
  const sealed = sealTotpSecret(options.signingSecret, options.userId, secret);
  await db.query('UPDATE users SET totp_secret = $2, two_factor_confirmed_at = NULL, totp_last_step = NULL WHERE id = $1', [options.userId, sealed]);
  return { secret, otpauth_uri: otpauthUri({ secret, username: options.username, issuer: options.issuer }) };
}

/**
 * Confirms two-factor enrolment: from now on a login needs a code. Every credential obtained with
 * the password alone ends here, as at a password change (docs/auth.md): the refresh tokens are
 * deleted, and `password_changed_at` moves to this moment so the user and vaulting-app JWTs issued
 * before it, and the vaulting-app sessions opened with them, are refused (revokedByPasswordChange,
 * hosted/sessions.ts), the column being when the user's way of logging in last changed. A refresh
 * token taken before the user turned 2FA on would otherwise mint JWTs for ever, code or not.
 */
export async function confirmTwoFactor(db: Queryable, options: { userId: number; code: string; signingSecret: Uint8Array; now: Date }): Promise<{ two_factor_confirmed_at: string }> {
  const row = await db.maybeOne<{ totp_secret: string | null }>('SELECT totp_secret FROM users WHERE id = $1', [options.userId]);
  if (!row?.totp_secret) throw new AccountError('invalid', 'two-factor enrolment has not started: run `user 2fa enrol` first', 'username');
  const step = matchTotp(openTotpSecret(options.signingSecret, options.userId, row.totp_secret), options.code, options.now, null);
  if (step === null) throw new AccountError('invalid', 'the code does not match: check the authenticator app and the clock', 'code');
  await db.query('UPDATE users SET two_factor_confirmed_at = $2, totp_last_step = $3, password_changed_at = greatest(password_changed_at, $2) WHERE id = $1', [options.userId, options.now, step]);
  await revokeRefreshTokens(db, options.userId);
  return { two_factor_confirmed_at: options.now.toISOString() };
}
