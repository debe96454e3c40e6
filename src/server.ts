import { buildApp, type App } from './app.js';
import { ConfigError, dataDirPath, loadConfig, shutdownGraceMsOf, startWarnings } from './config.js';
import { dataDirProblem } from './files.js';
import { limits } from './limits.js';
import { clientConnectionsCap, openFilesSoftLimit } from './net.js';
import { createAppContext } from './context.js';
import { logEmbeddedRestarts, openDatabase } from './storage/database.js';
import { EmbeddedStartError } from './storage/embedded.js';
import { databaseProblemsOf } from './storage/database-checks.js';
import { isClusterWorker, runClusterPrimary, runsAsClusterPrimary } from './cluster.js';
import { takeOverShutdownSignals } from './signals.js';
import { cliEnvOf, seedDevelopmentData, startupBanner, type SeedOutcome } from './storage/seed.js';
import path from 'node:path';
import type { Config } from './config.js';
import { backgroundJobs, startJobRunner, type JobRunner } from './jobs/index.js';
import { noLiveProcessorWarning, takesLiveMode } from './processor/index.js';

/** Starts one server process: configuration, database, app, listen, graceful shutdown. */
async function main(): Promise<void> {
  const config = loadConfig();
  // Before anything starts: a signal during start-up stops the server once the start ends.
  const signals = takeOverShutdownSignals();
  // WORKERS > 1: this process supervises the workers (src/cluster.ts) and serves nothing itself.
  if (runsAsClusterPrimary(config)) {
    return runClusterPrimary(config, signals, {
      whenListening: async (database) => {
        const context = createAppContext(config, database.db);
        try {
          printBanner(config, await seedDevelopmentData(context));
        } finally {
          await context.close();
        }
      },
    });
  }
  // A worker reaches the database its primary started and migrated (DATABASE_URL in its env).
  const database = await openDatabase(config, { migrate: !isClusterWorker() });
  const context = createAppContext(config, database.db);
  let app: App | undefined;
  let jobs: JobRunner | undefined;
  // The one way down, for a failed start and for a signal: the listener closes and the requests
  // in flight finish while the jobs' running batches end, then the database. A failed start that
  // skipped it left the embedded PostgreSQL running, and every later start connected to that
  // orphan and left it running too. Together, not jobs first: a batch waiting on a slow relay
  // (a mail send, up to the SMTP timeouts) kept the server taking new requests, which the end of
  // the grace period then cut off, a payment among them (session 29).
  const stop = async () => {
    await Promise.all([jobs?.stop(), app?.close()]);
    await context.close();
    await database.close();
  };
  try {
    app = await buildApp({ context });
    await listen(app, config);
    capClientConnections(app);
    // The server still starts (test channels work); the operator learns why live payments are refused.
    if (!takesLiveMode(config, context.connector)) app.log.warn(noLiveProcessorWarning);
    for (const warning of startWarnings(config)) app.log.warn(warning);
    // A database short of connections for the pools, or not in UTF8, fails requests later (under
    // load, or for some names): said at start, which still goes on (database-checks.ts). A
    // cluster's primary says it once for its workers.
    if (!isClusterWorker()) for (const problem of await databaseProblemsOf(database.db, config.workers)) app.log.warn(problem);
    // Development only, on an empty database: demo site, user, API token and test channel. Seeded
    // once the port is ours: a start that cannot listen creates nothing, so the credentials, shown
    // only once, are shown by the start that serves.
    if (!isClusterWorker()) printBanner(config, await seedDevelopmentData(context));
  } catch (error) {
    await stop();
    throw error;
  }
  // Every process runs the jobs; each claims rows with SKIP LOCKED (src/jobs).
  jobs = startJobRunner(context, backgroundJobs, app.log);
  logEmbeddedRestarts(database, app.log);

  let stopping = false;
  const log = app.log;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // Requests still running at the end of the grace period are cut off; the database is still
    // stopped (an embedded PostgreSQL left running was adopted, never stopped, by the next start).
    const timer = setTimeout(() => {
      log.error('requests or job batches still running at the end of the grace period; stopping without them');
      const hardStop = setTimeout(() => process.exit(1), limits.shutdownGraceMs);
      hardStop.unref();
      void database.close().finally(() => process.exit(1));
    }, shutdownGraceMsOf(config));
    timer.unref();
    await stop();
    process.exit(0);
  };
  signals.onFirst((signal) => void shutdown(signal));
}

/**
 * A listen that fails, told apart from the database's failures: a HOST no resolver knows fails
 * with ENOTFOUND as an unknown PostgreSQL host does, and was reported as one.
 */
