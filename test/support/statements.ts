import pg from 'pg';

/**
 * Every statement any pool of this process sends while `work` runs, counted on the pg client
 * (`[name] text` for named statements): the round trips of a code path, for tests that hold it to
 * a budget. The pg client is patched only for the duration of `work`.
 */
export async function statementsDuring<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const originalQuery = pg.Client.prototype.query;
  (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text: string; name?: string };
    statements.push(typeof first === 'string' ? first : `${first.name ? `[${first.name}] ` : ''}${first.text}`);
    return (originalQuery as (...rest: unknown[]) => unknown).apply(this, args);
  } as never;
  try {
    return { result: await work(), statements };
  } finally {
    (pg.Client.prototype as { query: unknown }).query = originalQuery;
  }
}
