/**
 * Calls `work` for each item, started in order, with at most `concurrency` calls in flight (the
 * jobs' sends and processor look-ups wait on the network, not on this process). After a call
 * fails no new one starts; the promise settles once the calls in flight have, so a job's run
 * never ends while its work goes on, and rejects with the first failure.
 */
export async function forEachConcurrently<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const state: { next: number; failure: { error: unknown } | null } = { next: 0, failure: null };
  const worker = async () => {
    while (!state.failure && state.next < items.length) {
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
