import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { Db } from './db.js';

// This module runs from src/storage/ (tests, tsx) and bundled into dist/server.js and
// dist/cli/main.js (npm start, the CLI): find the package's migrations/ from either place.
const moduleDir = path.dirname(fileURLToPath(import.meta.url));
export const migrationsDir = ['../../migrations', '../migrations'].map((relative) => path.resolve(moduleDir, relative)).find((candidate) => existsSync(candidate)) ?? path.resolve(moduleDir, '../../migrations');

// Any fixed number works; it only has to be the same in every process that migrates.
const migrationLockId = 7_302_114_001;

/**
 * Applies every `migrations/NNN_name.sql` not yet recorded, in order, each in its own
 * transaction. An advisory lock makes concurrent starts (several workers, CLI) safe: taken by each
 * of those transactions and released by its end, never held by the session, since behind a
 * pooler in transaction mode (PgBouncer, docs/scaling.md §4) the statements outside a transaction
 * go to any server connection, and a session lock whose unlock went to another one stayed held
 * there, so the next start waited for the pooler to close that connection.
 */
// Not under the pool's wait for an answer either (limits.dbAnswerMarginMs past the statement
// timeout): that bound is for a database gone silent, not for a migration at work. setTimeout's most.
const migrationAnswerWaitMs = 2_147_483_647;

export async function migrate(db: Db, directory: string = migrationsDir): Promise<string[]> {
  const files = readdirSync(directory).filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name)).sort();
  const pooled = await db.pool.connect();
  const client = { query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => pooled.query<R>({ text, values, query_timeout: migrationAnswerWaitMs } as pg.QueryConfig) };
  const applied: string[] = [];
  try {
    // One migration per step, and a last step that finds none left.
    for (let step = 0; step <= files.length; step++) {
      await client.query('BEGIN');
      let name: string | undefined;
      try {
        // Not under the API's statement timeout (limits.dbStatementTimeoutMs): an index built or a
        // column filled on a large installation takes longer, and so does waiting for another
        // start's migration; cut off, the upgraded server could never start.
        await client.query('SET LOCAL statement_timeout = 0');
        await client.query('SELECT pg_advisory_xact_lock($1)', [migrationLockId]);
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
        const done = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((row) => row.name));
        name = files.find((file) => !done.has(file));
        if (name !== undefined) {
          await client.query(readFileSync(path.join(directory, name), 'utf8'));
          await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw name === undefined ? error : new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
      if (name === undefined) break;
      applied.push(name);
    }
  } finally {
    pooled.release();
  }
  return applied;
}
