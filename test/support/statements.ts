import pg from 'pg';

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/**
 * Runs `work` with every pg client's `query` going through `hook` (given the client, the call's
 * arguments and the unpatched `query`), then restores it: the one way tests watch what any pool of
 * this process sends.
 */
export async function duringQueries<T>(hook: (client: pg.Client, args: unknown[], original: Query) => unknown, work: () => Promise<T>): Promise<T> {
  const original = pg.Client.prototype.query as Query;
  (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    return hook(this, args, original);
  };
  try {
    return await work();
  } finally {
    (pg.Client.prototype as { query: unknown }).query = original;
  }
}

/**
 * Every statement any pool of this process sends while `work` runs, counted on the pg client
 * (`[name] text` for named statements): the round trips of a code path, for tests that hold it to
 * a budget. `roundTrips` counts the waits: a statement written on a pipelined connection
 * (`pipeline: true`) while an earlier one there is still unanswered travels with it.
 */
export async function statementsDuring<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[]; roundTrips: number }> {
  const statements: string[] = [];
  const unanswered = new WeakMap<pg.Client, number>();
  let roundTrips = 0;
  const result = await duringQueries((client, args, original) => {
    const first = args[0] as string | { text: string; name?: string };
    statements.push(typeof first === 'string' ? first : `${first.name ? `[${first.name}] ` : ''}${first.text}`);
    const waiting = unanswered.get(client) ?? 0;
    if (waiting === 0 || !(client as pg.Client & { pipeline?: boolean }).pipeline) roundTrips += 1;
    unanswered.set(client, waiting + 1);
    const answered = () => unanswered.set(client, unanswered.get(client)! - 1);
    // pg-pool's own query passes a callback (and gets no promise back); ours await a promise.
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      return original.apply(client, [...args.slice(0, -1), (...results: unknown[]) => {
        answered();
        return (callback as (...values: unknown[]) => unknown)(...results);
      }]);
    }
    const sent = original.apply(client, args) as Promise<unknown>;
    sent.then(answered, answered);
    return sent;
  }, work);
  return { result, statements, roundTrips };
}
