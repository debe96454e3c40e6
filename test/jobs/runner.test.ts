import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppContext } from '../../src/context.js';
import { backgroundJobs, startJobRunner, type Job } from '../../src/jobs/index.js';
import { limits } from '../../src/limits.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const context = {} as AppContext;

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 500 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

describe('job runner', () => {
  it('runs each job repeatedly, never overlapping a job with itself, and survives a failing batch', async () => {
    let running = 0;
    let overlapped = false;
    let runs = 0;
    let failures = 0;
    const slow: Job = {
      name: 'slow',
      intervalMs: 1,
      run: async () => {
        running += 1;
        overlapped ||= running > 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
        running -= 1;
        runs += 1;
        return { done: 1 };
      },
    };
    const failing: Job = { name: 'failing', intervalMs: 1, run: async () => { failures += 1; throw new Error('boom'); } };
    const errors: string[] = [];
    const runner = startJobRunner(context, [slow, failing], { ...silent, error: (details) => void errors.push(String(details.job)) });
    await until(() => runs >= 3 && failures >= 3);
    await runner.stop();
    const runsAtStop = runs;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(overlapped).toBe(false);
    expect(runs).toBe(runsAtStop);
    expect(errors).toContain('failing');
  });

  it('registers the payments jobs', () => {
    expect(backgroundJobs.map((job) => job.name)).toEqual(expect.arrayContaining(['expire-pending-3ds', 'reconcile-incomplete', 'purge-idempotency-keys']));
  });
});

describe('job runner with a backlog', () => {
  afterEach(() => vi.useRealTimers());

  it('runs a job again after limits.jobBacklogPauseMs while it reports a backlog, then waits its interval', async () => {
    vi.useFakeTimers();
    const intervalMs = 60_000;
    let runs = 0;
    // Three full batches, then nothing left.
    const draining: Job = { name: 'draining', intervalMs, run: async () => ({ handled: 1, backlog: ++runs <= 3 }) };
    const runner = startJobRunner(context, [draining], silent);
    await vi.advanceTimersByTimeAsync(intervalMs);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(limits.jobBacklogPauseMs * 3);
    expect(runs).toBe(4);
    // The fourth run reported no backlog: the next one waits the whole interval.
    await vi.advanceTimersByTimeAsync(intervalMs - 1);
    expect(runs).toBe(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toBe(5);
    await runner.stop();
  });

  it('logs a run that set items back as an error', async () => {
    vi.useFakeTimers();
    const logged: { level: string; message: string }[] = [];
    const log = {
      info: (_details: Record<string, unknown>, message: string) => void logged.push({ level: 'info', message }),
      warn: (_details: Record<string, unknown>, message: string) => void logged.push({ level: 'warn', message }),
      error: (_details: Record<string, unknown>, message: string) => void logged.push({ level: 'error', message }),
    };
    let runs = 0;
    const job: Job = { name: 'settling', intervalMs: 1000, run: async () => (++runs === 1 ? { examined: 2, errors: [{ id: 7, message: 'boom' }] } : { examined: 1, errors: [] }) };
    const runner = startJobRunner(context, [job], log);
    await vi.advanceTimersByTimeAsync(2000);
    await runner.stop();
    expect(logged).toEqual([{ level: 'error', message: 'job batch set items back it could not handle' }, { level: 'info', message: 'job batch done' }]);
  });

  it('logs each item a run gave up on for good as its own warning, with its details, and leaves them out of the summary line', async () => {
    vi.useFakeTimers();
    const logged: { level: string; details: Record<string, unknown>; message: string }[] = [];
    const log = {
      info: (details: Record<string, unknown>, message: string) => void logged.push({ level: 'info', details, message }),
      warn: (details: Record<string, unknown>, message: string) => void logged.push({ level: 'warn', details, message }),
      error: (details: Record<string, unknown>, message: string) => void logged.push({ level: 'error', details, message }),
    };
    let runs = 0;
    const job: Job = {
      name: 'delivering',
      intervalMs: 1000,
      run: async () => (++runs === 1 ? { failed: 2, failures: [{ message: 'gone for good', item: 3 }, { message: 'gone for good', item: 4 }] } : {}),
    };
    const runner = startJobRunner(context, [job], log);
    await vi.advanceTimersByTimeAsync(1000);
    await runner.stop();
    expect(logged).toEqual([
      { level: 'warn', details: { job: 'delivering', item: 3 }, message: 'gone for good' },
      { level: 'warn', details: { job: 'delivering', item: 4 }, message: 'gone for good' },
      { level: 'info', details: { job: 'delivering', result: { failed: 2 } }, message: 'job batch done' },
    ]);
  });

  it('waits the interval after a failed batch', async () => {
    vi.useFakeTimers();
    const intervalMs = 60_000;
    let runs = 0;
    const failing: Job = { name: 'failing', intervalMs, run: async () => { runs += 1; throw new Error('boom'); } };
    const runner = startJobRunner(context, [failing], silent);
    await vi.advanceTimersByTimeAsync(intervalMs + limits.jobBacklogPauseMs * 5);
    expect(runs).toBe(1);
    await runner.stop();
  });
});
