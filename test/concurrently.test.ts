import { describe, expect, it } from 'vitest';
import { forEachConcurrently } from '../src/concurrently.js';
import { limits } from '../src/limits.js';

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

  it('lets the event loop run between calls that finish without waiting, so a batch of them does not hold requests up', async () => {
    // Each call holds the loop longer than a job's turn may last (an `.eml` written synchronously, slowly).
    const holdMs = limits.jobTurnMsMax + 1;
    const events: string[] = [];
    setImmediate(() => events.push('a request gets the event loop'));
    await forEachConcurrently([1, 2, 3, 4, 5, 6], 4, async (item) => {
      const until = performance.now() + holdMs;
      while (performance.now() < until);
      events.push(`call ${item}`);
    });
    // Without the turns the request would come after all six calls (the awaits alone never yield).
    expect(events.slice(0, 3)).toEqual(['call 1', 'a request gets the event loop', 'call 2']);
    expect(events.filter((event) => event.startsWith('call'))).toEqual(['call 1', 'call 2', 'call 3', 'call 4', 'call 5', 'call 6']);
  });
});

