import type pg from 'pg';
import { duringQueries } from './statements.js';

const scansSql = `SELECT transaction_timestamp()::text AS started, coalesce(json_object_agg(relname, seq_scan), '{}') AS scans FROM pg_stat_xact_user_tables`;

interface Scans {
  started: string;
  scans: Record<string, number>;
}

/**
 * The tables PostgreSQL read whole (sequential scans) while one of the named statements ran, each
 * time any pool of this process sent it during `work` (by statement name, in the order they ran):
 * counted on its own connection, from the statistics of its database transaction before and after
 * it (pg_stat_xact_user_tables), so the figure is the statement's whatever plan it got. The
 * statement must run inside a database transaction (those statistics are the transaction's); one
 * that does not is an error.
 */
export async function wholeTableReadsDuring<T>(statementNames: string[], work: () => Promise<T>): Promise<{ result: T; reads: Map<string, string[][]> }> {
  const reads = new Map<string, string[][]>(statementNames.map((name) => [name, []]));
  const result = await duringQueries((client, args, original) => {
    const first = args[0] as { name?: string } | string;
    const runs = typeof first === 'string' || first.name === undefined ? undefined : reads.get(first.name);
    if (!runs) return original.apply(client, args);
    const scans = async () => ((await original.call(client, scansSql)) as pg.QueryResult<Scans>).rows[0]!;
    // All three written at once, in this order: the connections are pipelined, and what the
    // caller writes next (a COMMIT sent with the statement) must come after the second count.
    const counts = [scans(), original.apply(client, args) as Promise<pg.QueryResult>, scans()] as const;
    return (async () => {
      const [before, answer, after] = await Promise.allSettled(counts);
      if (answer.status === 'rejected') throw answer.reason;
      if (before.status === 'rejected') throw before.reason;
      if (after.status === 'rejected') throw after.reason;
      if (before.value.started !== after.value.started) throw new Error(`wholeTableReadsDuring: ${statementNames.join(', ')} ran outside a database transaction`);
      runs.push(Object.entries(after.value.scans).filter(([table, count]) => count > (before.value.scans[table] ?? 0)).map(([table]) => table).sort());
      return answer.value;
    })();
  }, work);
  return { result, reads };
}
