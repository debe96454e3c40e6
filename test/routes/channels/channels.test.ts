import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../support/context.js';
import { addUser, createSite, type SiteFixture } from '../../support/fixtures.js';
import { api, call, makeChannel, snapshot } from './support.js';

let t: TestContext;
let admin: SiteFixture;
let member: Pick<SiteFixture, 'path' | 'headers'>;
let readOnly: Pick<SiteFixture, 'path' | 'headers'>;
let other: SiteFixture;

beforeAll(async () => {
  t = await createTestContext();
  admin = await createSite(t.db, { role: 'member_admin' });
  member = { path: admin.path, headers: (await addUser(t.db, admin.siteId, { role: 'member' })).headers };
  readOnly = { path: admin.path, headers: (await addUser(t.db, admin.siteId, { role: 'member_admin', readOnly: true })).headers };
  other = await createSite(t.db, { role: 'member_admin' });
});
afterAll(async () => t.close());

describe('channels: happy paths', () => {
  it('creates a channel with every field of the Channel table and the documented defaults', async () => {
    const response = await call(t, admin, 'POST', 'channels', { name: 'Summer Tours & Co.', currencies: 'GBP' });
    expect(response.statusCode).toBe(201);
    const channel = response.json();
    const siteName = (await t.db.one<{ name: string }>('SELECT name FROM sites WHERE id = $1', [admin.siteId])).name;
    expect(channel).toEqual({
      id: expect.any(Number),
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Summer Tours & Co.',
      slug: 'summer-tours-co',
      account_type: 'trust',
      account_mode: 'test',
      protection_type: 'trust-vendor-travel',
      currencies: 'GBP',
      quote_code: '',
      statement_period: 'month',
      cardholder_present: false,
      // A test channel's feed carries the sandbox rates of every offered currency (docs/forex.md).
      forex_feed: { base: 'GBP', symbol: { grapheme: '£', template: '£1', rtl: false }, rates: expect.objectContaining({ USD: expect.objectContaining({ provider: 'sandbox', rate: 1.265822784810, symbol: '$' }) }) },
      language: 'enGB',
      primary_mail: '',
      mail_bcc_transactional_mails: false,
      mail_failures: false,
      receipt_label: siteName,
      server_to_server: false,
      vaultprovider_id: '',
      vaultprovider_api_key: '',
      beneficiary_id: '',
      settlement_currency: 'GBP',
      external_id: '',
      chargeback_mail: '',
      payout_minimum: 0,
      descriptor: null,
      channel_secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      channel_status: 'test',
      suppliers: [],
    });
  });

  it('accepts every optional field on create, normalising email lists and masking the provider key', async () => {
    const response = await call(t, admin, 'POST', 'channels', {
      name: 'Alpine',
      currencies: 'EUR',
      account_mode: 'draft',
      language: 'deDE',
      primary_mail: 'ops@example.com , finance@example.org',
      mail_bcc_transactional_mails: true,
      mail_failures: true,
      receipt_label: 'Alpine GmbH',
      external_id: 'ext-1',
      chargeback_mail: 'cb@example.com',
      vaultprovider_id: 'vp-7',
      vaultprovider_api_key: 'sk_live_abcdefghijkl1234',
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      account_mode: 'draft',
      language: 'deDE',
      primary_mail: 'ops@example.com,finance@example.org',
      mail_bcc_transactional_mails: true,
      mail_failures: true,
      receipt_label: 'Alpine GmbH',
      external_id: 'ext-1',
      chargeback_mail: 'cb@example.com',
      vaultprovider_id: 'vp-7',
      vaultprovider_api_key: '****1234',
    });
    expect(response.body).not.toContain('sk_live_abcdefghijkl1234');
    const stored = await t.db.one<{ vaultprovider_api_key: string }>('SELECT vaultprovider_api_key FROM channels WHERE id = $1', [response.json().id]);
    expect(stored.vaultprovider_api_key).toBe('sk_live_abcdefghijkl1234');
  });

  it('gives channels with the same name distinct slugs and secrets', async () => {
    const first = await makeChannel(t, admin, { name: 'Twin' });
    const second = await makeChannel(t, admin, { name: 'Twin' });
    expect([first.slug, second.slug]).toEqual(['twin', 'twin-2']);
    expect(first.channel_secret).not.toBe(second.channel_secret);
  });

  it('reads one channel as a member and lists with filters, order and pagination headers', async () => {
    const site = await createSite(t.db);
    const usd = await makeChannel(t, site, { name: 'Beach USD', currencies: 'USD', external_id: 'X-1' });
    const eur = await makeChannel(t, site, { name: 'City EUR', currencies: 'EUR', account_mode: 'draft' });
    const gbp = await makeChannel(t, site, { name: 'Beach GBP', currencies: 'GBP' });

    const one = await call(t, site, 'GET', `channels/${usd.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(usd);

    const list = async (query: string) => {
      const response = await call(t, site, 'GET', `channels?${query}`);
      expect(response.statusCode).toBe(200);
      return { ids: (response.json() as { id: number }[]).map((channel) => channel.id), headers: response.headers };
    };
    expect((await list('')).ids).toEqual([usd.id, eur.id, gbp.id]);
    expect((await list('order=desc')).ids).toEqual([gbp.id, eur.id, usd.id]);
    expect((await list('orderby=name')).ids).toEqual([gbp.id, usd.id, eur.id]);
    expect((await list(`include=${gbp.id},${usd.id}`)).ids).toEqual([usd.id, gbp.id]);
    expect((await list(`include=${gbp.id}&include=${usd.id}`)).ids).toEqual([usd.id, gbp.id]);
    expect((await list('account_mode=draft')).ids).toEqual([eur.id]);
    expect((await list('account_type=protected-processing')).ids).toEqual([]);
    expect((await list('currencies=US')).ids).toEqual([usd.id]);
    expect((await list('external_id=X-1')).ids).toEqual([usd.id]);
    expect((await list('external_id=X')).ids).toEqual([]);
    // Kept and searched in NFC: a decomposed é (e + U+0301) is the composed one.
    const cafe = await makeChannel(t, site, { name: 'Cafe\u0301 CHF', currencies: 'CHF', external_id: 'Cafe\u0301-1' });
    expect(cafe).toMatchObject({ name: 'Café CHF', external_id: 'Café-1' });
    expect((await list('external_id=Café-1')).ids).toEqual([cafe.id]);
    expect((await list(`name=${encodeURIComponent('cafe\u0301')}`)).ids).toEqual([cafe.id]);
    await call(t, site, 'DELETE', `channels/${cafe.id}`);
    expect((await list('name=beach')).ids).toEqual([usd.id, gbp.id]);
    expect((await list('name=*GBP')).ids).toEqual([gbp.id]);
    expect((await list('name=%25')).ids).toEqual([]);
    expect((await list('statement_period=week')).ids).toEqual([]);

    const paged = await list('per_page=2&page=1&order=asc');
    expect(paged.ids).toEqual([usd.id, eur.id]);
    expect(paged.headers['x-site-total']).toBe('3');
    expect(paged.headers['x-site-totalpages']).toBe('2');
    expect(paged.headers.link).toBe(`<http://trustfare.test/${site.path}/site-json/vendor/v2/channels?per_page=2&page=2&order=asc>; rel="next"`);
    const last = await list('per_page=2&page=2');
    expect(last.ids).toEqual([gbp.id]);
    expect(last.headers.link).toBe(`<http://trustfare.test/${site.path}/site-json/vendor/v2/channels?per_page=2&page=1>; rel="prev"`);
    const beyond = await list('per_page=2&page=5');
    expect(beyond.ids).toEqual([]);
    expect(beyond.headers['x-site-total']).toBe('3');
  });

  it('updates writable fields, ignores read-only ones and re-slugs on rename', async () => {
    const channel = await makeChannel(t, admin, { name: 'Before' });
    const response = await call(t, admin, 'PUT', `channels/${channel.id}`, {
      name: 'After',
      currencies: 'USD',
      mail_failures: true,
      receipt_label: 'Label Ltd',
      account_mode: 'draft',
      // RO fields: ignored, never applied.
      channel_status: 'full-processing',
      account_type: 'protected-processing',
      channel_secret: 'attacker',
      payout_minimum: 5,
      id: 999_999,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ id: channel.id, name: 'After', slug: 'after', currencies: 'USD', mail_failures: true, receipt_label: 'Label Ltd', account_mode: 'draft', channel_status: 'test', account_type: 'trust', channel_secret: channel.channel_secret, payout_minimum: 0 });
    const reset = await call(t, admin, 'PUT', `channels/${channel.id}`, { receipt_label: null });
    expect(reset.json().receipt_label).toBe(channel.receipt_label);
    const unchanged = await call(t, admin, 'PUT', `channels/${channel.id}`, {});
    expect(unchanged.statusCode).toBe(200);
    expect(unchanged.json().name).toBe('After');
  });

  it('keeps its slug when a rename gives the same one (a change of case or punctuation)', async () => {
    const channel = await makeChannel(t, admin, { name: 'Summer Tours' });
    expect(channel.slug).toBe('summer-tours');
    const renamed = await call(t, admin, 'PUT', `channels/${channel.id}`, { name: 'Summer tours!' });
    expect(renamed.json()).toMatchObject({ name: 'Summer tours!', slug: 'summer-tours' });
  });

  it('deletes a channel without bookings; it is gone from reads and lists', async () => {
    const channel = await makeChannel(t, admin, { name: 'Doomed' });
    const response = await call(t, admin, 'DELETE', `channels/${channel.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ deleted: true });
    expect((await call(t, admin, 'GET', `channels/${channel.id}`)).statusCode).toBe(404);
    expect((await call(t, admin, 'DELETE', `channels/${channel.id}`)).statusCode).toBe(404);
    const listed = (await call(t, admin, 'GET', 'channels?per_page=100')).json() as { id: number }[];
    expect(listed.map((item) => item.id)).not.toContain(channel.id);
  });

  it('lists suppliers linked to a channel', async () => {
    const channel = await makeChannel(t, admin, { name: 'Linked' });
    await t.db.query(`INSERT INTO suppliers (id, name, country, category) VALUES ('GB-1-ACC', 'Inn', 'GB', 'ACC'), ('FR-2-AIR', 'Air', 'FR', 'AIR')`);
    await t.db.query(`INSERT INTO channel_suppliers (channel_id, supplier_id) VALUES ($1, 'GB-1-ACC'), ($1, 'FR-2-AIR')`, [channel.id]);
    expect((await call(t, admin, 'GET', `channels/${channel.id}`)).json().suppliers).toEqual(['FR-2-AIR', 'GB-1-ACC']);
  });
});

describe('channels: errors', () => {
  it('refuses missing and invalid fields with the error shape, changing nothing', async () => {
    const before = await snapshot(t);
    const missing = await call(t, admin, 'POST', 'channels', { name: 'No currency' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ code: 'rest_missing_callback_param', message: expect.any(String), data: { status: 400, params: ['currencies'] } });

    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'x', currencies: 'XXX' }, 'currencies'],
      [{ name: 'x', currencies: 'gbp' }, 'currencies'],
      [{ name: '   ', currencies: 'GBP' }, 'name'],
      [{ name: 'x'.repeat(201), currencies: 'GBP' }, 'name'],
      [{ name: 'x', currencies: 'GBP', account_mode: 'live' }, 'account_mode'],
      [{ name: 'x', currencies: 'GBP', account_mode: 'closed' }, 'account_mode'],
      [{ name: 'x', currencies: 'GBP', language: 'en' }, 'language'],
      [{ name: 'x', currencies: 'GBP', primary_mail: 'not-an-email' }, 'primary_mail'],
      [{ name: 'x', currencies: 'GBP', primary_mail: 'a@example.com,,b@example.com' }, 'primary_mail'],
      [{ name: 'x', currencies: 'GBP', chargeback_mail: 'a@b' }, 'chargeback_mail'],
      [{ name: 'x', currencies: 'GBP', mail_failures: 'true' }, 'mail_failures'],
      [{ name: 7, currencies: 'GBP' }, 'name'],
      [{ name: 'x', currencies: 'GBP', surprise: 1 }, 'surprise'],
    ];
    for (const [body, param] of cases) {
      const response = await call(t, admin, 'POST', 'channels', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().code).toBe('rest_invalid_param');
      expect(response.json().data.status).toBe(400);
      expect(Object.keys(response.json().data.params), JSON.stringify(body)).toContain(param);
    }
    const junk = await t.app.inject({ method: 'POST', url: api(admin, 'channels'), headers: { ...admin.headers, 'content-type': 'application/json' }, payload: '{"name":' });
    expect(junk.statusCode).toBe(400);
    expect(await snapshot(t)).toBe(before);
  });

  it('refuses bad list parameters', async () => {
    for (const query of ['per_page=101', 'per_page=0', 'page=0', 'page=x', 'order=up', 'orderby=secret', 'include=1;DROP', 'account_mode=live,nope', 'per_page=1.5']) {
      const response = await call(t, admin, 'GET', `channels?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().code, query).toBe('rest_invalid_param');
    }
  });

  it('answers 404 rest_post_invalid_id for unknown and malformed ids', async () => {
    for (const id of ['999999', 'abc', '0', '-1', '1.5', '99999999999999999999']) {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const response = await call(t, admin, method, `channels/${id}`, method === 'PUT' ? {} : undefined);
        expect(response.statusCode, `${method} ${id}`).toBe(404);
        expect(response.json()).toEqual({ code: 'rest_post_invalid_id', message: expect.any(String), data: { status: 404 } });
      }
    }
  });

  it('refuses a live channel being moved back to test by its own admin', async () => {
    const channel = await makeChannel(t, admin, { name: 'Live one' });
    await t.db.query(`UPDATE channels SET account_mode = 'live' WHERE id = $1`, [channel.id]);
    const response = await call(t, admin, 'PUT', `channels/${channel.id}`, { account_mode: 'test' });
    expect(response.statusCode).toBe(400);
    expect(response.json().data.params).toHaveProperty('account_mode');
    expect((await call(t, admin, 'GET', `channels/${channel.id}`)).json().account_mode).toBe('live');
  });

  it('refuses deleting or re-currencying a channel that has bookings', async () => {
    const channel = await makeChannel(t, admin, { name: 'Busy' });
    await t.db.query(
      `INSERT INTO bookings (site_id, channel_id, author_id, firstname, surname, email, date_end, total, currency, country) VALUES ($1, $2, $3, 'A', 'B', 'a@b.co', '2030-01-01', 100, 'GBP', 'GB')`,
      [admin.siteId, channel.id, admin.userId],
    );
    const deleted = await call(t, admin, 'DELETE', `channels/${channel.id}`);
    expect(deleted.statusCode).toBe(409);
    expect(deleted.json()).toEqual({ code: 'rest_channel_in_use', message: expect.any(String), data: { status: 409 } });
    const recurrency = await call(t, admin, 'PUT', `channels/${channel.id}`, { currencies: 'USD' });
    expect(recurrency.statusCode).toBe(400);
    expect(recurrency.json().data.params).toHaveProperty('currencies');
    expect((await call(t, admin, 'GET', `channels/${channel.id}`)).json().currencies).toBe('GBP');
  });
});

