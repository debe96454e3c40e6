import cluster, { type Worker } from 'node:cluster';
import pino, { type Logger } from 'pino';
import { embeddedDatabaseWorkerEnv, shutdownGraceMsOf, type Config } from './config.js';
import { limits } from './limits.js';
import { databaseProblemsOf } from './storage/database-checks.js';
import { logEmbeddedRestarts, openDatabase, type OpenDatabase } from './storage/database.js';
import type { ShutdownSignals } from './signals.js';

/**
 * Serving on every core with node:cluster (WORKERS > 1).
 *
 * The primary owns what must happen once per start: it starts the embedded PostgreSQL (unless
 * DATABASE_URL names one), runs the migrations, forks the workers, which share the listening port
 * (the primary hands out connections round robin), and once they all listen does the once-per-start
 * work (the seed). Workers get the connection URL through DATABASE_URL, so none of them starts a database
 * server of its own or migrates. Background jobs run in every worker: they claim their rows with
 * `FOR UPDATE SKIP LOCKED`, so two workers never work on the same row.
 *
 * Shutdown (SIGTERM or SIGINT to the primary): workers stop first (each finishes its in-flight
 * requests), then the database.
 */

/** True in the process that must supervise workers instead of serving. */
export function runsAsClusterPrimary(config: Config): boolean {
  return config.workers > 1 && cluster.isPrimary;
}

/** True in a forked worker: the primary already migrated and prepared the database. */
export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

export interface ClusterOptions {
  /**
   * Once-per-start work after every worker listens (the seed and its banner): a start whose
   * workers cannot listen (a port in use) creates nothing.
   */
  whenListening?: (database: OpenDatabase, log: Logger) => Promise<void>;
}

/** Runs the primary until a signal stops it; exits the process when done. */
export async function runClusterPrimary(config: Config, signals: ShutdownSignals, options: ClusterOptions = {}): Promise<void> {
  const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'primary' } });
  // One connection is enough for migrations and the seed; the pool lets it go when idle.
  const database = await openDatabase(config, { poolSize: 1 });
  const connectionString = database.db.pool.options.connectionString;
  if (!connectionString) throw new Error('cluster primary: the database handle has no connection string');
  const supervisor = new WorkerSupervisor(config.workers, { DATABASE_URL: connectionString, ...(database.embedded ? { [embeddedDatabaseWorkerEnv]: '1' } : {}) }, log);

  let stopping = false;
  const shutdown = async (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    if (exitCode === 0) log.info({ reason }, 'shutting down workers');
    else log.error({ reason }, 'shutting down workers after a failure');
    await supervisor.stopAll(shutdownGraceMsOf(config));
    await database.close();
    log.info('stopped');
    process.exit(exitCode);
  };
  supervisor.onFatal = (message) => {
    log.error(message);
    void shutdown(message, 1);
  };
  // A signal that came while the database started stops the primary here, before any fork.
  signals.onFirst((signal) => void shutdown(signal, 0));
  if (stopping) return;

  try {
    for (const problem of await databaseProblemsOf(database.db, config.workers)) log.warn(problem);
    if (stopping) return;
    await supervisor.startAll();
    // The last worker may listen after a signal: the once-per-start work is then not done.
    if (stopping) return;
    log.info({ workers: config.workers, host: config.host, port: config.port }, 'all workers listening');
    logEmbeddedRestarts(database, log);
    await options.whenListening?.(database, log);
  } catch (error) {
    await shutdown((error as Error).message, 1);
  }
}

/**
 * Forks the workers, replaces one that dies while serving (a bounded number of times per
 * minute, so a crash loop stops the service instead of spinning), and stops them all.
 */
class WorkerSupervisor {
  onFatal: (message: string) => void = () => undefined;
  private stopping = false;
  private failStart: ((error: Error) => void) | null = null;
  private readonly listening = new Set<number>();
  private readonly restartTimesMs: number[] = [];
  private readonly handoffs = new Map<number, Handoffs>();

  constructor(
    private readonly count: number,
    private readonly env: Record<string, string>,
    private readonly log: Logger,
  ) {
    cluster.on('exit', (worker, code, signal) => this.onExit(worker, code, signal));
  }

