import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../../src/storage/db.js';

/** A channel of the site, inserted directly (the channel routes are not under test here). */
export async function createChannel(db: Queryable, siteId: number, options: { currency?: string; accountType?: 'trust' | 'protected-processing'; accountMode?: string } = {}): Promise<number> {
  const slug = `ch-${randomBytes(4).toString('hex')}`;
  const row = await db.one<{ id: number }>(
    'INSERT INTO channels (site_id, name, slug, currency, account_type, account_mode) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
    [siteId, `Channel ${slug}`, slug, options.currency ?? 'USD', options.accountType ?? 'trust', options.accountMode ?? 'test'],
  );
  return row.id;
}

export const futureYear = new Date().getUTCFullYear() + 3;

/**
 * Every text-like and bytea value of every table in the public schema, for scanning the database
 * for card data that must not be there.
 */
export async function everyStoredValue(db: Queryable): Promise<{ where: string; text: string; bytes: Buffer | null }[]> {
  const columns = await db.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
        AND c.data_type IN ('text', 'character varying', 'character', 'bytea', 'jsonb', 'json', 'ARRAY')`,
  );
  const values: { where: string; text: string; bytes: Buffer | null }[] = [];
  for (const column of columns) {
    const rows = await db.query<{ value: unknown }>(`SELECT "${column.column_name}" AS value FROM "${column.table_name}" WHERE "${column.column_name}" IS NOT NULL`);
    for (const row of rows) {
      const where = `${column.table_name}.${column.column_name}`;
      if (Buffer.isBuffer(row.value)) values.push({ where, text: row.value.toString('latin1'), bytes: row.value });
      else values.push({ where, text: typeof row.value === 'string' ? row.value : JSON.stringify(row.value), bytes: null });
    }
  }
  return values;
}
