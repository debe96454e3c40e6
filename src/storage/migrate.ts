import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.js';

// This module runs from src/storage/ (tests, tsx) and bundled into dist/server.js and
// dist/cli/main.js (npm start, the CLI): find the package's migrations/ from either place.
const moduleDir = path.dirname(fileURLToPath(import.meta.url));
export const migrationsDir = ['../../migrations', '../migrations'].map((relative) => path.resolve(moduleDir, relative)).find((candidate) => existsSync(candidate)) ?? path.resolve(moduleDir, '../../migrations');

// Any fixed number works; it only has to be the same in every process that migrates.
const migrationLockId = 7_302_114_001;

/**
 * Applies every `migrations/NNN_name.sql` not yet recorded, in order, each in its own
 * transaction. An advisory lock makes concurrent starts (several workers, CLI) safe.
 */
export async function migrate(db: Db, directory: string = migrationsDir): Promise<string[]> {
  const files = readdirSync(directory).filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name)).sort();
  const client = await db.pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockId]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((row) => row.name));
    for (const name of files) {
      if (done.has(name)) continue;
      const sql = readFileSync(path.join(directory, name), 'utf8');
      try {
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
      applied.push(name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [migrationLockId]).catch(() => undefined);
    client.release();
  }
  return applied;
}