class ListenError extends Error {
  constructor(readonly host: string, readonly port: number, readonly code: string | undefined) {
    super(`cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port} (${code ?? 'no error code'})`);
  }
}

async function listen(app: App, config: Config): Promise<void> {
  // The plugins load first, so a failure of theirs is not taken for the listen's.
  await app.ready();
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    // The system's refusals (bind, name lookup) carry the call that failed; anything else is a bug, shown whole.
    const { syscall, code } = error as { syscall?: string; code?: string };
    if (syscall === undefined) throw error;
    throw new ListenError(config.host, config.port, code);
  }
}

/**
 * Holds the process's client connections under its cap (src/net.ts), so the database pool, the
 * mail relays and the files always find a descriptor; connections past it are closed as they
 * arrive and counted in a warning at most once a minute.
 */
function capClientConnections(app: App): void {
  const cap = clientConnectionsCap();
  app.server.maxConnections = cap;
  if (cap < limits.clientConnectionsMax) {
    app.log.warn(`client connections are capped at ${cap}: this process may open ${openFilesSoftLimit()} files (ulimit -n) and keeps ${limits.fileDescriptorsReservedCount} of them for the database, mail and files. Raise the limit (ulimit -n, systemd LimitNOFILE) to ${limits.clientConnectionsMax + limits.fileDescriptorsReservedCount} to hold ${limits.clientConnectionsMax}.`);
  }
  let dropped = 0;
  let lastLogMs = -Infinity;
  app.server.on('drop', () => {
    dropped += 1;
    const now = Date.now();
    if (now - lastLogMs < limits.connectionDropLogIntervalMs) return;
    app.log.warn({ droppedConnections: dropped, clientConnectionsMax: cap }, 'client connections over the cap were closed as they arrived');
    lastLogMs = now;
    dropped = 0;
  });
}

/** What to do about a failed listen, by its code. */
const listenHints: Record<string, string> = {
  EADDRINUSE: 'another trustfare, or another server, listens there. Stop it, or set PORT (and HOST) to listen elsewhere.',
  ENOTFOUND: 'HOST is a name this machine cannot resolve. Set HOST to an address of this machine: 127.0.0.1 (this machine only) or 0.0.0.0 (every interface).',
  EAI_AGAIN: 'HOST could not be resolved (the name server did not answer). Set HOST to an address of this machine: 127.0.0.1 or 0.0.0.0.',
  EADDRNOTAVAIL: 'HOST is not an address of this machine. Set HOST to one of its addresses: 127.0.0.1 (this machine only) or 0.0.0.0 (every interface).',
  EACCES: 'ports below 1024 need privileges this account lacks. Set PORT to 1024 or above (and a proxy in front), or grant the privilege.',
};

/** Plain text on stdout for people; production keeps stdout to the JSON logs. */
function printBanner(config: Config, outcome: SeedOutcome | null): void {
  if (config.env === 'production') return;
  const dataLocation = config.databaseUrl ? 'the database of DATABASE_URL' : config.dataDir;
  const cliEnv = cliEnvOf(config, { dataDir: path.resolve('./data'), port: 3000, baseUrl: 'http://127.0.0.1:3000' });
  console.log(startupBanner({ baseUrl: config.baseUrl, env: config.env, outcome, dataLocation, cliEnv }));
}

main().catch((error: unknown) => {
  console.error(`trustfare: ${startFailure(error)}`);
  process.exit(1);
});

// The connection to PostgreSQL failing before any answer: nothing listens there, or no such host.
const unreachableCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH']);
// PostgreSQL answering with a refusal: no such database, role or password (its message says which).
const refusedCodes = new Set(['3D000', '28000', '28P01']);

/**
 * What to tell the person who ran `npm start`: for the expected failures, the cause and the fix
 * in one line (never the URL, which may hold a password); the stack otherwise.
 */
function startFailure(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof ListenError) return `${error.message}: ${listenHints[error.code ?? ''] ?? 'check HOST and PORT.'}`;
  const { code, address, hostname, port, message } = error as { code?: string; address?: string; hostname?: string; port?: number; message?: string };
  if (code && unreachableCodes.has(code)) return `cannot reach PostgreSQL at ${address ?? hostname}${port ? `:${port}` : ''} (${code}). Check DATABASE_URL, and that the server runs.`;
  if (code && refusedCodes.has(code)) return `PostgreSQL refused the connection: ${message}. Check DATABASE_URL.`;
  const dataDir = dataDirProblem(error, dataDirPath(process.env.DATA_DIR));
  if (dataDir !== null) return dataDir;
  return error instanceof EmbeddedStartError ? error.message : (error as Error).stack ?? String(error);
}
