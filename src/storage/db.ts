import pg from 'pg';
import pgUtils from 'pg/lib/utils.js';
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

/** The runner `Db.transaction` gives its work. */
export interface TransactionQueryable extends Queryable {
  /**
   * Runs the transaction's last statement and commits, in one round trip when the statement is
   * prepared on the connection (`EXECUTE name(literals); COMMIT`). Nothing may run after it.
   */
  queryAndCommit<T extends Row = Row>(text: Sql, values?: unknown[]): Promise<T[]>;
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

/**
 * The runner inside `Db.transaction`. BEGIN is sent with the transaction's first statement, in one
 * round trip, when that statement is a named one this connection has prepared already: the simple
 * protocol carries `BEGIN …; EXECUTE name(literals)` in one message (issue 7: every database
 * transaction of the service, the payment's two included, saves a round trip). The literals are
 * exactly the text the extended protocol would send as parameters (pg's own `prepareValue`),
 * quoted by pg's `escapeLiteral`, so PostgreSQL coerces them to the statement's parameter types
 * as it does parameters; the statement keeps its prepared plan. Otherwise BEGIN goes alone first.
 */
class TransactionRunner extends Runner implements TransactionQueryable {
  private begun = false;
  private done = false;

  constructor(private readonly client: pg.PoolClient, private readonly begin: string) {
    super(client);
  }

  override async query<T extends Row = Row>(text: Sql, values: unknown[] = []): Promise<T[]> {
    if (this.done) throw new Error('the database transaction has committed: no statement may follow queryAndCommit');
    if (this.begun) return super.query<T>(text, values);
    this.begun = true;
    const merged = this.merged(text, values);
    if (merged) return this.runMerged<T>(`${this.begin}; ${merged}`, 'last');
    await this.client.query(this.begin);
    return super.query<T>(text, values);
  }

  async queryAndCommit<T extends Row = Row>(text: Sql, values: unknown[] = []): Promise<T[]> {
    if (!this.begun) {
      const rows = await this.query<T>(text, values);
      await this.commit();
      return rows;
    }
    if (this.done) throw new Error('the database transaction has committed already');
    const merged = this.merged(text, values);
    const rows = merged ? await this.runMerged<T>(`${merged}; COMMIT`, 'first') : await super.query<T>(text, values);
    if (merged) this.done = true;
    else await this.commit();
    return rows;
  }

  /** Sends COMMIT unless nothing was sent or queryAndCommit committed. */
  async commit(): Promise<void> {
    if (!this.begun || this.done) return;
    await this.client.query('COMMIT');
    this.done = true;
  }

  /** Whether a ROLLBACK is needed after a failure: something was sent and not committed. */
  get open(): boolean {
    return this.begun && !this.done;
  }

  get committed(): boolean {
    return this.done;
  }

  private merged(text: Sql, values: unknown[]): string | undefined {
    return typeof text !== 'string' && isPreparedOn(this.client, text) ? executeSql(text.name, values) : undefined;
  }

  /** A simple-protocol message of several statements; the rows are those of its first or last. */
  private async runMerged<T extends Row>(sql: string, which: 'first' | 'last'): Promise<T[]> {
    const results = (await this.client.query(sql)) as unknown as pg.QueryResult<T>[];
    return results[which === 'first' ? 0 : results.length - 1]!.rows;
  }
}

/** pg records each named statement a connection has parsed, with its text. */
function isPreparedOn(client: pg.PoolClient, statement: Statement): boolean {
  const parsed = (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection?.parsedStatements;
  return parsed?.[statement.name] === statement.text;
}

function executeSql(name: string, values: unknown[]): string {
  const quotedName = pg.escapeIdentifier(name);
  return values.length === 0 ? `EXECUTE ${quotedName}` : `EXECUTE ${quotedName}(${values.map(literal).join(', ')})`;
}

function literal(value: unknown): string {
  const text = pgUtils.prepareValue(value) as string | Buffer | null;
  if (text === null) return 'NULL';
  return pg.escapeLiteral(Buffer.isBuffer(text) ? `\\x${text.toString('hex')}` : text);
}

export class Db extends Runner {
  constructor(readonly pool: pg.Pool) {
    super(pool);
  }

  /**
   * Runs `work` in one database transaction. Serialization failures and deadlocks are retried a
   * bounded number of times, so `work` must not have effects outside the database.
   */
  async transaction<T>(work: (tx: TransactionQueryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const attemptsMax = 5;
    const begin = `BEGIN ISOLATION LEVEL ${(options.isolation ?? 'read committed').toUpperCase()}${options.genericPlans ? '; SET LOCAL plan_cache_mode = force_generic_plan' : ''}`;
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      const runner = new TransactionRunner(client, begin);
      try {
        const result = await work(runner);
        await runner.commit();
        return result;
      } catch (error) {
        // Committed by queryAndCommit, then failed: the work is done and must not run again.
        if (runner.committed) throw error;
        if (runner.open) await client.query('ROLLBACK').catch(() => undefined);
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
