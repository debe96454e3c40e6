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

/**
 * A database transaction's work: a Queryable whose last statement can carry the COMMIT. Inside
 * Db.transaction, BEGIN goes out with the first statement and, through `withCommit`, COMMIT with
 * the last, each pair on the wire together (the pool's connections are pipelined), so a
 * transaction of n statements makes n round trips, not n + 2 (docs/performance.md, session 18).
 */
export interface Transaction extends Queryable {
  /**
   * A Queryable whose next statement is sent with COMMIT right behind it; the transaction ends
   * with it. Only for a statement after which nothing can decide to roll back (a check of its
   * answer in JavaScript would come too late). When the statement fails, COMMIT only ends the
   * failed transaction (PostgreSQL answers it with ROLLBACK) and the statement's error is thrown.
   */
  withCommit(): Queryable;
}

/** Where a transaction's connection stands: BEGIN sent, not yet awaited; COMMIT sent. */
interface TransactionState {
  begun: Promise<unknown> | null;
  committed: boolean;
}

class Runner implements Transaction {
  constructor(
    private readonly target: pg.Pool | pg.PoolClient,
    private readonly state: TransactionState | null = null,
    private readonly commits = false,
  ) {}

  async query<T extends Row = Row>(text: Sql, values: unknown[] = []): Promise<T[]> {
    const config = typeof text === 'string' ? { text, values } : { name: text.name, text: text.text, values };
    const state = this.state;
    if (!state) return (await this.target.query<T>(config)).rows;
    if (state.committed) throw new Error('this database transaction has ended');
    // Written behind BEGIN, and with COMMIT behind it, without waiting for their answers: the
    // server runs them in order, and the answers are read here in that order.
    const begun = state.begun;
    state.begun = null;
    const result = this.target.query<T>(config);
    if (!begun && !this.commits) return (await result).rows;
    const committed = this.commits ? this.target.query('COMMIT') : null;
    if (committed) state.committed = true;
    const [began, ran, ended] = await Promise.allSettled([begun, result, committed]);
    for (const outcome of [began, ran, ended]) if (outcome!.status === 'rejected') throw outcome.reason;
    if (ended!.status === 'fulfilled' && ended.value && ended.value.command !== 'COMMIT') throw new Error('the database transaction was rolled back');
    return (ran as PromiseFulfilledResult<pg.QueryResult<T>>).value.rows;
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

  withCommit(): Queryable {
    if (!this.state) throw new Error('withCommit outside a database transaction');
    return new Runner(this.target, this.state, true);
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

/**
 * SQLSTATE classes of failures that say nothing of the statement or its data and pass by
 * themselves: 08 connection exception, 40 transaction rollback (serialization failure, deadlock),
 * 53 insufficient resources, 57 operator intervention (statement timeout, server shutting down).
 */
const passingSqlStateClasses = new Set(['08', '40', '53', '57']);

/**
 * Whether `error` is a passing database failure: one of those classes, or the connection lost
 * under the client (pg's own errors then carry no SQLSTATE). Work that met one can be tried again
 * as it was; anything else (a constraint, a bug) will fail again the same way.
 */
export function isPassingDatabaseError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  // Node's socket errors first: EPIPE has a SQLSTATE's shape.
  if (code === 'ECONNRESET' || code === 'EPIPE') return true;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return passingSqlStateClasses.has(code.slice(0, 2));
  return /^(Connection terminated|Client has encountered a connection error)/.test(error.message);
}

export class Db extends Runner {
  constructor(readonly pool: pg.Pool) {
    super(pool);
  }

  /**
   * Runs `work` in one database transaction. Serialization failures and deadlocks are retried a
   * bounded number of times, so `work` must not have effects outside the database.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const attemptsMax = 5;
    const begin = `BEGIN ISOLATION LEVEL ${(options.isolation ?? 'read committed').toUpperCase()}${options.genericPlans ? '; SET LOCAL plan_cache_mode = force_generic_plan' : ''}`;
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      try {
        // No parameters: the simple protocol, so BEGIN and SET LOCAL are one message, sent with
        // the first statement and answered before it. It cannot fail on a working connection (a
        // broken one fails the statement too), so that statement never runs outside the transaction.
        const state: TransactionState = { begun: client.query(begin), committed: false };
        state.begun!.catch(() => undefined);
        const result = await work(new Runner(client, state));
        if (state.begun) await state.begun;
        if (!state.committed) await client.query('COMMIT');
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
  /** Bound on each statement (limits.dbStatementTimeoutMs, the API's, unless given). */
  statementTimeoutMs?: number;
}

export function createDb(connectionString: string, poolSize: number = limits.dbPoolSize, options: PoolOptions = {}): Db {
  const statementTimeoutMs = options.statementTimeoutMs ?? limits.dbStatementTimeoutMs;
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // Statements are written without waiting for the one before to be answered, so a
    // transaction's BEGIN and COMMIT travel with its statements (Runner). Nothing else changes:
    // a transaction's statements are still issued one after another.
    pipeline: true,
    statement_timeout: statementTimeoutMs,
    // A database that went silent is given up on (limits.dbConnectTimeoutMs), not waited for until TCP gives up.
    connectionTimeoutMillis: limits.dbConnectTimeoutMs,
    query_timeout: statementTimeoutMs + limits.dbAnswerMarginMs,
    application_name: options.applicationName ?? 'trustfare',
    allowExitOnIdle: options.allowExitOnIdle ?? false,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // The session settings the code reads dates and days in, whatever the server, database or role
  // sets: DATE columns are kept as ISO text (the parser above), and GMT days are the spec's. A
  // database set to `DateStyle = 'SQL, DMY'` answered the bookings list and payments with 500s.
  // Sent as the connection's first statement (queued before any other on it), not as startup
  // options, which a connection pooler such as PgBouncer refuses unless configured to pass them.
  pool.on('connect', (client) => {
    // The pool listens for 'error' only on its idle connections. One that broke while taken (a
    // transaction's, between statements or with statements on the wire; PostgreSQL restarted or
    // its backend terminated) emitted 'error' unheard, which crashed the process and every request
    // in flight with it. Heard for the connection's whole life, the error changes nothing else:
    // the statements fail by themselves (pg rejects them with the cause), and the pool drops a
    // connection that broke (no longer queryable) when it is handed back.
    client.on('error', () => undefined);
    client.query("SET DateStyle = 'ISO, YMD'; SET TimeZone = 'UTC'").catch(() => undefined);
  });
  return new Db(pool);
}
