import pg from 'pg';
import { limits } from '../limits.js';

// BIGINT and NUMERIC come back as strings by default; our ids and cents fit in a JS number
// (amounts are capped far below 2^53 by limits.amountCentsMax), so parse them once here.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
// Dates stay strings (`YYYY-MM-DD`) so no timezone shifts a booking's end date.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);

export type Row = Record<string, unknown>;

/**
 * A named statement is prepared once per connection by PostgreSQL and reused; use it on hot
 * paths. `name` must be unique per SQL text.
 */
export interface Statement {
  name: string;
  text: string;
}

export type Sql = string | Statement;

/** Anything that can run a query: the pool, or a client inside a transaction. */
export interface Queryable {
  query<T extends Row = Row>(text: Sql, values?: unknown[]): Promise<T[]>;
  one<T extends Row = Row>(text: Sql, values?: unknown[]): Promise<T>;
  maybeOne<T extends Row = Row>(text: Sql, values?: unknown[]): Promise<T | undefined>;
}

class Runner implements Queryable {
  constructor(private readonly target: pg.Pool | pg.PoolClient) {}

  async query<T extends Row = Row>(text: Sql, values: unknown[] = []): Promise<T[]> {
    const config = typeof text === 'string' ? { text, values } : { name: text.name, text: text.text, values };
    const result = await this.target.query<T>(config);
    return result.rows;
  }

  async one<T extends Row = Row>(text: Sql, values: unknown[] = []): Promise<T> {
    const rows = await this.query<T>(text, values);
    if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`);
    return rows[0]!;
  }

  async maybeOne<T extends Row = Row>(text: Sql, values: unknown[] = []): Promise<T | undefined> {
    const rows = await this.query<T>(text, values);
    return rows[0];
  }
}

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
  /**
   * Plan the named statements of this transaction once per connection and reuse the plan
   * (`plan_cache_mode = force_generic_plan`, for this transaction only). For the payment path's
   * fixed statements: their array parameters (booking ids, ledger postings) otherwise make
   * PostgreSQL re-plan them on every call, which cost as much as running them (docs/performance.md).
   * Not for statements whose best plan depends on the values (list filters, LIMIT/OFFSET).
   */
  genericPlans?: boolean;
}

export class Db extends Runner {
  constructor(readonly pool: pg.Pool) {
    super(pool);
  }

  /**
   * Runs `work` in one database transaction. Serialization failures and deadlocks are retried a
   * bounded number of times, so `work` must not have effects outside the database.
   */
  async transaction<T>(work: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const attemptsMax = 5;
    const begin = `BEGIN ISOLATION LEVEL ${(options.isolation ?? 'read committed').toUpperCase()}${options.genericPlans ? '; SET LOCAL plan_cache_mode = force_generic_plan' : ''}`;
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      try {
        // No parameters: the simple protocol, so BEGIN and SET LOCAL share one round trip.
        await client.query(begin);
        const result = await work(new Runner(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        const code = (error as { code?: string }).code;
        const retryable = code === '40001' || code === '40P01';
        if (!retryable || attempt >= attemptsMax) throw error;
      } finally {
        client.release();
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

export interface PoolOptions {
  /** Shown in pg_stat_activity, so each pool's connections can be told apart. */
  applicationName?: string;
  /** An idle pool lets the process exit (a secondary pool nobody closes explicitly). */
  allowExitOnIdle?: boolean;
}

export function createDb(connectionString: string, poolSize: number = limits.dbPoolSize, options: PoolOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    statement_timeout: limits.dbStatementTimeoutMs,
    application_name: options.applicationName ?? 'trustfare',
    allowExitOnIdle: options.allowExitOnIdle ?? false,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  return new Db(pool);
}
