// Lists sorted by a text field (orderby=name, surname, ...) come in code point order whatever
// collation the database was created with: an external PostgreSQL made with an English locale
// (as most managed ones are) sorted `alpha, beta, Zeta` where the embedded one under LANG=C sorted
// `Zeta, alpha, beta`, so pages of one installation did not match another's. The database here is
// made with an ICU English collation and migrated, as an operator's would be.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { createAppContext, type AppContext } from '../../src/context.js';
import { loadConfig } from '../../src/config.js';
import { createDb, type Db } from '../../src/storage/db.js';
import { migrate } from '../../src/storage/migrate.js';
import { withDatabase } from '../support/global-setup.js';
import { testEnv } from '../support/context.js';
import { createSite, type SiteFixture } from '../support/fixtures.js';
import { createUser } from '../../src/domain/users/accounts.js';

interface LocaleDatabase {
  db: Db;
  app: App;
  site: SiteFixture;
  close(): Promise<void>;
}

/** A database made with the ICU collation of `locale` (as an operator's PostgreSQL may be), migrated, and an app on it. */
async function localeDatabase(locale: string): Promise<LocaleDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `${inject('testDatabasePrefix')}collation_${randomBytes(4).toString('hex')}`;
  const admin = createDb(adminUrl, 1);
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE '${locale}'`);
  } finally {
    await admin.close();
  }
  const db = createDb(withDatabase(adminUrl, name), 3);
  await migrate(db);
  const context: AppContext = createAppContext(loadConfig({ ...testEnv, DATABASE_URL: withDatabase(adminUrl, name) }), db);
  const app = await buildApp({ context, logger: false });
  await app.ready();
  const site = await createSite(db);
  return { db, app, site, async close() { await app.close(); await context.close(); await db.close(); } };
}

let english: LocaleDatabase;
let turkish: LocaleDatabase;
beforeAll(async () => {
  [english, turkish] = await Promise.all([localeDatabase('en-US'), localeDatabase('tr-TR')]);
}, 60_000);
afterAll(async () => {
  await english?.close();
  await turkish?.close();
});

const get = async ({ app, site }: LocaleDatabase, path: string) => {
  const response = await app.inject({ url: `/${site.path}/site-json/vendor/v2/${path}`, headers: site.headers });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as Record<string, unknown>[];
};
const post = async ({ app, site }: LocaleDatabase, path: string, payload: Record<string, unknown>) => {
  const response = await app.inject({ method: 'POST', url: `/${site.path}/site-json/vendor/v2/${path}`, headers: site.headers, payload });
  expect(response.statusCode, response.body).toBe(201);
  return response.json() as { id: number };
};

it('sorts channels by name, bookings by surname and suppliers by name in code point order on a database with an English collation', async () => {
  const names = ['beta', 'Zeta', 'alpha', 'Ärger'];
  const channels = [];
  for (const name of names) channels.push(await post(english, 'channels', { name, currencies: 'USD' }));
  const codePointOrder = ['Zeta', 'alpha', 'beta', 'Ärger'];
  expect((await get(english, 'channels?orderby=name')).map((channel) => channel.name)).toEqual(codePointOrder);
  expect((await get(english, 'channels?orderby=name&order=desc')).map((channel) => channel.name)).toEqual([...codePointOrder].reverse());
  for (const surname of names) {
    await post(english, 'bookings', { firstname: 'A', surname, email: 'a@example.com', date: '2027-06-01', total: 100, currencies: 'USD', countries: 'GB', channels: channels[0]!.id });
  }
  expect((await get(english, 'bookings?orderby=surname')).map((booking) => booking.surname)).toEqual(codePointOrder);
  for (const [index, supplier] of names.entries()) {
    await english.db.query('INSERT INTO suppliers (id, name, url, country, category) VALUES ($1, $2, $3, $4, $5)', [`GB-${index + 1}-ACC`, supplier, '', 'GB', 'ACC']);
  }
  expect((await get(english, 'suppliers?orderby=name')).map((supplier) => supplier.name)).toEqual(codePointOrder);
});

it('matches usernames and emails regardless of ASCII case on a database with a Turkish collation, where lower() makes I a dotless ı', async () => {
  const { db, app, site } = turkish;
  await db.query('UPDATE users SET username = $2 WHERE id = $1', [site.userId, `admin-${site.userId}`]);
  const login = await app.inject({ method: 'POST', url: `/${site.path}/site-json/jwt-auth/v1/token`, payload: { username: `ADMIN-${site.userId}`, password: site.password } });
  expect(login.statusCode, login.body).toBe(200);
  await expect(createUser(db, { username: `Admin-${site.userId}`, password: 'long enough', email: 'x@example.com' })).rejects.toThrow(/is taken/);
  const channel = await post(turkish, 'channels', { name: 'TRY', currencies: 'USD' });
  const booking = await post(turkish, 'bookings', { firstname: 'A', surname: 'B', email: 'INFO@EXAMPLE.COM', date: '2027-06-01', total: 100, currencies: 'USD', countries: 'TR', channels: channel.id });
  expect((await get(turkish, 'bookings?email=info@example.com')).map((found) => found.id)).toEqual([booking.id]);
});
