import { connectionBudgetProblemOf } from './connections.js';
import type { Queryable } from './db.js';

/**
 * What an operator should know about the database at start, each as a warning: the service
 * still starts (test channels work, and a pooler or a planned migration may explain it), but each
 * of these fails something later, under load or for some customers' names.
 */
export async function databaseProblemsOf(db: Queryable, workers: number): Promise<string[]> {
  const problems = await Promise.all([connectionBudgetProblemOf(db, workers), encodingProblemOf(db)]);
  return problems.filter((problem): problem is string => problem !== null);
}

/**
 * A database not in UTF8 (SQL_ASCII: an embedded cluster made under LANG=C before session 30, or
 * an external server made so) keeps the bytes of a name without knowing its characters: lengths,
 * case-insensitive e-mail matching and the NFC filters (migration 042 skips such a database) are
 * wrong for every letter outside ASCII.
 */
async function encodingProblemOf(db: Queryable): Promise<string | null> {
  const { encoding } = await db.one<{ encoding: string }>(`SELECT current_setting('server_encoding') AS encoding`);
  if (encoding === 'UTF8') return null;
  return `The database's encoding is ${encoding}, not UTF8: names, addresses and e-mails outside ASCII are kept as bytes, `
    + 'so their lengths, case-insensitive matching and the exact filters are wrong. Dump it and restore it into a UTF8 database (README, "Configuration").';
}
