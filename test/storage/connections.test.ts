// The connection budget (src/storage/connections.ts): WORKERS server processes open up to 13
// connections each, and the cluster primary one more.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { limits } from '../../src/limits.js';
import { openDatabase } from '../../src/storage/database.js';
import { connectionBudgetProblem, connectionBudgetProblemOf, connectionLimitsOf, connectionsNeeded, type ConnectionLimits } from '../../src/storage/connections.js';
import { createTestDatabase, testEnv } from '../support/context.js';
import { tempDirForTest } from '../support/temp-dir.js';

describe('the embedded PostgreSQL', () => {
  it('takes every connection of the configured WORKERS (8, past its default max_connections of 100), with room left for psql', async () => {
    const config = loadConfig({ ...testEnv, DATA_DIR: tempDirForTest('pg-budget'), WORKERS: '8' });
    const database = await openDatabase(config, { migrate: false, poolSize: 1 });
    // Eight workers' pools and the primary's connection (this pool's one), all open at once: a load that grows every pool.
    const needed = 8 * (limits.dbPoolSize + limits.sandboxDbPoolSize) + 1;
    const url = database.db.pool.options.connectionString!;
    const clients = Array.from({ length: needed - 1 }, () => new pg.Client({ connectionString: url }));
    try {
      await Promise.all(clients.map((client) => client.connect()));
      const limitsNow = await connectionLimitsOf(database.db);
      expect(limitsNow.maxConnections - limitsNow.reservedConnections - needed).toBeGreaterThanOrEqual(limits.embeddedSpareConnections);
      expect(await connectionBudgetProblemOf(database.db, config.workers)).toBeNull();
    } finally {
      await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
      await database.close();
    }
  }, 120_000);
});

describe('an external database (DATABASE_URL)', () => {
  it('is checked against the connections WORKERS may open', async () => {
    const { db } = await createTestDatabase(1);
    try {
      const database = await connectionLimitsOf(db);
      const allowed = database.maxConnections - database.reservedConnections;
      let fitting = 1;
      while (connectionsNeeded(fitting + 1) <= allowed) fitting++;
      expect(await connectionBudgetProblemOf(db, fitting)).toBeNull();
      const problem = await connectionBudgetProblemOf(db, fitting + 1);
      expect(problem).toBe(`WORKERS=${fitting + 1} may open ${connectionsNeeded(fitting + 1)} connections to PostgreSQL (13 per server process, 1 for the primary), `
        + `more than the ${allowed} it allows (max_connections ${database.maxConnections} less ${database.reservedConnections} reserved): under load, requests would fail with "too many clients". `
        + `Set WORKERS to ${fitting} or fewer, raise max_connections by ${connectionsNeeded(fitting + 1) - allowed}, or put PgBouncer in front (docs/scaling.md §4).`);
    } finally {
      await db.close();
    }
  });

  const server: ConnectionLimits = { maxConnections: 100, reservedConnections: 3, roleConnectionLimit: -1, databaseConnectionLimit: -1, superuser: false };

  it('counts the reserved slots of PostgreSQL 16 (reserved_connections) and a role or database CONNECTION LIMIT', () => {
    expect(connectionBudgetProblem(server, 7)).toBeNull();
    expect(connectionBudgetProblem({ ...server, reservedConnections: 3 + 6 }, 7)).toContain('more than the 91 it allows (max_connections 100 less 9 reserved)');
    expect(connectionBudgetProblem({ ...server, roleConnectionLimit: 30 }, 3)).toBe('WORKERS=3 may open 40 connections to PostgreSQL (13 per server process, 1 for the primary), '
      + 'more than the 30 it allows (the role\'s CONNECTION LIMIT 30): under load, requests would fail with "too many clients". '
      + 'Set WORKERS to 2 or fewer, raise the role\'s CONNECTION LIMIT by 10, or put PgBouncer in front (docs/scaling.md §4).');
    expect(connectionBudgetProblem({ ...server, databaseConnectionLimit: 10 }, 1)).toBe('WORKERS=1 may open 13 connections to PostgreSQL (13 per server process), '
      + 'more than the 10 it allows (the database\'s CONNECTION LIMIT 10): under load, requests would fail with "too many clients". '
      + 'Raise the database\'s CONNECTION LIMIT by 3, or put PgBouncer in front (docs/scaling.md §4).');
    // A superuser is held to neither limit (PostgreSQL exempts it).
    expect(connectionBudgetProblem({ ...server, superuser: true, roleConnectionLimit: 10, databaseConnectionLimit: 10 }, 7)).toBeNull();
  });
});
