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
 * a budget.
 */
export async function statementsDuring<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const result = await duringQueries((client, args, original) => {
    const first = args[0] as string | { text: string; name?: string };
    statements.push(typeof first === 'string' ? first : `${first.name ? `[${first.name}] ` : ''}${first.text}`);
    return original.apply(client, args);
  }, work);
  return { result, statements };
}
