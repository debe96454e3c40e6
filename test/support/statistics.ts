import type { Db } from '../../src/storage/db.js';

/**
 * Leaves `table`'s rows as they are and its statistics saying it is empty (pg_class: no rows on
 * its pages), as after ANALYZE ran on a drained queue: ANALYZE writes those figures in place,
 * so rolling back the DELETE it saw keeps them. Statements that must not depend on the planner's
 * guess are tested after this (src/storage/batches.ts).
 */
export async function statisticsSayEmpty(db: Db, table: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(`DELETE FROM ${table}`);
    await tx.query(`ANALYZE ${table}`);
    throw new RolledBack();
  }).catch((error: unknown) => {
    if (!(error instanceof RolledBack)) throw error;
  });
  const [stats] = await db.query<{ reltuples: number; relpages: number }>('SELECT reltuples, relpages FROM pg_class WHERE oid = $1::regclass', [table]);
  if (!(stats!.reltuples === 0 && stats!.relpages > 0)) throw new Error(`statisticsSayEmpty(${table}): pg_class holds ${JSON.stringify(stats)}`);
}

class RolledBack extends Error {}
