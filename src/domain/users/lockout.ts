import { limits } from '../../limits.js';
import type { Queryable } from '../../storage/db.js';
import { pickedBy } from '../../storage/batches.js';

/**
 * Failed-login counting per normalised username, kept for names that match no user too, so the
 * lock-out (and its answer) is the same whether or not the account exists. After
 * `loginFailuresMax` failures within the lock-out window the name is locked for
 * `loginLockoutMinutes`; a success clears the count.
 */

export function usernameKey(username: string): string {
  return username.trim().toLowerCase();
}

/** Seconds until the name unlocks, or 0 when it is not locked. */
export async function lockedForSeconds(db: Queryable, username: string, now: Date): Promise<number> {
  const row = await db.maybeOne<{ locked_until: Date }>('SELECT locked_until FROM login_failures WHERE username_key = $1 AND locked_until > $2', [usernameKey(username), now]);
  return row ? Math.max(1, Math.ceil((row.locked_until.getTime() - now.getTime()) / 1000)) : 0;
}

/**
 * Counts one attempt BEFORE its password is checked and returns its number within the window
 * (or `locked` when the name is locked by now). Counting first means guesses sent at the same
 * moment each get their own number, so at most `loginFailuresMax` passwords are ever checked per
 * lock-out window, however many arrive in parallel. A success clears the count; an attempt
 * that turns out not to be a failure (password right, code missing) is given back.
 */
export async function countLoginAttempt(db: Queryable, username: string, now: Date): Promise<number | 'locked'> {
  const windowMinutes = limits.loginLockoutMinutes;
  // A count older than the window (or left from an expired lock) starts again at 1.
  const row = await db.one<{ failures: number; locked: boolean }>(
    `INSERT INTO login_failures (username_key, failures, last_failed_at) VALUES ($1, 1, $2)
     ON CONFLICT (username_key) DO UPDATE SET
       failures = CASE WHEN login_failures.last_failed_at < $2::timestamptz - make_interval(mins => $3)
                         OR (login_failures.locked_until IS NOT NULL AND login_failures.locked_until <= $2)
                       THEN 1 ELSE login_failures.failures + 1 END,
       locked_until = CASE WHEN login_failures.locked_until <= $2 THEN NULL ELSE login_failures.locked_until END,
       last_failed_at = $2
     RETURNING failures, (locked_until IS NOT NULL AND locked_until > $2) AS locked`,
    [usernameKey(username), now, windowMinutes],
  );
  await pruneLoginFailures(db, now);
  if (row.locked) return 'locked';
  if (row.failures > limits.loginFailuresMax) {
    // Sent alongside the guess that locked the name: refused unchecked.
    await lockLogin(db, username, now);
    return 'locked';
  }
  return row.failures;
}

/** Locks the name for loginLockoutMinutes from now (kept if already locked). */
export async function lockLogin(db: Queryable, username: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE login_failures SET failures = 0, locked_until = $2::timestamptz + make_interval(mins => $3)
      WHERE username_key = $1 AND (locked_until IS NULL OR locked_until <= $2)`,
    [usernameKey(username), now, limits.loginLockoutMinutes],
  );
}

/** Gives back an attempt counted by countLoginAttempt that was not a failure. */
export async function uncountLoginAttempt(db: Queryable, username: string): Promise<void> {
  await db.query('UPDATE login_failures SET failures = greatest(failures - 1, 0) WHERE username_key = $1 AND locked_until IS NULL', [usernameKey(username)]);
}

export async function clearLoginFailures(db: Queryable, username: string): Promise<void> {
  await db.query('DELETE FROM login_failures WHERE username_key = $1', [usernameKey(username)]);
}

// Rows of guessed names would otherwise pile up; each failure removes a bounded batch of rows
// that no longer count for anything.
async function pruneLoginFailures(db: Queryable, now: Date): Promise<void> {
  await db.query(
    `DELETE FROM login_failures
      WHERE ${pickedBy('username_key', `SELECT username_key FROM login_failures
                                         WHERE last_failed_at < $1::timestamptz - make_interval(mins => $2) AND (locked_until IS NULL OR locked_until <= $1)
                                         LIMIT $3`)}`,
    [now, limits.loginLockoutMinutes, limits.loginFailuresPruneBatch],
  );
}
