import type { AppContext } from '../context.js';

/** A background job: `run` handles one bounded batch and returns what it did (for logs and tests). */
export interface Job {
  name: string;
  intervalMs: number;
  run(context: AppContext): Promise<unknown>;
}

export interface JobRunner {
  /** Stops scheduling and waits for running batches to finish. */
  stop(): Promise<void>;
}

export interface JobLogger {
  info(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
}

/**
 * Runs each job every `intervalMs`, one batch at a time per job (a run never overlaps itself).
 * Jobs are safe with several processes running them at once (each claims rows with
 * `FOR UPDATE SKIP LOCKED`), so every server process starts a runner. A failing batch is
 * logged and retried at the next interval; timers do not keep the process alive.
 */
export function startJobRunner(context: AppContext, jobs: readonly Job[], log: JobLogger): JobRunner {
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  const schedule = (job: Job) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const batch = runOnce(context, job, log).finally(() => {
        running.delete(batch);
        schedule(job);
      });
      running.add(batch);
    }, job.intervalMs);
    timer.unref();
    timers.add(timer);
  };
  for (const job of jobs) schedule(job);
  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running]);
    },
  };
}

async function runOnce(context: AppContext, job: Job, log: JobLogger): Promise<void> {
  try {
    const result = await job.run(context);
    if (result && typeof result === 'object' && Object.values(result).some((value) => typeof value === 'number' && value > 0)) {
      log.info({ job: job.name, result }, 'job batch done');
    }
  } catch (error) {
    log.error({ job: job.name, err: error }, 'job batch failed');
  }
}
