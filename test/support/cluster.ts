import pg from 'pg';

/** Whether the PostgreSQL at `url` answers a query (false when it cannot be reached). */
export async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return (await client.query('SELECT 1 AS one')).rows[0].one === 1;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
