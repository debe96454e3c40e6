import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/context.js';
import type { Db } from '../../src/storage/db.js';

// Db.transaction sends BEGIN with the first statement when that statement is prepared on the
// connection already (`BEGIN …; EXECUTE name(literals)`, one round trip). One connection, so the
// statement prepared by the first transaction is the one the next transactions find.

let db: Db;
const sent: string[] = [];
const originalQuery = pg.Client.prototype.query;

beforeAll(async () => {
  ({ db } = await createTestDatabase(1));
  await db.query(`CREATE TABLE samples (id bigserial PRIMARY KEY, label text, note text, ids bigint[], words text[], bytes bytea, at timestamptz, flag boolean, doc jsonb)`);
  (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text: string; name?: string };
    sent.push(typeof first === 'string' ? first : `[${first.name ?? ''}]`);
    return (originalQuery as (...rest: unknown[]) => unknown).apply(this, args);
  } as never;
});

afterAll(async () => {
  (pg.Client.prototype as { query: unknown }).query = originalQuery;
  await db?.close();
});

beforeEach(() => {
  sent.length = 0;
});

const insertStatement = {
  name: 'test_samples_insert',
  text: `INSERT INTO samples (label, note, ids, words, bytes, at, flag, doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING id, label, note, ids, words, bytes, at, flag, doc`,
};
const countStatement = { name: 'test_samples_count', text: 'SELECT count(*)::int AS count FROM samples WHERE label = $1' };

// Values whose text needs quoting: quotes, backslashes, braces and commas in array elements,
// bytes with a NUL, a NULL, JSON.
const awkward = {
  label: "O'Brien \\ \"quoted\" $1 ); DROP TABLE samples; --",
  note: null,
  ids: [1, 9_007_199_254_740_991],
  words: ['a,b', '{c}', 'd"e', 'f\\g', ''],
  bytes: Buffer.from([0, 1, 92, 39, 255]),
  at: new Date('2026-11-22T01:02:03.456Z'),
  flag: false,
  doc: { name: "l'été", list: [1, 'two'] },
};
const values = () => [awkward.label, awkward.note, awkward.ids, awkward.words, awkward.bytes, awkward.at, awkward.flag, awkward.doc];

describe('Db.transaction', () => {
  it('sends BEGIN with the first statement once the connection has prepared it, with every value intact', async () => {
    const first = await db.transaction((tx) => tx.one(insertStatement, values()));
    expect(sent).toEqual(['BEGIN ISOLATION LEVEL READ COMMITTED', '[test_samples_insert]', 'COMMIT']);
    sent.length = 0;
    const second = await db.transaction((tx) => tx.one(insertStatement, values()));
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^BEGIN ISOLATION LEVEL READ COMMITTED; EXECUTE "test_samples_insert"\(/);
    expect(sent[1]).toBe('COMMIT');
    const expected = { label: awkward.label, note: null, ids: ['1', '9007199254740991'], words: awkward.words, bytes: awkward.bytes, at: awkward.at, flag: false, doc: awkward.doc };
    expect({ ...first, id: 0 }).toEqual({ ...expected, id: 0 });
    expect({ ...second, id: 0 }).toEqual({ ...expected, id: 0 });
    expect(second.id).toBe((first.id as number) + 1);
    expect(await db.one('SELECT count(*)::int AS count FROM samples')).toEqual({ count: 2 });
  });

  it('keeps the merged first statement inside the transaction: a failure later rolls it back', async () => {
    await db.transaction((tx) => tx.one(countStatement, ['prepare']));
    const label = 'rolled back';
    await expect(db.transaction(async (tx) => {
      await tx.one(insertStatement, [label, null, [], [], null, null, null, null]);
      expect(sent.at(-1)).toMatch(/; EXECUTE "test_samples_insert"/);
      expect(await tx.one(countStatement, [label])).toEqual({ count: 1 });
      throw new Error('refused after the insert');
    })).rejects.toThrow('refused after the insert');
    expect(sent.at(-1)).toBe('ROLLBACK');
    expect(await db.one(countStatement, [label])).toEqual({ count: 0 });
  });

  it('rolls back and stays usable when the merged statement itself fails', async () => {
    await expect(db.transaction((tx) => tx.one(insertStatement, ['bad', null, ['not a number'], [], null, null, null, null]))).rejects.toThrow(/bigint/);
    expect(sent.at(-1)).toBe('ROLLBACK');
    expect(await db.transaction((tx) => tx.one(countStatement, ['bad']))).toEqual({ count: 0 });
  });

  it('sends nothing for a transaction that runs no statement', async () => {
    expect(await db.transaction(async () => 'nothing')).toBe('nothing');
    expect(sent).toEqual([]);
  });
});

describe('queryAndCommit', () => {
  it('runs the last statement and COMMIT in one round trip, and refuses anything after it', async () => {
    await db.transaction((tx) => tx.one(countStatement, ['prepare']));
    sent.length = 0;
    const label = 'committed with the last statement';
    const rows = await db.transaction(async (tx) => {
      await tx.one(countStatement, [label]);
      const inserted = await tx.queryAndCommit(insertStatement, [label, null, [], [], null, null, true, null]);
      await expect(tx.query(countStatement, [label])).rejects.toThrow(/committed/);
      return inserted;
    });
    expect(rows).toMatchObject([{ label, flag: true }]);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatch(/^EXECUTE "test_samples_insert"\(.*\); COMMIT$/s);
    expect(await db.one(countStatement, [label])).toEqual({ count: 1 });
  });

  it('commits nothing when its statement fails', async () => {
    const label = 'never committed';
    await expect(db.transaction(async (tx) => {
      await tx.one(insertStatement, [label, null, [], [], null, null, null, null]);
      await tx.queryAndCommit(insertStatement, [label, null, ['x'], [], null, null, null, null]);
    })).rejects.toThrow(/bigint/);
    expect(sent.at(-1)).toBe('ROLLBACK');
    expect(await db.one(countStatement, [label])).toEqual({ count: 0 });
  });
});
