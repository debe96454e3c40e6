import { Worker, parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { loadConfig } from '../config.js';
import { createAppContext } from '../context.js';
import { limits } from '../limits.js';
import { openDatabase } from '../storage/database.js';
import { backgroundJobs } from './index.js';
import { startJobRunner, type JobLogger } from './runner.js';

/**
 * The background jobs run on a thread of their own in each server process (issue 7, "every
 * core"). On the API's event loop, the mail job's rendering, message composition and file or SMTP
 * work cost about as much CPU per purchase as the purchase's own request, and each of its turns
 * delayed the answers to the settlement batch's statements, whose serial time bounds the rate of
 * purchases (docs/performance.md, session 16). The thread connects to the database its process
 * opened, through pools of its own (limits.jobThreadDbPoolSize, and the sandbox's for the
 * reconciliation look-ups); jobs stay safe with any number of runners (FOR UPDATE SKIP LOCKED).
 */

const role = 'trustfare-jobs';

interface JobThreadData {
  role: typeof role;
  databaseUrl: string;
}

/** True on the jobs thread (the server's entry module runs runJobThread there instead of the server). */
export function isJobThread(): boolean {
  return (workerData as Partial<JobThreadData> | null)?.role === role;
}

/**
 * On the jobs thread: runs the jobs until the process says stop, then lets their batches finish
 * and closes its pools (the thread then ends on its own).
 */
export async function runJobThread(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('runJobThread: not on a worker thread');
  const { databaseUrl } = workerData as JobThreadData;
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl });
  const database = await openDatabase(config, { migrate: false, poolSize: limits.jobThreadDbPoolSize });
  const context = createAppContext(config, database.db);
  const log = pino({ level: config.logLevel, base: { pid: process.pid, thread: 'jobs' } });
  const runner = startJobRunner(context, backgroundJobs, log);
  port.once('message', () => {
    void (async () => {
      await runner.stop();
      await context.close();
      await database.close();
      port.close();
    })();
  });
  port.postMessage('started');
}

export interface JobThread {
  /** Asks the thread to stop and waits for it (its running batches finish), terminating it after `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

export interface JobThreadOptions {
  /** The module the thread runs: the server's entry, which calls runJobThread when isJobThread(). */
  entry: URL;
  /** The database the process opened (the embedded one's URL, or DATABASE_URL). */
  databaseUrl: string;
  log: JobLogger;
  /** The thread died more than limits.workerRestartsPerMinuteMax times within a minute: the process should stop. */
  onFatal: (message: string) => void;
}

/** Starts the jobs thread, and a replacement whenever it dies (bounded as the cluster's workers are). */
export function startJobThread(options: JobThreadOptions): JobThread {
  let stopping = false;
  let current: { worker: Worker; exited: Promise<void> };
  const restartTimesMs: number[] = [];
  const spawn = () => {
    const worker = new Worker(options.entry, { workerData: { role, databaseUrl: options.databaseUrl } satisfies JobThreadData });
    worker.on('error', (error) => options.log.error({ err: error }, 'jobs thread failed'));
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.once('exit', (code) => {
      if (stopping) return;
      const nowMs = Date.now();
      while (restartTimesMs.length > 0 && restartTimesMs[0]! < nowMs - 60_000) restartTimesMs.shift();
      if (restartTimesMs.length >= limits.workerRestartsPerMinuteMax) {
        return options.onFatal(`the jobs thread exited ${restartTimesMs.length + 1} times within a minute; giving up`);
      }
      restartTimesMs.push(nowMs);
      options.log.error({ code }, 'jobs thread exited; starting a replacement');
      spawn();
    });
    current = { worker, exited };
  };
  spawn();
  return {
    async stop(graceMs) {
      stopping = true;
      const { worker, exited } = current;
      // A thread that exited already ignores the message; `exited` has resolved then.
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
