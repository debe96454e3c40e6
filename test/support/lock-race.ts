import type { Db } from '../../src/storage/db.js';

/**
 * Makes a race certain: locks `table`'s row `id` (FOR UPDATE) in a database transaction, starts
 * `request`, waits until a backend of this database waits on a lock (the request reached the row),
 * runs `change` as the other side of the race would, commits, and answers the request's promise.
 */
export async function raceOnRow<T>(db: Db, options: { table: 'bookings' | 'users' | 'channels'; id: number; request: () => Promise<T>; change: { sql: string; values: unknown[] } }): Promise<T> {
  let answer!: Promise<T>;
  await db.transaction(async (tx) => {
    await tx.query(`SELECT 1 FROM ${options.table} WHERE id = $1 FOR UPDATE`, [options.id]);
    answer = options.request();
    // Bounded: 5 s, then the change is made anyway (the test's assertions tell what happened).
    for (let poll = 0; poll < 500; poll++) {
      const waiting = await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`);
      if (waiting.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await tx.query(options.change.sql, options.change.values);
  });
  return answer;
}
