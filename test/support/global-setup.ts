import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDb } from '../../src/storage/db.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/storage/embedded.js';
import { migrate } from '../../src/storage/migrate.js';

/**
 * Once per `vitest run`: a PostgreSQL server (DATABASE_URL, or the embedded one in a temporary
 * directory) and a migrated template database. Each test file clones the template, which takes
 * milliseconds instead of re-running migrations.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The bundles the process tests run (dist/server.js, dist/main.js, bin/trustfare.mjs), built
  // once here: built by each of those files, one build rewrote them while another file's
  // process was loading them.
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: path.resolve(import.meta.dirname, '../..'), stdio: 'inherit' });
  let embedded: EmbeddedDatabase | null = null;
  let tempDir: string | null = null;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    tempDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-test-'));
    embedded = await startEmbeddedPostgres(tempDir, { database: 'postgres' });
    adminUrl = embedded.url;
  }
  const template = `trustfare_tpl_${process.pid}`;
  const admin = createDb(adminUrl, 2);
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  const templateDb = createDb(withDatabase(adminUrl, template), 2);
  await migrate(templateDb);
  await templateDb.close();
  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);
  project.provide('testDatabasePrefix', `trustfare_t_${process.pid}_`);
  return async () => {
    // Drop what this run created, then the server.
    const rows = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`, [`trustfare_t_${process.pid}_%`, template]);
    for (const row of rows) await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
    await admin.close();
    await embedded?.stop();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    testDatabasePrefix: string;
  }
}
