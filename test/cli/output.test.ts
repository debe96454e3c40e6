// The CLI as operators run it, through its bin (`npx trustfare`, `npm run cli`), into a pipe.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testEnv } from '../support/context.js';
import type { Db } from '../../src/storage/db.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
let database: { db: Db; url: string };

beforeAll(async () => {
  database = await createTestDatabase();
  // 30 sites with long paths, each granted to every other: `grant list` prints some 150 KB.
  const sites = await database.db.query<{ id: number }>(
    `INSERT INTO sites (path, name) SELECT 'site-' || i || '-' || repeat('x', 50), 'Site ' || i FROM generate_series(1, 30) i RETURNING id`,
  );
  const ids = sites.map((site) => site.id);
  await database.db.query('INSERT INTO allocation_grants (from_site_id, to_site_id) SELECT f, t FROM unnest($1::bigint[]) f, unnest($1::bigint[]) t WHERE f <> t', [ids]);
}, 120_000);
afterAll(async () => database?.db.close());

describe('a result larger than a pipe holds', () => {
  it('reaches a slow reader whole through the bin', async () => {
    const env = { ...testEnv, PATH: process.env.PATH ?? '', DATABASE_URL: database.url };
    // The reader starts reading a second late: the pipe (64 KiB) is full long before.
    const { stdout: counted } = await run('sh', ['-c', 'node bin/trustfare.mjs grant list | (sleep 1; wc -c)'], { cwd: root, env });
    const bytes = Number(counted.trim());
    expect(bytes).toBeGreaterThan(65_536);
    const { stdout: whole } = await run(process.execPath, ['bin/trustfare.mjs', 'grant', 'list'], { cwd: root, env, maxBuffer: 10_000_000 });
    expect(bytes).toBe(Buffer.byteLength(whole));
    expect(JSON.parse(whole)).toHaveLength(30 * 29);
  }, 60_000);
});
