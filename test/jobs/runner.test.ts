import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.js';
import { backgroundJobs, startJobRunner, type Job } from '../../src/jobs/index.js';

const silent = { info: () => undefined, error: () => undefined };
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
    const runner = startJobRunner(context, [slow, failing], { info: silent.info, error: (details) => void errors.push(String(details.job)) });
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
