import { describe, expect, it } from 'vitest';
import { forEachConcurrently } from '../../src/jobs/concurrently.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('forEachConcurrently', () => {
  it('starts the items in order with at most `concurrency` in flight, and resolves when all are done', async () => {
    const started: number[] = [];
    const done: number[] = [];
    let inFlight = 0;
    let most = 0;
    await forEachConcurrently([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      started.push(item);
      most = Math.max(most, ++inFlight);
      for (let wait = 0; wait < 8 - item; wait++) await tick();
      inFlight -= 1;
      done.push(item);
    });
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('starts nothing new after a failure, waits for the calls in flight, then rejects with the first error', async () => {
    const started: number[] = [];
    let inFlight = 0;
    const outcome = forEachConcurrently([1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      inFlight += 1;
      await tick();
      if (item === 1) {
        inFlight -= 1;
        throw new Error('first');
      }
      await tick();
      inFlight -= 1;
    });
    await expect(outcome).rejects.toThrow('first');
    expect(inFlight).toBe(0);
    expect(started).toEqual([1, 2]);
  });

  it('does nothing for no items', async () => {
    let calls = 0;
    await forEachConcurrently([], 4, async () => void (calls += 1));
    expect(calls).toBe(0);
  });
});