  /** Resolves once every worker listens; rejects if one exits before it listened. */
  startAll(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.failStart = reject;
      let pending = this.count;
      for (let index = 0; index < this.count; index++) {
        this.fork().once('listening', () => {
          pending -= 1;
          if (pending > 0) return;
          this.failStart = null;
          resolve();
        });
      }
    });
  }

  /** SIGTERM to every worker; SIGKILL to those still running after `graceMs`. */
  async stopAll(graceMs: number): Promise<void> {
    this.stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    const exits = workers.map((worker) => new Promise<void>((resolve) => {
      if (worker.isDead()) return resolve();
      worker.once('exit', () => resolve());
      worker.process.kill('SIGTERM');
    }));
    const timer = setTimeout(() => {
      const running = workers.filter((worker) => !worker.isDead());
      this.log.error({ workerPids: running.map((worker) => worker.process.pid) }, 'workers still running at the end of the grace period; killing them');
      for (const worker of running) worker.process.kill('SIGKILL');
    }, graceMs);
    await Promise.all(exits);
    clearTimeout(timer);
  }

  private fork(): Worker {
    const worker = cluster.fork(this.env);
    worker.once('listening', () => this.listening.add(worker.id));
    this.handoffs.set(worker.id, watchHandoffs(worker));
    return worker;
  }

  private onExit(worker: Worker, code: number | null, signal: string | null): void {
    this.handoffs.get(worker.id)?.closeUnanswered();
    this.handoffs.delete(worker.id);
    const servedBefore = this.listening.delete(worker.id);
    if (this.stopping) return;
    if (!servedBefore) {
      const message = `worker ${worker.process.pid} exited during start-up (code ${code}, signal ${signal})`;
      return this.failStart ? this.failStart(new Error(message)) : this.onFatal(message);
    }
    const nowMs = Date.now();
    while (this.restartTimesMs.length > 0 && this.restartTimesMs[0]! < nowMs - 60_000) this.restartTimesMs.shift();
    if (this.restartTimesMs.length >= limits.workerRestartsPerMinuteMax) {
      return this.onFatal(`workers exited ${this.restartTimesMs.length + 1} times within a minute; giving up`);
    }
    this.restartTimesMs.push(nowMs);
    this.log.error({ workerPid: worker.process.pid, code, signal }, 'worker exited; starting a replacement');
    this.fork();
  }
}

interface Handoffs {
  /** Closes the client connection handed to the worker that it never answered for (its exit). */
  closeUnanswered(): void;
}

/**
 * The primary accepts each client connection and hands it to a worker (node:cluster's round
 * robin: a `newconn` message carrying the socket), keeping its own copy until the worker answers
 * that it took it. A worker that dies before answering (SIGKILL, the OOM killer, a crash) never
 * answers, and Node keeps that copy for ever: the client's connection stays open, its request
 * unread, with no answer and no reset, until the client gives up (a drill killing a worker under
 * load left one purchase waiting 90 s, the client's own bound). Watching the worker's messages
 * tells which connection it was handed and not yet answered for, so its exit closes that one: the
 * client sees the connection reset at once, its request never read (nothing was done), and sends
 * it again like any other request of a worker that died. At most one is in flight per worker: the
 * primary hands the next only after the answer.
 */
function watchHandoffs(worker: Worker): Handoffs {
  type Closable = { close(): void };
  let unanswered: { seq: unknown; handle: Closable } | null = null;
  const child = worker.process;
  const send = child.send.bind(child) as (...args: unknown[]) => boolean;
  child.send = ((message: unknown, handle?: unknown, ...rest: unknown[]) => {
    const sent = message as { act?: unknown; seq?: unknown } | null;
    if (sent?.act === 'newconn' && handle) unanswered = { seq: sent.seq, handle: handle as Closable };
    return send(message, handle, ...rest);
  }) as typeof child.send;
  // The worker's answer (accepted, or refused while it stops: then the primary hands the
  // connection to another worker) ends the primary's part in it.
  child.on('internalMessage', (message: { ack?: unknown } | null) => {
    if (unanswered && message?.ack === unanswered.seq) unanswered = null;
  });
  return {
    closeUnanswered() {
      unanswered?.handle.close();
      unanswered = null;
    },
  };
}
