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
