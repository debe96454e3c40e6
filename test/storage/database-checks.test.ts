// The database warnings said at start (src/storage/database-checks.ts).
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createDb } from '../../src/storage/db.js';
import { databaseProblemsOf } from '../../src/storage/database-checks.js';
import { withDatabase } from '../support/global-setup.js';
import { createTestDatabase } from '../support/context.js';

describe('the database checks at start', () => {
  it('say nothing of a UTF8 database the workers fit', async () => {
    const { db } = await createTestDatabase(1);
    try {
      expect(await databaseProblemsOf(db, 1)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('warn of a database not in UTF8, whose non-ASCII names are kept as bytes', async () => {
    // Named with the suite's prefix, so the suite's teardown drops it with the others.
    const name = inject('testDatabasePrefix') + randomBytes(5).toString('hex');
    const admin = createDb(inject('adminDatabaseUrl'), 1);
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'`);
    await admin.close();
    const db = createDb(withDatabase(inject('adminDatabaseUrl'), name), 1);
    try {
      const problems = await databaseProblemsOf(db, 1);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^The database's encoding is SQL_ASCII, not UTF8: .*Dump it and restore it into a UTF8 database/);
    } finally {
      await db.close();
    }
  });
});
