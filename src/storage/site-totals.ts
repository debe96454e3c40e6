import type { Queryable } from './db.js';

/** A site's kept list total (migration 024) that disagrees with its rows. */
export interface TotalProblem {
  site_id: number;
  relation: 'bookings' | 'transactions';
  kept: number;
  counted: number;
}

export interface TotalsReport {
  ok: boolean;
  problems: TotalProblem[];
}

// One statement, so the kept sums and the counts (migration 025's view, which the recount writes
// too) read one snapshot; the triggers write both in the same transaction, so a write committing
// meanwhile cannot make a healthy site look wrong.
const verifyStatement = `
  WITH kept AS (
    SELECT site_id, relation, sum(row_count)::bigint AS kept FROM site_row_counts WHERE $1::bigint IS NULL OR site_id = $1 GROUP BY site_id, relation
  ), counted AS (
    SELECT site_id, relation, counted FROM site_rows_counted WHERE $1::bigint IS NULL OR site_id = $1
  )
  SELECT site_id::int, relation, coalesce(kept, 0)::int AS kept, coalesce(counted, 0)::int AS counted
    FROM kept FULL JOIN counted USING (site_id, relation)
   WHERE coalesce(kept, 0) <> coalesce(counted, 0)
   ORDER BY site_id, relation`;

/**
 * Compares the totals the database keeps for unfiltered lists (site_row_counts) with a count of
 * the rows, for one site or all. A full count of both tables: an operator's check, not a request's.
 */
export async function verifySiteTotals(db: Queryable, options: { siteId?: number } = {}): Promise<TotalsReport> {
  const problems = await db.query<TotalProblem & Record<string, unknown>>(verifyStatement, [options.siteId ?? null]);
  return { ok: problems.length === 0, problems };
}

/** Counts every site afresh (site_row_counts_recount: both tables locked against writes meanwhile). */
export async function recountSiteTotals(db: Queryable): Promise<void> {
  await db.query('SELECT site_row_counts_recount()');
}
