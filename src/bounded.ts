import { setImmediate as nextTurn } from 'node:timers/promises';
import { limits } from './limits.js';

/** A requested batch size (or `fallback` when none was asked for) kept within 1 and `max`. */
export function batchSizeWithin(requested: number | undefined, bounds: { fallback: number; max: number }): number {
  return Math.min(Math.max(1, requested ?? bounds.fallback), bounds.max);
}

/**
 * Makes room for one more entry in a bounded in-memory collection: at `max` entries it forgets
 * the first inserted (Maps and Sets iterate in insertion order). The one eviction rule of the
 * process-local caches (bearer token hashes, rate-limit windows, known credentials, remembered principals).
 */
export function makeRoomForOne(collection: Map<unknown, unknown> | Set<unknown>, max: number): void {
  if (collection.size >= max) collection.delete(collection.keys().next().value);
}

/**
 * Lets the event loop run between the pieces of a job's long synchronous work. The returned
 * function says, right before the next piece, whether the current turn has run `maxMs`: then it
 * returns the promise of the next turn (I/O, timers and other requests' continuations run
 * first), else undefined, and the caller goes on without awaiting anything (awaiting even a
 * settled promise lets other queued continuations run first, which may hold the loop longer).
 * Awaiting settled promises never yields to the loop: without this, a batch of calls that finish
 * without waiting holds the event loop to its end.
 */
export function turnKeeper(maxMs: number = limits.jobTurnMsMax): () => Promise<void> | undefined {
  let turnStartedMs = performance.now();
  return () => {
    if (performance.now() - turnStartedMs < maxMs) return undefined;
    return nextTurn().then(() => {
      turnStartedMs = performance.now();
    });
  };
}
