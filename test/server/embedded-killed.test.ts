import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { killServers, spawnServer, type ServerProcess } from '../support/server-process.js';
import { tempDirForTest } from '../support/temp-dir.js';
import { processAlive } from '../support/cluster.js';

// The embedded PostgreSQL killed under a running server (kill -9, the kernel's OOM killer): nobody
// else starts it again, so the server must, or it answers 503 and 500 until someone restarts it
// by hand (a supervisor sees a live process and does nothing).
afterAll(killServers);

const postmasterPidOf = (dataDir: string) => Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);

async function readyStatus(server: ServerProcess): Promise<number> {
  return (await fetch(`${server.baseUrl}/readyz`)).status;
}

describe.each([1, 2])('the embedded PostgreSQL killed under a running server, WORKERS=%i', (workers) => {
  it('is started again on the same data: /readyz is 200 again, the log says so, and SIGTERM still stops both', async () => {
    const dataDir = tempDirForTest('pg-killed');
    const server = await spawnServer({ DATA_DIR: dataDir, WORKERS: String(workers) });
    await vi.waitFor(async () => expect(await readyStatus(server)).toBe(200), { timeout: 90_000, interval: 100 });
    const killed = postmasterPidOf(dataDir);
    process.kill(killed, 'SIGKILL');
    await vi.waitFor(() => expect(processAlive(killed)).toBe(false), { timeout: 10_000, interval: 50 });

    await vi.waitFor(async () => expect(await readyStatus(server)).toBe(200), { timeout: 60_000, interval: 200 });
    const restarted = postmasterPidOf(dataDir);
    expect(restarted).not.toBe(killed);
    // Ready can come a moment before the restart's line: PostgreSQL takes connections before its start returns.
    await vi.waitFor(() => expect(server.output()).toMatch(/"msg":"the embedded PostgreSQL stopped without being asked[^"]*; started it again/), { timeout: 10_000, interval: 100 });

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(processAlive(restarted)).toBe(false);
  }, 180_000);
});
