import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrationsDir } from '../../src/storage/migrate.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { call, makeChannel } from '../routes/channels/support.js';

let t: TestContext;
let site: SiteFixture;
beforeAll(async () => {
  t = await createTestContext();
  site = await createSite(t.db);
});
afterAll(async () => t.close());

it('migration 042 brings text stored decomposed (before NFC was kept) to NFC, so the NFC filters find it', async () => {
  const channel = await makeChannel(t, site, { name: 'Main', currencies: 'EUR' });
  const booking = (await call(t, site, 'POST', 'bookings', { firstname: 'Zoe', surname: 'Muller', email: 'z@example.com', date: '2027-01-10', total: 100, currencies: 'EUR', countries: 'FR', channels: channel.id, reference: 'R' })).json();
  // As a row written before the text was kept in NFC: u + U+0308, e + U+0301.
  await t.db.query("UPDATE bookings SET firstname = E'Zoe\\u0308', surname = E'Mu\\u0308ller', reference = E'Cafe\\u0301' WHERE id = $1", [booking.id]);
  await t.db.query("UPDATE channels SET name = E'Cafe\\u0301', external_id = E'Cafe\\u0301-1' WHERE id = $1", [channel.id]);
  await t.db.query("INSERT INTO suppliers (id, name, url, country, category) VALUES ('FR-5-ACC', E'Cafe\\u0301', '', 'FR', 'ACC')");
  const before = await t.db.one<{ modified_at: Date }>('SELECT modified_at FROM bookings WHERE id = $1', [booking.id]);

  await t.db.query(readFileSync(path.join(migrationsDir, '042_text_nfc.sql'), 'utf8'));

  const bookings = (await call(t, site, 'GET', 'bookings?surname=Müller&reference=Café')).json();
  expect(bookings.map((item: { id: number }) => item.id)).toEqual([booking.id]);
  expect(bookings[0]).toMatchObject({ firstname: 'Zoë', surname: 'Müller', reference: 'Café' });
  expect((await call(t, site, 'GET', 'channels?external_id=Café-1&name=café')).json().map((item: { id: number }) => item.id)).toEqual([channel.id]);
  expect((await call(t, site, 'GET', 'suppliers?name=café')).json().map((item: { id: string }) => item.id)).toEqual(['FR-5-ACC']);
  // Not an edit of the booking: its modified time stays.
  expect((await t.db.one<{ modified_at: Date }>('SELECT modified_at FROM bookings WHERE id = $1', [booking.id])).modified_at).toEqual(before.modified_at);
});
