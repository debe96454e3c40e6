import { describe, expect, it } from 'vitest';
import { Batcher, retriedAlone } from '../src/batcher.js';

/** A write whose batches stay open until the test lets them go. */
function heldWrites() {
  const batches: { items: number[]; release: () => void }[] = [];
  const write = (items: number[]) => new Promise<PromiseSettledResult<string>[]>((resolve) => {
    batches.push({ items, release: () => resolve(items.map((item) => (item < 0 ? { status: 'rejected', reason: new Error(`item ${item}`) } : { status: 'fulfilled', value: `done ${item}` }))) });
  });
  return { batches, write };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Batcher', () => {
  it('starts a lone item at once, and puts the items that arrive while every slot is busy in the next batch', async () => {
    const { batches, write } = heldWrites();
    const batcher = new Batcher(write, { batchMax: 3, inFlightMax: 1 });
    const first = batcher.add(1);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1]]);
    const waiting = [2, 3, 4, 5].map((item) => batcher.add(item));
    await tick();
    expect(batches).toHaveLength(1);
    batches[0]!.release();
    expect(await first).toBe('done 1');
    await tick();
    // batchMax 3: the fifth waits for the batch after.
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3, 4]]);
    batches[1]!.release();
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3, 4], [5]]);
    batches[2]!.release();
    expect(await Promise.all(waiting)).toEqual(['done 2', 'done 3', 'done 4', 'done 5']);
  });

  it('never puts two items with a common conflict key in one batch, and keeps the order of the rest', async () => {
    const { batches, write } = heldWrites();
    const batcher = new Batcher(write, { batchMax: 10, inFlightMax: 1, conflictKeys: (item: number) => [item % 10] });
    const all = [1, 2, 11, 3, 12, 21].map((item) => batcher.add(item));
    await tick();
    batches[0]!.release();
    await tick();
    expect(batches[1]!.items).toEqual([2, 11, 3]);
    batches[1]!.release();
    await tick();
    expect(batches[2]!.items).toEqual([12, 21]);
    batches[2]!.release();
    expect(await Promise.all(all)).toEqual(['done 1', 'done 2', 'done 11', 'done 3', 'done 12', 'done 21']);
    expect(batches).toHaveLength(3);
  });

  it('gives each item its own outcome, and every item of a batch the error when the write throws', async () => {
    const { batches, write } = heldWrites();
    const batcher = new Batcher(write, { batchMax: 5, inFlightMax: 2 });
    const [good, bad] = [batcher.add(7), batcher.add(-7)];
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[7], [-7]]);
    batches.forEach((batch) => batch.release());
    expect(await good).toBe('done 7');
    await expect(bad).rejects.toThrow('item -7');

    const failing = new Batcher<number, string>(async () => { throw new Error('database gone'); }, { batchMax: 5, inFlightMax: 1 });
    const outcomes = await Promise.allSettled([failing.add(1), failing.add(2)]);
    expect(outcomes.map((outcome) => outcome.status === 'rejected' && (outcome.reason as Error).message)).toEqual(['database gone', 'database gone']);
  });
});

describe('retriedAlone', () => {
  const together = async (items: number[]) => {
    if (items.length > 1 && items.includes(-1)) throw new Error('the batch failed');
    return items.map((item): PromiseSettledResult<string> => ({ status: 'fulfilled', value: `together ${item}` }));
  };
  const alone = async (item: number) => {
    if (item === -1) throw new Error(`item ${item} failed`);
    return `alone ${item}`;
  };

  it('keeps the batch when it is written together', async () => {
    expect(await retriedAlone([1, 2], together, alone)).toEqual([{ status: 'fulfilled', value: 'together 1' }, { status: 'fulfilled', value: 'together 2' }]);
  });

  it('writes each item alone when the batch fails, so the failure reaches only its own item', async () => {
    const results = await retriedAlone([1, -1, 2], together, alone);
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as Error).message))).toEqual(['alone 1', 'item -1 failed', 'alone 2']);
  });

  it('answers a lone item with the failure of its batch, without a second try', async () => {
    let calls = 0;
    const failing = async () => {
      calls += 1;
      throw new Error('the batch of one failed');
    };
    const results = await retriedAlone([7], failing, alone);
    expect(results).toEqual([{ status: 'rejected', reason: new Error('the batch of one failed') }]);
    expect(calls).toBe(1);
  });
});
