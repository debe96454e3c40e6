import type { AppContext } from '../context.js';
import { limits } from '../limits.js';

/**
 * A background job: `run` handles one bounded batch and returns what it did (for logs and tests).
 * A result carrying `backlog: true` says the run stopped at its batch bound with work left: the
 * runner runs it again after limits.jobBacklogPauseMs instead of waiting `intervalMs`, so a burst
 * drains at the speed of the work, not of the timer.
 */
export interface Job {
  name: string;
  intervalMs: number;
  run(context: AppContext): Promise<unknown>;
}

/** What a job's result may say to the runner. */
export interface JobResult {
  backlog?: boolean;
  /** Items the run could not handle and set back; logged as an error. */
  errors?: unknown[];
  /**
   * Items the run gave up on for good (a mail the relay refused): each logged as its own warning,
   * `message` the line's text and the rest its details, so an operator sees every one (a count in
   * the summary line named none).
   */
  failures?: ({ message: string } & Record<string, unknown>)[];
  /** What went wrong this run but is tried again (a relay that deferred its mails): each a warning, as `failures`. */
  warnings?: ({ message: string } & Record<string, unknown>)[];
}

export interface JobRunner {
  /** Stops scheduling and waits for running batches to finish. */
  stop(): Promise<void>;
}

export interface JobLogger {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
}

/**
 * Runs each job every `intervalMs` (sooner while it reports a backlog), one batch at a time per
 * job (a run never overlaps itself).
 * Jobs are safe with several processes running them at once (each claims rows with
 * `FOR UPDATE SKIP LOCKED`), so every server process starts a runner. A failing batch is
 * logged and retried at the next interval; timers do not keep the process alive.
 */
export function startJobRunner(context: AppContext, jobs: readonly Job[], log: JobLogger): JobRunner {
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  const schedule = (job: Job, delayMs: number) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      // runOnce never rejects: a failed batch is logged there.
      const batch = runOnce(context, job, log).then((backlog) => {
        running.delete(batch);
        schedule(job, backlog ? limits.jobBacklogPauseMs : job.intervalMs);
      });
      running.add(batch);
    }, delayMs);
    timer.unref();
    timers.add(timer);
  };
  for (const job of jobs) schedule(job, job.intervalMs);
  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running]);
    },
  };
}

/** Runs one batch; true when its result reports a backlog. A failed batch waits the interval. */
async function runOnce(context: AppContext, job: Job, log: JobLogger): Promise<boolean> {
  try {
    const result = await job.run(context);
    if (!result || typeof result !== 'object') return false;
    const { failures, warnings, ...summary } = result as JobResult & Record<string, unknown>;
    for (const { message, ...details } of [...(failures ?? []), ...(warnings ?? [])]) log.warn({ job: job.name, ...details }, message);
    if (summary.errors && summary.errors.length > 0) log.error({ job: job.name, result: summary }, 'job batch set items back it could not handle');
    else if (Object.values(summary).some((value) => typeof value === 'number' && value > 0)) log.info({ job: job.name, result: summary }, 'job batch done');
    return summary.backlog === true;
  } catch (error) {
    log.error({ job: job.name, err: error }, 'job batch failed');
    return false;
  }
}