describe('channels: security', () => {
  it('needs a token: 401 without one or with a bad one', async () => {
    for (const headers of [{}, { authorization: 'Bearer tfat_nope' }, { authorization: 'Basic abc' }]) {
      const response = await t.app.inject({ method: 'GET', url: api(admin, 'channels'), headers });
      expect(response.statusCode).toBe(401);
      expect(response.json().data.status).toBe(401);
    }
    const write = await t.app.inject({ method: 'POST', url: api(admin, 'channels'), payload: { name: 'x', currencies: 'GBP' } });
    expect(write.statusCode).toBe(401);
  });

  it('lets members read but not write, and read-only users only read (without the channel secret)', async () => {
    const channel = await makeChannel(t, admin, { name: 'Guarded' });
    const before = await snapshot(t);
    expect((await call(t, member, 'GET', `channels/${channel.id}`)).json().channel_secret).toBe(channel.channel_secret);
    for (const who of [member, readOnly]) {
      expect((await call(t, who, 'POST', 'channels', { name: 'x', currencies: 'GBP' })).statusCode).toBe(403);
      expect((await call(t, who, 'PUT', `channels/${channel.id}`, { name: 'hijack' })).statusCode).toBe(403);
      const deleted = await call(t, who, 'DELETE', `channels/${channel.id}`);
      expect(deleted.statusCode).toBe(403);
      expect(deleted.json().code).toBe('rest_forbidden');
    }
    const seen = await call(t, readOnly, 'GET', `channels/${channel.id}`);
    expect(seen.statusCode).toBe(200);
    expect(seen.json().channel_secret).toBe('');
    expect(await snapshot(t)).toBe(before);
  });

  it('isolates tenants: other sites see 404 and never list or change foreign channels', async () => {
    const channel = await makeChannel(t, admin, { name: 'Private' });
    const before = await snapshot(t);
    // Site B's token on site A's path.
    const crossPath = await t.app.inject({ method: 'GET', url: api(admin, `channels/${channel.id}`), headers: other.headers });
    expect(crossPath.statusCode).toBe(404);
    expect(crossPath.json().code).toBe('rest_post_invalid_id');
    // Site A's id through site B's path.
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await call(t, other, method, `channels/${channel.id}`, method === 'PUT' ? { name: 'stolen' } : undefined);
      expect(response.statusCode, method).toBe(404);
      expect(response.json().code).toBe('rest_post_invalid_id');
    }
    const listed = (await call(t, other, 'GET', `channels?include=${channel.id}`)).json();
    expect(listed).toEqual([]);
    expect(await snapshot(t)).toBe(before);
  });

  it('treats filter text as data, never SQL', async () => {
    const response = await call(t, admin, 'GET', `channels?name=${encodeURIComponent("x' OR '1'='1")}&external_id=${encodeURIComponent("'; DROP TABLE channels; --")}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([]);
    expect((await call(t, admin, 'GET', 'channels')).json().length).toBeGreaterThan(0);
  });
});
