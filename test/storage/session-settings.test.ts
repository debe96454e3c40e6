import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/context.js';
import { createDb, type Db } from '../../src/storage/db.js';

// DATE columns are read as ISO text and days are GMT days: a server, database or role with other
// settings (DateStyle 'SQL, DMY', a local TimeZone) made the bookings list and payments answer 500.
let database: { db: Db; url: string; name: string };
beforeAll(async () => {
  database = await createTestDatabase(1);
  await database.db.query(`ALTER DATABASE ${database.name} SET datestyle = 'SQL, DMY'`);
  await database.db.query(`ALTER DATABASE ${database.name} SET timezone = 'Pacific/Kiritimati'`);
});
afterAll(async () => database?.db.close());

describe('the database session', () => {
  it('reads dates as ISO and days in GMT whatever the database sets', async () => {
    const db = createDb(database.url, 1);
    try {
      expect(await db.one('SHOW datestyle')).toEqual({ DateStyle: 'ISO, YMD' });
      expect(await db.one('SHOW timezone')).toEqual({ TimeZone: 'UTC' });
      expect(await db.one(`SELECT '2031-05-20'::date AS day`)).toEqual({ day: '2031-05-20' });
    } finally {
      await db.close();
    }
  });
});
