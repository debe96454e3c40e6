import { turnKeeper } from './bounded.js';

/**
 * Calls `work` for each item, started in order, with at most `concurrency` calls in flight (the
 * jobs' sends and processor look-ups wait on the network, not on this process). After a call
 * fails no new one starts; the promise settles once the calls in flight have, so a job's run
 * never ends while its work goes on, and rejects with the first failure. Calls that finish
 * without waiting (an `.eml` written synchronously) let the event loop run between them
 * (turnKeeper), so a batch of them does not hold requests up.
 */
export async function forEachConcurrently<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const state: { next: number; failure: { error: unknown } | null } = { next: 0, failure: null };
  const keepTurns = turnKeeper();
  const worker = async () => {
    while (!state.failure && state.next < items.length) {
      // Checked again after each yield: another worker's call may have run meanwhile.
      for (let turn = keepTurns(); turn; turn = keepTurns()) await turn;
      if (state.failure || state.next >= items.length) break;
      const item = items[state.next++]!;
      try {
        await work(item);
      } catch (error) {
        state.failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  if (state.failure) throw state.failure.error;
}
