import { limits } from '../../limits.js';
import { passwordStampSql } from '../credentials.js';
import type { Queryable } from '../../storage/db.js';
import { clearLoginFailures, countLoginAttempt, lockLogin, lockedForSeconds, uncountLoginAttempt } from './lockout.js';
import { verifyPassword } from './passwords.js';
import { matchTotp, openTotpSecret } from './totp.js';

export type LoginResult =
  /**
   * `passwordStamp`: the user's password_changed_at, as text at full precision, read with the hash
   * the login checked: the refresh token it issues is bound to it (refresh-tokens.ts). `passwordAt`:
   * the same instant as the JWTs it issues carry it (passwordStampSql, revokedByPasswordChange).
   */
  | { ok: true; userId: number; siteId: number; passwordStamp: string; passwordAt: number }
  | { ok: false; reason: 'bad_credentials' }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number }
  /** `createsApiTokens`: whether the user may create API tokens in the site (POST api-tokens), the way out the answer names. */
  | { ok: false; reason: 'otp_required'; createsApiTokens: boolean }
  | { ok: false; reason: 'otp_invalid' };

export interface LoginInput {
  username: string;
  password: string;
  otp?: string | undefined;
  /** The site of the URL; a user who is not a member fails like a wrong password. */
  sitePath: string;
  now: Date;
  signingSecret: Uint8Array;
}

interface LoginRow {
  id: number;
  password_hash: string;
  password_stamp: string;
  password_at: number;
  totp_secret: string | null;
  two_factor_confirmed_at: Date | null;
  totp_last_step: number | null;
  site_id: number | null;
  creates_api_tokens: boolean | null;
}

const loginStatement = {
  name: 'auth_login_user',
  text: `SELECT u.id, u.password_hash, u.password_changed_at::text AS password_stamp, ${passwordStampSql} AS password_at, u.totp_secret, u.two_factor_confirmed_at, u.totp_last_step, m.site_id,
                (m.role = 'member_admin' AND NOT m.read_only) AS creates_api_tokens
           FROM users u
           LEFT JOIN sites s ON s.path = $2
           LEFT JOIN memberships m ON m.user_id = u.id AND m.site_id = s.id
          WHERE lower(u.username COLLATE "C") = lower($1::text COLLATE "C")`,
};

/**
 * Checks username, password, site membership and (when confirmed for the user) a TOTP code. The
 * name is matched regardless of case, as usernames are unique (migration 046) and the lock-out
 * counts them.
 * Unknown names, wrong passwords and non-members get the same answer at the same cost. Every
 * wrong password (and wrong code) counts towards the lock-out of that name; the right password
 * sent to a site the user is not a member of does not (its attempt is given back): it guessed
 * nothing, and counting it let a user's own slip (an old bookmark, a removed membership, a
 * mistyped path) lock them out of every site (docs/auth.md "Lock-out").
 */
export async function logIn(db: Queryable, input: LoginInput): Promise<LoginResult> {
  const locked = await lockedForSeconds(db, input.username, input.now);
  if (locked > 0) return { ok: false, reason: 'locked', retryAfterSeconds: locked };
  const attempt = await countLoginAttempt(db, input.username, input.now);
  if (attempt === 'locked') return lockedResult(db, input);
  const user = await db.maybeOne<LoginRow & Record<string, unknown>>(loginStatement as never, [input.username, input.sitePath]);
  const passwordOk = await verifyPassword(user?.password_hash ?? null, input.password);
  if (!user || !passwordOk) return failure(db, input, attempt, 'bad_credentials');
  if (user.site_id === null) {
    await uncountLoginAttempt(db, input.username);
    return { ok: false, reason: 'bad_credentials' };
  }
  if (user.two_factor_confirmed_at && user.totp_secret) {
    if (!input.otp) {
      await uncountLoginAttempt(db, input.username);
      return { ok: false, reason: 'otp_required', createsApiTokens: user.creates_api_tokens === true };
    }
    const secret = openTotpSecret(input.signingSecret, user.id, user.totp_secret);
    const step = matchTotp(secret, input.otp, input.now, user.totp_last_step);
    // The conditional update makes a code single-use even under concurrent logins.
    const claimed = step !== null && (await db.query('UPDATE users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id', [user.id, step])).length === 1;
    if (!claimed) return failure(db, input, attempt, 'otp_invalid');
  }
  await clearLoginFailures(db, input.username);
  return { ok: true, userId: user.id, siteId: user.site_id, passwordStamp: user.password_stamp, passwordAt: user.password_at };
}

/** The attempt was counted before the check; the one that reaches loginFailuresMax locks the name. */
async function failure(db: Queryable, input: LoginInput, attempt: number, reason: 'bad_credentials' | 'otp_invalid'): Promise<LoginResult> {
  if (attempt < limits.loginFailuresMax) return { ok: false, reason };
  await lockLogin(db, input.username, input.now);
  return lockedResult(db, input);
}

async function lockedResult(db: Queryable, input: LoginInput): Promise<LoginResult> {
  return { ok: false, reason: 'locked', retryAfterSeconds: Math.max(1, await lockedForSeconds(db, input.username, input.now)) };
}
