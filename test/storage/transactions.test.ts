import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/context.js';
import { statementsDuring } from '../support/statements.js';
import { isPassingDatabaseError, type Db } from '../../src/storage/db.js';

// Db.transaction on pipelined connections (src/storage/db.ts): BEGIN is written with the first
// statement and, through withCommit, COMMIT with the last, so a transaction of n statements waits
// n times. What a caller can see must not change: all or nothing, errors thrown where they arose.
let db: Db;
beforeAll(async () => {
  ({ db } = await createTestDatabase(2));
  await db.query('CREATE TABLE pipelined (id int PRIMARY KEY, note text NOT NULL)');
  // A check PostgreSQL makes only at COMMIT, as the ledger's balance trigger is.
  await db.query('CREATE TABLE pipelined_pairs (id int NOT NULL, UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)');
});
afterAll(async () => db?.close());

const notes = async () => (await db.query<{ id: number }>('SELECT id FROM pipelined ORDER BY id')).map((row) => row.id);

describe('a database transaction on a pipelined connection', () => {
  it('writes BEGIN with the first statement and COMMIT with the last, and commits', async () => {
    const { result, statements, roundTrips } = await statementsDuring(() =>
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO pipelined VALUES (1, $1)', ['first']);
        return tx.withCommit().query<{ id: number }>('INSERT INTO pipelined VALUES (2, $1) RETURNING id', ['last']);
      }));
    expect(result).toEqual([{ id: 2 }]);
    expect(statements.map((text) => text.split(' ')[0])).toEqual(['BEGIN', 'INSERT', 'INSERT', 'COMMIT']);
    expect(roundTrips).toBe(2);
    expect(await notes()).toEqual([1, 2]);
  });

  it('ends with its own COMMIT when no statement carried one, and refuses statements after withCommit', async () => {
    await expect(db.transaction(async (tx) => {
      await tx.withCommit().query('INSERT INTO pipelined VALUES (3, $1)', ['committed']);
      await tx.query('INSERT INTO pipelined VALUES (4, $1)', ['too late']);
    })).rejects.toThrow('this database transaction has ended');
    await db.transaction(async (tx) => tx.query('INSERT INTO pipelined VALUES (5, $1)', ['plain']));
    expect(await notes()).toEqual([1, 2, 3, 5]);
  });

  it('throws the last statement\'s own error and keeps nothing when that statement fails', async () => {
    const failing = db.transaction(async (tx) => {
      await tx.query('INSERT INTO pipelined VALUES (6, $1)', ['rolled back']);
      await tx.withCommit().query('INSERT INTO pipelined VALUES (1, $1)', ['duplicate key']);
    });
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    expect(await notes()).toEqual([1, 2, 3, 5]);
    // The connection went back to the pool usable.
    await db.transaction(async (tx) => tx.withCommit().query('INSERT INTO pipelined VALUES (7, $1)', ['after']));
    expect(await notes()).toEqual([1, 2, 3, 5, 7]);
  });

  it('throws when the COMMIT sent with the last statement fails its deferred checks', async () => {
    const failing = db.transaction(async (tx) => {
      await tx.query('INSERT INTO pipelined VALUES (8, $1)', ['rolled back']);
      await tx.withCommit().query('INSERT INTO pipelined_pairs VALUES (1), (1)');
    });
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    expect(await notes()).toEqual([1, 2, 3, 5, 7]);
    expect(await db.query('SELECT * FROM pipelined_pairs')).toEqual([]);
  });

  it('runs the first statement inside the transaction BEGIN opened', async () => {
    // SET LOCAL (sent with BEGIN for genericPlans) holds only inside that transaction block.
    const setting = "SELECT current_setting('plan_cache_mode') AS mode";
    const [inside] = await db.transaction(async (tx) => tx.withCommit().query<{ mode: string }>(setting), { genericPlans: true });
    expect(inside!.mode).toBe('force_generic_plan');
    const [after] = await db.query<{ mode: string }>(setting);
    expect(after!.mode).toBe('auto');
  });
});

describe('isPassingDatabaseError', () => {
  const errorOf = (work: () => Promise<unknown>) => work().then(() => { throw new Error('it did not fail'); }, (error: unknown) => error);

  it('tells the failures that pass (a statement timeout, a lost connection) from those of the statement or the code', async () => {
    const timedOut = await errorOf(() => db.transaction(async (tx) => {
      await tx.query('SET LOCAL statement_timeout = 10');
      await tx.query('SELECT pg_sleep(1)');
    }));
    expect(timedOut).toMatchObject({ code: '57014' });
    const lost = await errorOf(() => db.query('SELECT pg_terminate_backend(pg_backend_pid())'));
    const duplicate = await errorOf(() => db.query(`INSERT INTO pipelined VALUES (900, 'a'), (900, 'b')`));
    const raised = await errorOf(() => db.query(`DO $$ BEGIN RAISE EXCEPTION 'a bug'; END $$`));
    expect([timedOut, lost].map(isPassingDatabaseError)).toEqual([true, true]);
    expect([duplicate, raised, new Error('template bug'), Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })].map(isPassingDatabaseError)).toEqual([false, false, false, true]);
  });
});

describe('a connection lost in the middle of a database transaction', () => {
  it('fails that transaction alone with a passing error; the process goes on and the next transaction gets a working connection', async () => {
    // The connection breaks between two statements (PostgreSQL restarted, or the backend killed):
    // pg emits 'error' on the checked-out client, which no pool listener catches while it is out.
    // Unheard, that event crashed the whole server (every request in flight cut off).
    const failed = await db.transaction(async (tx) => {
      const { pid } = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!;
      await db.query('SELECT pg_terminate_backend($1)', [pid]);
      // The client hears of it (the server's FATAL message, then the socket's end) before its next statement.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await tx.query('SELECT 1');
    }).then(() => null, (error: unknown) => error);
    expect(isPassingDatabaseError(failed)).toBe(true);
    expect(await db.transaction(async (tx) => tx.query<{ one: number }>('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
  });
});
