import type { Queryable } from '../../storage/db.js';

/**
 * Called by the payments code inside the database transaction that moved money or recorded a
 * failure, after the transaction row has its final status. Writes the outbox rows for every
 * mail that event calls for, so a committed payment always gets its mails and a rolled-back
 * one never does. (Filled in by the emails work; until then there is nothing to send.)
 */
export async function enqueueMailsForTransaction(_tx: Queryable, _transactionId: number): Promise<void> {
  // Intentionally empty until the email outbox lands (issue 6).
}
