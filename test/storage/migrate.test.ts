// Migrations (src/storage/migrate.ts) through a connection pooler in transaction mode (PgBouncer,
// docs/scaling.md §4): a statement outside a transaction may run on any server connection.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { limits } from '../../src/limits.js';
import { createDb, type Db } from '../../src/storage/db.js';
import { migrate, migrationsDir } from '../../src/storage/migrate.js';
import { createTestDatabase } from '../support/context.js';

/**
 * A Db whose client behaves as one behind PgBouncer in transaction mode: each statement outside
 * BEGIN ... COMMIT goes to the next of `servers` server connections, a transaction's to one.
 */
function transactionPooled(servers: pg.Client[]): Db {
  let next = 0;
  let inTransaction: pg.Client | null = null;
  const client = {
    // A statement as text, or as a config object (migrate.ts sends its own answer wait with each).
    async query(statement: string | pg.QueryConfig, values?: unknown[]) {
      const text = typeof statement === 'string' ? statement : statement.text;
      const server = inTransaction ?? servers[next++ % servers.length]!;
      if (text === 'BEGIN') inTransaction = server;
      if (text === 'COMMIT' || text === 'ROLLBACK') inTransaction = null;
      return typeof statement === 'string' ? server.query(statement, values) : server.query(statement);
    },
    release() {},
  };
  return { pool: { connect: async () => client } } as unknown as Db;
}

async function serverConnections(url: string, count: number): Promise<pg.Client[]> {
  const clients = Array.from({ length: count }, () => new pg.Client({ connectionString: url }));
  await Promise.all(clients.map((client) => client.connect()));
  return clients;
}

const opened: pg.Client[] = [];
afterAll(async () => {
  await Promise.all(opened.map((client) => client.end().catch(() => undefined)));
});

describe('migrations behind a pooler in transaction mode', () => {
  it('leave no lock behind on a server connection: the next start migrates instead of waiting for it', async () => {
    const { db, url } = await createTestDatabase(1);
    try {
      const first = await serverConnections(url, 2);
      opened.push(...first);
      expect(await migrate(transactionPooled(first), migrationsDir)).toEqual([]);
      // The next start (another machine, a CLI command) through other server connections, while the first ones stay open in the pooler.
      const second = await serverConnections(url, 2);
      opened.push(...second);
      const outcome = await Promise.race([migrate(transactionPooled(second), migrationsDir).then(() => 'migrated'), new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5_000))]);
      expect(outcome).toBe('migrated');
    } finally {
      await db.close();
    }
  }, 30_000);

  it('apply each migration once when two starts run them at the same time', async () => {
    const { db, url } = await createTestDatabase(1);
    const directory = mkdtempSync(path.join(os.tmpdir(), 'trustfare-migrations-'));
    writeFileSync(path.join(directory, '901_one.sql'), 'CREATE TABLE one (id int)');
    writeFileSync(path.join(directory, '902_two.sql'), 'CREATE TABLE two (id int)');
    writeFileSync(path.join(directory, '903_broken.sql'), 'CREATE TABLE three (id int); SELECT no_such_column FROM two');
    try {
      const [a, b] = [await serverConnections(url, 2), await serverConnections(url, 2)];
      opened.push(...a, ...b);
      const outcomes = await Promise.allSettled([migrate(transactionPooled(a), directory), migrate(transactionPooled(b), directory)]);
      // Both stop at the broken one, with its name; the two before it are applied once, by one of them.
      for (const outcome of outcomes) expect(outcome).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/^migration 903_broken\.sql failed: column "no_such_column" does not exist/) } });
      const rows = await db.query<{ name: string }>("SELECT name FROM schema_migrations WHERE name LIKE '9%' ORDER BY name");
      expect(rows.map((row) => row.name)).toEqual(['901_one.sql', '902_two.sql']);
      expect((await db.one<{ three: string | null }>("SELECT to_regclass('three')::text AS three")).three).toBeNull();
    } finally {
      rmSync(directory, { recursive: true, force: true });
      await Promise.all(opened.splice(0).map((client) => client.end().catch(() => undefined)));
      await db.close();
    }
  }, 30_000);
});

describe('a migration that runs longer than the API\'s statement timeout (an index on a large table)', () => {
  it('completes, and a start that waits for it meanwhile migrates after it instead of failing', async () => {
    const { db, url } = await createTestDatabase(1);
    const directory = mkdtempSync(path.join(os.tmpdir(), 'trustfare-migrations-'));
    // Past the pool's wait for an answer too (the statement timeout and limits.dbAnswerMarginMs), which is for a database gone silent.
    writeFileSync(path.join(directory, '900_slow.sql'), `SELECT pg_sleep(${(limits.dbStatementTimeoutMs + limits.dbAnswerMarginMs) / 1000 + 0.5}); CREATE TABLE slow (id int)`);
    const other = createDb(url, 1);
    try {
      const first = migrate(db, directory);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Another machine, or a CLI command, starting meanwhile: it waits for the lock, then finds nothing to do.
      const outcomes = await Promise.allSettled([first, migrate(other, directory)]);
      expect(outcomes).toEqual([{ status: 'fulfilled', value: ['900_slow.sql'] }, { status: 'fulfilled', value: [] }]);
      expect((await db.one<{ slow: string | null }>("SELECT to_regclass('slow')::text AS slow")).slow).toBe('slow');
    } finally {
      rmSync(directory, { recursive: true, force: true });
      await other.close();
      await db.close();
    }
  }, 60_000);
});
