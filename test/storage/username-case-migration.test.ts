import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrationsDir } from '../../src/storage/migrate.js';
import { createTestContext, type TestContext } from '../support/context.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

it('migration 046 names usernames differing only in case instead of failing on a bare unique violation, and indexes them once renamed', async () => {
  const migration = readFileSync(path.join(migrationsDir, '046_username_case_insensitive.sql'), 'utf8');
  // As before the index: two names differing only in case, made by two creations at once.
  await t.db.query('DROP INDEX users_username_lower_key');
  const [ada, shouted] = await t.db.query<{ id: number }>(
    "INSERT INTO users (username, email, display_name, password_hash) VALUES ('ada', 'a@example.com', 'Ada', 'x'), ('ADA', 'b@example.com', 'Ada', 'x') RETURNING id",
  );
  await expect(t.db.query(migration)).rejects.toThrow(`usernames differing only in case: ada (id ${ada!.id}), ADA (id ${shouted!.id}); rename all but one of each before upgrading`);

  await t.db.query("UPDATE users SET username = 'ada2' WHERE id = $1", [shouted!.id]);
  await t.db.query(migration);
  await expect(t.db.query("INSERT INTO users (username, email, display_name, password_hash) VALUES ('Ada', 'c@example.com', 'Ada', 'x')")).rejects.toThrow(/users_username_lower_key/);
});
