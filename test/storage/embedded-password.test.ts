// The embedded cluster's superuser password is the data directory's own (DATA_DIR/pg-password,
// 0600), so no other local account can log in to it over TCP, and a cluster made with the former
// fixed password takes its own on the next start.
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/storage/embedded.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-pg-password-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Logs in as the superuser with `password`: the SQLSTATE of a refusal, or 'ok'. */
async function login(url: string, password: string): Promise<string> {
  const { port } = new URL(url);
  const client = new pg.Client({ host: '127.0.0.1', port: Number(port), user: 'postgres', password, database: 'postgres' });
  try {
    await client.connect();
    await client.end();
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

const ownPassword = () => readFileSync(path.join(dataDir, 'pg-password'), 'utf8');

describe('the embedded cluster password', () => {
  it('is made for the data directory, readable by its owner alone, and the former fixed one no longer logs in', async () => {
    const embedded = await startEmbeddedPostgres(dataDir);
    try {
      expect(statSync(path.join(dataDir, 'pg-password')).mode & 0o777).toBe(0o600);
      expect(ownPassword()).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(await login(embedded.url, ownPassword())).toBe('ok');
      expect(await login(embedded.url, 'trustfare')).toBe('28P01');
      expect(decodeURIComponent(new URL(embedded.url).password)).toBe(ownPassword());
    } finally {
      await embedded.stop();
    }
  }, 120_000);

  it('replaces the former fixed password of a cluster made before, on its next start', async () => {
    // A cluster as earlier versions left it: the fixed password, no pg-password file.
    const before = await startEmbeddedPostgres(dataDir);
    const admin = new pg.Client({ connectionString: before.url });
    await admin.connect();
    await admin.query("ALTER ROLE postgres PASSWORD 'trustfare'");
    await admin.end();
    await before.stop();
    unlinkSync(path.join(dataDir, 'pg-password'));
    const after = await startEmbeddedPostgres(dataDir);
    try {
      expect(await login(after.url, 'trustfare')).toBe('28P01');
      expect(await login(after.url, ownPassword())).toBe('ok');
    } finally {
      await after.stop();
    }
  }, 120_000);
});
