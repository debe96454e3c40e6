// The processes of a bench: where the data lives (a fresh embedded DATA_DIR or a fresh database
// on DATABASE_URL), the service and the ceiling server. Shared by `npm run bench` (main.ts) and
// `npm run bench:serve` (serve.ts), so both measure the same set-up.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { limits } from '../src/limits.js';
import { createDb } from '../src/storage/db.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/storage/embedded.js';
import { callOk } from './fixtures.js';
import { freePort, startChild, tail, waitForOk, type Child } from './processes.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);

/** What starting the stack needs of the bench's settings. */
export interface StackSettings {
  externalUrl: string | undefined;
  keep: boolean;
  nodeEnv: string;
  logLevel: string;
  /** Load pg_stat_statements into the embedded server (`npm run bench:serve` with BENCH_PG_STATS=1). */
  statementStats?: boolean;
}

export type Ceiling = Awaited<ReturnType<typeof startCeiling>>;

/** Where the bench's data lives: the embedded server in a fresh DATA_DIR, or a fresh database. */
export interface Workspace {
  dataDir: string;
  databaseUrl: string;
  embedded: EmbeddedDatabase | null;
  /** Stops the embedded server (the start-up measurement starts it again through the service). */
  stopEmbedded(): Promise<void>;
  dispose(): Promise<void>;
}

export async function openWorkspace(settings: StackSettings): Promise<Workspace> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trustfare-bench-'));
  const removeDir = () => (settings.keep ? progress(`kept ${dataDir}`) : rmSync(dataDir, { recursive: true, force: true }));
  if (settings.externalUrl) {
    const name = `trustfare_bench_${randomBytes(4).toString('hex')}`;
    const admin = createDb(settings.externalUrl, 1);
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.close();
    const url = new URL(settings.externalUrl);
    url.pathname = `/${name}`;
    return {
      dataDir,
      databaseUrl: url.toString(),
      embedded: null,
      stopEmbedded: async () => undefined,
      async dispose() {
        if (settings.keep) {
          progress(`kept database ${name} and ${dataDir}`);
          return;
        }
        const cleanup = createDb(settings.externalUrl!, 1);
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => cleanup.close());
        removeDir();
      },
    };
  }
  // The service started with this DATA_DIR finds the running cluster and connects to it, so the
  // bench knows the URL and the service still runs its embedded-database code path.
  // With statement statistics the server's log is kept too, so the plans auto_explain logs can
  // be read (statementStatsHelp in serve.ts says how).
  const postgresFlags = settings.statementStats ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : [];
  let embedded: EmbeddedDatabase | null = await startEmbeddedPostgres(dataDir, {
    postgresFlags, ...(settings.statementStats ? { logFile: postgresLogFile(dataDir) } : {}),
  });
  if (settings.statementStats) {
    const admin = createDb(embedded.url, 1);
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').finally(() => admin.close());
  }
  const workspace: Workspace = {
    dataDir,
    databaseUrl: embedded.url,
    embedded,
    async stopEmbedded() {
      await embedded?.stop();
      embedded = null;
    },
    async dispose() {
      await workspace.stopEmbedded();
      removeDir();
    },
  };
  return workspace;
}

export interface Service {
  child: Child;
  baseUrl: string;
  msToReady: number;
}

export const secrets = () => {
  const key = () => randomBytes(32).toString('base64');
  return { JWT_SECRET: key(), CARD_KEYS: `bench:${key()}`, CARD_FINGERPRINT_KEY: key(), SIGNING_SECRET: key() };
};

/**
 * `checkout`: the built checkout to run (its `dist/server.js`); another one for `npm run bench:ab`.
 * `nodeArgs`: Node options for this service only, after BENCH_SERVICE_NODE_ARGS (bench:ab's per-side ones).
 */
export async function startService(settings: StackSettings, workspace: Workspace, workers: number, label: string, serviceSecrets: Record<string, string>, checkout = root, nodeArgs: string[] = []): Promise<Service> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...serviceSecrets,
    NODE_ENV: settings.nodeEnv,
    HOST: '127.0.0.1',
    PORT: String(port),
    BASE_URL: baseUrl,
    DATA_DIR: workspace.dataDir,
    DATABASE_URL: settings.externalUrl ? workspace.databaseUrl : undefined,
    WORKERS: String(workers),
    LOG_LEVEL: settings.logLevel,
    // The bench is one client hammering one token: the per-token rate limit must not apply.
    RATE_LIMIT_PER_MINUTE: '10000000',
  };
  const startedAtMs = performance.now();
  // e.g. BENCH_SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the service only.
  const child = startChild(process.execPath, [...words(process.env.BENCH_SERVICE_NODE_ARGS), ...nodeArgs, path.join(checkout, 'dist/server.js')], { env, cwd: checkout, logFile: path.join(workspace.dataDir, `service-${label}.log`) });
  const msToReady = await waitForOk(`${baseUrl}/readyz`, { startedAtMs, timeoutMs: 120_000, child });
  return { child, baseUrl, msToReady };
}

/** Space-separated options, e.g. of an environment variable (none when unset). */
export function words(value: string | undefined): string[] {
  return (value ?? '').split(' ').filter(Boolean);
}

export async function stopService(service: Service, problems: string[], label: string): Promise<void> {
  const code = await service.child.stop();
  if (code !== 0) problems.push(`${label}: the service exited with ${code} on SIGTERM (log: ${service.child.logFile})\n${tail(service.child.logFile)}`);
}

/** The ceiling server: its own process, same database server, same pool size as the service. */
export async function startCeiling(workspace: Workspace): Promise<{ child: Child; baseUrl: string; setPayload(name: string, status: number, body: unknown): Promise<void> }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = startChild(process.execPath, ['--import', 'tsx', path.join(root, 'bench/ceiling-server.ts')], {
    env: { ...process.env, PORT: String(port), DATABASE_URL: workspace.databaseUrl, POOL_SIZE: String(limits.dbPoolSize), NODE_ENV: 'production' },
    cwd: root,
    logFile: path.join(workspace.dataDir, 'ceiling.log'),
  });
  await waitForOk(`${baseUrl}/ready`, { startedAtMs: performance.now(), timeoutMs: 60_000, child });
  return {
    child,
    baseUrl,
    async setPayload(name, status, body) {
      await callOk(baseUrl, 'PUT', `/payloads/${name}`, { body: { status, body } });
    },
  };
}

/** Where the embedded server's log goes when it is kept (BENCH_PG_STATS=1). */
export function postgresLogFile(dataDir: string): string {
  return path.join(dataDir, 'postgresql.log');
}
