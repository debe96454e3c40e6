import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPaymentRequestToken } from '../../../src/domain/payment-request-link.js';
import { createTestContext, type TestContext } from '../../support/context.js';
import { addUser, createSite, type SiteFixture } from '../../support/fixtures.js';
import { api, call, makeChannel, snapshot } from '../channels/support.js';

let t: TestContext;
let site: SiteFixture;
let member: Pick<SiteFixture, 'path' | 'headers'> & { userId: number; username: string };
let readOnly: Pick<SiteFixture, 'path' | 'headers'>;
let other: SiteFixture;
let gbp: { id: number };
let usd: { id: number };
// A fixed clock: 2026-11-21 10:00 GMT.
const now = new Date('2026-11-21T10:00:00Z');

const valid = () => ({
  firstname: 'Ada',
  surname: 'Lovelace',
  email: 'ada@example.com',
  date: '2026-12-31',
  total: 125_000,
  currencies: 'GBP',
  countries: 'GB',
  channels: gbp.id,
});

async function makeBooking(who: Pick<SiteFixture, 'path' | 'headers'>, body: Record<string, unknown> = {}) {
  const response = await call(t, who, 'POST', 'bookings', { ...valid(), ...body });
  if (response.statusCode !== 201) throw new Error(`booking create failed: ${response.body}`);
  return response.json();
}

beforeAll(async () => {
  t = await createTestContext({ now: () => now });
  site = await createSite(t.db, { role: 'member_admin' });
  const memberUser = await addUser(t.db, site.siteId, { role: 'member' });
  member = { path: site.path, ...memberUser };
  readOnly = { path: site.path, headers: (await addUser(t.db, site.siteId, { role: 'member', readOnly: true })).headers };
  other = await createSite(t.db);
  gbp = await makeChannel(t, site, { name: 'GBP channel', currencies: 'GBP' });
  usd = await makeChannel(t, site, { name: 'USD channel', currencies: 'USD' });
  await t.db.query(`INSERT INTO suppliers (id, name, url, country, category) VALUES ('GB-1042-ACC', 'Grand Hotel', 'https://grand.example', 'GB', 'ACC'), ('FR-7-AIR', 'Air Fr', '', 'FR', 'AIR')`);
});
afterAll(async () => t.close());

describe('bookings: happy paths', () => {
  it('creates an unpaid booking with every field of the Booking table', async () => {
    const response = await call(t, member, 'POST', 'bookings', {
      ...valid(),
      content: 'Two weeks in the Highlands',
      date_start: '2026-12-17',
      pax: 2,
      reference: 'REF-1',
      language: 'frFR',
      suppliers: ['GB-1042-ACC', 'GB-1042-ACC'],
    });
    expect(response.statusCode).toBe(201);
    const booking = response.json();
    const href = `http://trustfare.test/${site.path}/site-json/vendor/v2/bookings`;
    expect(booking).toEqual({
      id: expect.any(Number),
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      trust_id: `${site.siteId}-${booking.id}`,
      internal_id: booking.id,
      author: member.username,
      author_id: member.userId,
      authorname: member.username,
      status: 'unpaid',
      title: `${site.siteId}-${booking.id} | Lovelace | ada@example.com`,
      content: 'Two weeks in the Highlands',
      firstname: 'Ada',
      surname: 'Lovelace',
      email: 'ada@example.com',
      date: '2026-12-31',
      date_start: '2026-12-17',
      pax: 2,
      reference: 'REF-1',
      total: 125_000,
      total_unpaid: 125_000,
      currencies: 'GBP',
      country: 'GB',
      countries: 'GB',
      transaction_ids: [],
      channels: gbp.id,
      language: 'frFR',
      suppliers: ['GB-1042-ACC'],
      created: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      modified: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      _links: { self: [{ href: `${href}/${booking.id}` }], collection: [{ href }] },
    });
    const read = await call(t, readOnly, 'GET', `bookings/${booking.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(booking);
  });

  it('uses defaults for optional fields', async () => {
    const booking = await makeBooking(site);
    expect(booking).toMatchObject({ content: '', date_start: null, pax: null, reference: '', language: 'enGB', suppliers: [], status: 'unpaid' });
  });

  it("takes its channel's default mail receipt language when it names none", async () => {
    const german = await makeChannel(t, site, { name: 'Reisen', currencies: 'GBP', language: 'deDE' });
    expect(await makeBooking(site, { channels: german.id })).toMatchObject({ language: 'deDE' });
    expect(await makeBooking(site, { channels: german.id, language: 'frFR' })).toMatchObject({ language: 'frFR' });
  });

  it('adds a signed payment request link valid until the end of the day after the end date', async () => {
    const booking = await makeBooking(site, { payment_request_url: true });
    const link: string = booking._links.self[0].payment_request;
    expect(link).toMatch(/^http:\/\/trustfare\.test\/pay\/.+/);
    const token = link.split('/pay/')[1]!;
    expect(verifyPaymentRequestToken(t.config.secrets.signingSecret, token, now)).toEqual({ siteId: site.siteId, bookingId: booking.id, expiresAt: new Date('2027-01-01T23:59:59Z') });
    expect(verifyPaymentRequestToken(t.config.secrets.signingSecret, token, new Date('2027-01-02T00:00:00Z'))).toBeNull();
    // Only on the response that asked for it; also through the query string on PUT.
    expect((await call(t, site, 'GET', `bookings/${booking.id}`)).json()._links.self[0].payment_request).toBeUndefined();
    const put = await call(t, site, 'PUT', `bookings/${booking.id}?payment_request_url=true`, { date: '2027-03-01' });
    const moved = put.json()._links.self[0].payment_request.split('/pay/')[1];
    expect(verifyPaymentRequestToken(t.config.secrets.signingSecret, moved, new Date('2027-03-02T23:00:00Z'))?.bookingId).toBe(booking.id);
  });

  it('gives a booking whose end date has passed a payment request link that works for a week (a balance collected after travel)', async () => {
    const past = await makeBooking(site, { date: '2026-11-01', payment_request_url: true });
    const token = past._links.self[0].payment_request.split('/pay/')[1]!;
    expect(verifyPaymentRequestToken(t.config.secrets.signingSecret, token, now)?.expiresAt).toEqual(new Date('2026-11-28T10:00:00Z'));
    const page = await t.app.inject({ url: `/pay/${token}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="card-form"');
  });

  it('updates any input field, ignoring read-only ones', async () => {
    const booking = await makeBooking(site);
    const response = await call(t, member, 'PUT', `bookings/${booking.id}`, {
      firstname: 'Grace',
      surname: 'Hopper',
      email: 'grace@example.org',
      date: '2027-01-15',
      date_start: '2027-01-10',
      total: 99_000,
      countries: 'US',
      pax: 3,
      reference: 'NEW',
      content: 'changed',
      language: 'esES',
      suppliers: ['FR-7-AIR'],
      status: 'paid',
      total_unpaid: 0,
      transaction_ids: [1, 2],
      author_id: 1,
      trust_id: 'x',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      firstname: 'Grace', surname: 'Hopper', email: 'grace@example.org', date: '2027-01-15', date_start: '2027-01-10', total: 99_000, total_unpaid: 99_000,
      countries: 'US', country: 'US', pax: 3, reference: 'NEW', content: 'changed', language: 'esES', suppliers: ['FR-7-AIR'],
      status: 'unpaid', transaction_ids: [], author_id: site.userId, trust_id: `${site.siteId}-${booking.id}`, title: `${site.siteId}-${booking.id} | Hopper | grace@example.org`,
    });
    const cleared = await call(t, site, 'PUT', `bookings/${booking.id}`, { date_start: null, pax: null });
    expect(cleared.json()).toMatchObject({ date_start: null, pax: null });
  });

  it('moves a booking without transactions to another channel of the booking currency', async () => {
    const booking = await makeBooking(site);
    const response = await call(t, site, 'PUT', `bookings/${booking.id}`, { channels: usd.id, currencies: 'USD' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ channels: usd.id, currencies: 'USD' });
  });

  it('re-derives the status from linked money when the total changes, never below the linked money', async () => {
    const booking = await makeBooking(site, { total: 10_000 });
    // The payments code maintains these columns; here they are set directly.
    await t.db.query(`UPDATE bookings SET total_paid = 6000, total_authorized = 1000, status = 'partial-payment', transaction_ids = '{11,12}' WHERE id = $1`, [booking.id]);
    const tooLow = await call(t, site, 'PUT', `bookings/${booking.id}`, { total: 6_999 });
    expect(tooLow.statusCode).toBe(400);
    expect(tooLow.json()).toEqual({ code: 'rest_invalid_param', message: expect.stringContaining('total'), data: { status: 400, params: { total: expect.any(String) } } });
    const paid = await call(t, site, 'PUT', `bookings/${booking.id}`, { total: 7_000 });
    expect(paid.statusCode).toBe(200);
    expect(paid.json()).toMatchObject({ status: 'partial-payment', total_unpaid: 1_000, transaction_ids: [11, 12] });
    await t.db.query(`UPDATE bookings SET total_authorized = 0 WHERE id = $1`, [booking.id]);
    const exact = await call(t, site, 'PUT', `bookings/${booking.id}`, { total: 6_000 });
    expect(exact.json()).toMatchObject({ status: 'paid', total_unpaid: 0 });
    const raised = await call(t, site, 'PUT', `bookings/${booking.id}`, { total: 8_000 });
    expect(raised.json()).toMatchObject({ status: 'partial-payment', total_unpaid: 2_000 });
    const moved = await call(t, site, 'PUT', `bookings/${booking.id}`, { channels: usd.id, currencies: 'USD' });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().data.params).toHaveProperty('channels');
  });

  it('shows a paid booking whose end date has passed as completed', async () => {
    const booking = await makeBooking(site, { total: 500, date: '2026-11-01' });
    await t.db.query(`UPDATE bookings SET total_paid = 500, status = 'paid' WHERE id = $1`, [booking.id]);
    expect((await call(t, site, 'GET', `bookings/${booking.id}`)).json().status).toBe('completed');
    const listed = (await call(t, site, 'GET', `bookings?status=completed&include=${booking.id}`)).json();
    expect(listed.map((item: { id: number }) => item.id)).toEqual([booking.id]);
    expect((await call(t, site, 'GET', `bookings?status=paid&include=${booking.id}`)).json()).toEqual([]);
  });

  it('shows a paid booking ending today as paid, in the status filter too: it is completed from the day after', async () => {
    const booking = await makeBooking(site, { total: 500, date: '2026-11-21' });
    await t.db.query(`UPDATE bookings SET total_paid = 500, status = 'paid' WHERE id = $1`, [booking.id]);
    expect((await call(t, site, 'GET', `bookings/${booking.id}`)).json().status).toBe('paid');
    const listed = (await call(t, site, 'GET', `bookings?status=paid&include=${booking.id}`)).json();
    expect(listed.map((item: { id: number; status: string }) => [item.id, item.status])).toEqual([[booking.id, 'paid']]);
    expect((await call(t, site, 'GET', `bookings?status=completed&include=${booking.id}`)).json()).toEqual([]);
  });

  it('reads a booking exactly as the list shows it (the single read takes the row as JSON)', async () => {
    const booking = await makeBooking(site, { date_start: '2026-12-20', pax: 3, suppliers: ['FR-7-AIR'] });
    await t.db.query(
      `UPDATE bookings SET transaction_ids = '{5,7}', total_paid = 1000, status = 'partial-payment', created_at = '2026-11-20 23:59:59.999999+00', modified_at = '2026-11-21 00:00:00.5+01' WHERE id = $1`,
      [booking.id],
    );
    const read = await call(t, site, 'GET', `bookings/${booking.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ transaction_ids: [5, 7], total_unpaid: 124_000, date_start: '2026-12-20', pax: 3, suppliers: ['FR-7-AIR'], created: '2026-11-20 23:59:59', modified: '2026-11-20 23:00:00' });
    const listed = (await call(t, site, 'GET', `bookings?include=${booking.id}`)).json();
    expect(listed).toEqual([read.json()]);
  });

  it('replays a POST with the same Idempotency-Key and refuses the key for another body', async () => {
    const send = (body: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: api(site, 'bookings'), headers: { ...site.headers, 'idempotency-key': 'booking-retry-1' }, payload: body });
    const first = await send({ ...valid(), reference: 'IDEM' });
    const again = await send({ ...valid(), reference: 'IDEM' });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().id).toBe(first.json().id);
    expect((await call(t, site, 'GET', 'bookings?reference=IDEM')).json()).toHaveLength(1);
    const other = await send({ ...valid(), reference: 'OTHER' });
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('rest_idempotency_conflict');
  });

  it('deletes a booking without transactions and refuses one with transactions', async () => {
    const plain = await makeBooking(site);
    const response = await call(t, site, 'DELETE', `bookings/${plain.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ deleted: true });
    expect((await call(t, site, 'GET', `bookings/${plain.id}`)).statusCode).toBe(404);

    const paid = await makeBooking(site);
    await t.db.query(`UPDATE bookings SET transaction_ids = '{5}' WHERE id = $1`, [paid.id]);
    const refused = await call(t, member, 'DELETE', `bookings/${paid.id}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ code: 'rest_booking_has_transactions', message: expect.any(String), data: { status: 409 } });
    expect((await call(t, site, 'GET', `bookings/${paid.id}`)).statusCode).toBe(200);
  });
});

describe('bookings: list filters', () => {
  it('filters by every list parameter and paginates with headers', async () => {
    const owner = await createSite(t.db);
    const eur = await makeChannel(t, owner, { name: 'EUR', currencies: 'EUR' });
    const aud = await makeChannel(t, owner, { name: 'AUD', currencies: 'AUD' });
    const base = { firstname: 'F', email: 'x@example.com', total: 100, countries: 'FR', currencies: 'EUR', channels: eur.id, date: '2027-01-10' };
    const create = async (body: Record<string, unknown>) => (await call(t, owner, 'POST', 'bookings', { ...base, ...body })).json();
    const a = await create({ surname: 'Smith', email: 'Smith@Example.com', reference: 'R-A', date: '2027-01-05' });
    const b = await create({ surname: 'Jones', reference: 'R-B', countries: 'DE', date: '2027-02-05' });
    const c = await create({ surname: 'Smith', reference: 'R-C', channels: aud.id, currencies: 'AUD', date: '2027-03-05' });
    await t.db.query(`UPDATE bookings SET total_paid = 50, status = 'partial-payment' WHERE id = $1`, [b.id]);
    await t.db.query(`UPDATE bookings SET created_at = '2026-01-01T00:00:00Z' WHERE id = $1`, [a.id]);

    const ids = async (query: string) => {
      const response = await call(t, owner, 'GET', `bookings?${query}`);
      expect(response.statusCode, query).toBe(200);
      return (response.json() as { id: number }[]).map((item) => item.id);
    };
    expect(await ids('')).toEqual([a.id, b.id, c.id]);
    expect(await ids('order=desc')).toEqual([c.id, b.id, a.id]);
    expect(await ids('orderby=surname&order=asc')).toEqual([b.id, a.id, c.id]);
    expect(await ids('orderby=date&order=desc')).toEqual([c.id, b.id, a.id]);
    expect(await ids(`include=${c.id},${a.id}`)).toEqual([a.id, c.id]);
    expect(await ids(`exclude=${b.id}`)).toEqual([a.id, c.id]);
    expect(await ids('before=2026-06-01')).toEqual([a.id]);
    expect(await ids('after=2026-06-01T00:00:00Z')).toEqual([b.id, c.id]);
    expect(await ids('status=partial-payment')).toEqual([b.id]);
    expect(await ids('status=unpaid,partial-payment')).toEqual([a.id, b.id, c.id]);
    expect(await ids('status=unpaid&status=paid')).toEqual([a.id, c.id]);
    expect(await ids(`channels=${aud.id}`)).toEqual([c.id]);
    expect(await ids('countries=DE')).toEqual([b.id]);
    expect(await ids('countries=FR,DE')).toEqual([a.id, b.id, c.id]);
    expect(await ids('surname=Smith')).toEqual([a.id, c.id]);
    expect(await ids('surname=smith')).toEqual([]);
    expect(await ids('email=smith@example.com')).toEqual([a.id]);
    expect(await ids('date_before=2027-02-01')).toEqual([a.id]);
    expect(await ids('date_after=2027-02-05')).toEqual([c.id]);
    expect(await ids('date_after=2027-01-01&date_before=2027-03-01')).toEqual([a.id, b.id]);
    expect(await ids('reference=R-B')).toEqual([b.id]);

    const page = await call(t, owner, 'GET', 'bookings?per_page=1&page=2');
    expect(page.json().map((item: { id: number }) => item.id)).toEqual([b.id]);
    expect(page.headers['x-site-total']).toBe('3');
    expect(page.headers['x-site-totalpages']).toBe('3');
    const base64 = `http://trustfare.test/${owner.path}/site-json/vendor/v2/bookings`;
    expect(page.headers.link).toBe(`<${base64}?per_page=1&page=1>; rel="prev", <${base64}?per_page=1&page=3>; rel="next"`);
  });

  it('finds a name and a reference however their accents were encoded (kept and searched in NFC)', async () => {
    const owner = await createSite(t.db);
    const eur = await makeChannel(t, owner, { name: 'EUR', currencies: 'EUR' });
    // A Mac keyboard sends a decomposed ü (u + U+0308): the same name as a composed one (NFC).
    const decomposed = { firstname: 'Zoe\u0308', surname: 'Mu\u0308ller', reference: 'Cafe\u0301-7', email: 'x@mu\u0308ller.de' };
    const made = await call(t, owner, 'POST', 'bookings', { total: 100, countries: 'FR', currencies: 'EUR', channels: eur.id, date: '2027-01-10', ...decomposed });
    expect(made.statusCode).toBe(201);
    const booking = made.json();
    expect(booking).toMatchObject({ firstname: 'Zoë', surname: 'Müller', reference: 'Café-7', email: 'x@müller.de' });
    const ids = async (query: string) => ((await call(t, owner, 'GET', `bookings?${query}`)).json() as { id: number }[]).map((item) => item.id);
    for (const query of ['surname=Müller', `surname=${encodeURIComponent('Mu\u0308ller')}`, 'reference=Café-7', `reference=${encodeURIComponent('Cafe\u0301-7')}`, 'email=X@müller.de']) {
      expect(await ids(query), query).toEqual([booking.id]);
    }
    const updated = await call(t, owner, 'PUT', `bookings/${booking.id}`, { surname: 'Bjo\u0308rk', reference: 'Ne\u0301e' });
    expect(updated.json()).toMatchObject({ surname: 'Björk', reference: 'Née' });
    expect(await ids('surname=Björk&reference=Née')).toEqual([booking.id]);
  });

  it('refuses malformed filters with 400 rest_invalid_param', async () => {
    for (const query of ['status=nope', 'before=yesterday', 'after=2026-02-30', 'date_before=2026-13-01', 'channels=a', 'countries=gb', 'per_page=500', 'orderby=password', 'include=-1', 'after=2026-01-01T25:00:00']) {
      const response = await call(t, site, 'GET', `bookings?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().code, query).toBe('rest_invalid_param');
    }
  });

  it('keys a refused filter by its parameter and says what it expected, in words', async () => {
    const status = (await call(t, site, 'GET', 'bookings?status=Paid')).json();
    expect(status).toEqual({
      code: 'rest_invalid_param',
      message: 'Invalid parameter(s): status',
      data: { status: 400, params: { status: 'must be values among authorized, completed, locked, paid, partial-payment, unpaid, one or more separated by commas' } },
    });
    expect((await call(t, site, 'GET', 'bookings?channels=abc')).json().data.params).toEqual({ channels: 'must be positive integer ids separated by commas' });
    expect((await call(t, site, 'GET', 'bookings?before=yesterday')).json().data.params).toEqual({ before: 'must be an ISO 8601 date or date-time, such as 2026-01-31 or 2026-01-31T10:00:00Z' });
  });
});

describe('bookings: errors', () => {
  it("answers a currency that differs from the channel's base currency exactly as the spec's Errors 3", async () => {
    const before = await snapshot(t);
    const response = await call(t, site, 'POST', 'bookings', { ...valid(), currencies: 'USD' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: 'rest_invalid_param',
      message: 'Invalid parameter(s): channels',
      data: { status: 400, params: { channels: 'The booking currency (USD) must match the channel base currency (GBP).' } },
    });
    expect(await snapshot(t)).toBe(before);
  });

  it('lists missing required fields', async () => {
    const response = await call(t, site, 'POST', 'bookings', { firstname: 'A' });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('rest_missing_callback_param');
    expect(response.json().data.params.sort()).toEqual(['channels', 'countries', 'currencies', 'date', 'email', 'surname', 'total']);
  });

  it('refuses invalid values and changes nothing', async () => {
    const before = await snapshot(t);
    const cases: [Record<string, unknown>, string][] = [
      [{ total: -1 }, 'total'],
      [{ total: 10.5 }, 'total'],
      [{ total: '100' }, 'total'],
      [{ total: 1_000_000_000_001 }, 'total'],
      [{ countries: 'XX' }, 'countries'],
      [{ countries: 'gb' }, 'countries'],
      [{ date: '31/12/2026' }, 'date'],
      [{ date: '2026-02-30' }, 'date'],
      [{ date_start: '2027-01-05' }, 'date_start'],
      [{ email: 'nope' }, 'email'],
      [{ firstname: ' ' }, 'firstname'],
      [{ pax: 0 }, 'pax'],
      [{ pax: '2' }, 'pax'],
      [{ language: 'xxXX' }, 'language'],
      [{ suppliers: ['GB-9999-ACC'] }, 'suppliers'],
      [{ suppliers: ['bad id'] }, 'suppliers.0'],
      [{ channels: 999_999 }, 'channels'],
      [{ channels: '1' }, 'channels'],
      [{ content: 'x'.repeat(10_001) }, 'content'],
      [{ payment_request_url: 'yes' }, 'payment_request_url'],
      [{ nickname: 'x' }, 'nickname'],
    ];
    for (const [patch, param] of cases) {
      const response = await call(t, site, 'POST', 'bookings', { ...valid(), ...patch });
      expect(response.statusCode, JSON.stringify(patch)).toBe(400);
      expect(response.json().code, JSON.stringify(patch)).toBe('rest_invalid_param');
      expect(Object.keys(response.json().data.params), JSON.stringify(patch)).toContain(param);
    }
    expect(await snapshot(t)).toBe(before);
  });

  it('says in words what a refused value should look like, never as a regular expression', async () => {
    const said = async (patch: Record<string, unknown>) => (await call(t, site, 'POST', 'bookings', { ...valid(), ...patch })).json().data.params;
    expect(await said({ date: '30/06/2027' })).toEqual({ date: 'must be a date as YYYY-MM-DD' });
    expect(await said({ countries: 'gb' })).toEqual({ countries: 'must be a country code of the ISO 3166-1 alpha-2 list, in capitals, such as GB' });
    expect(await said({ email: 'nope' })).toEqual({ email: 'must be an email address (ASCII before the @; letters, digits and hyphens in the domain)' });
    expect(await said({ email: 'jörg@example.com' })).toEqual({ email: 'must be an email address (ASCII before the @; letters, digits and hyphens in the domain)' });
    expect(await said({ countries: 'XX' })).toEqual({ countries: 'must be a country code of the ISO 3166-1 alpha-2 list, in capitals, such as GB' });
    expect(await said({ firstname: '   ' })).toEqual({ firstname: 'must be text on one line with at least one visible character, without control characters' });
    expect(await said({ nickname: 'x' })).toEqual({ nickname: 'unknown field nickname' });
    // A real date before 1900 was told it was no "valid date, Y-m-d", which it is: the bound is named.
    const bound = 'must be 1900-01-01 or later';
    expect(await said({ date: '1899-12-31' })).toEqual({ date: bound });
    // A day that does not exist is told so, apart from the bound.
    expect(await said({ date: '2027-02-30', date_start: '1850-06-01' })).toEqual({ date: 'names a day that does not exist (2027-02 has 28 days)', date_start: bound });
    expect(await said({ date: '2028-13-01' })).toEqual({ date: 'names a month that does not exist (13)' });
    expect((await call(t, site, 'POST', 'bookings', { ...valid(), date: '1900-01-01' })).statusCode).toBe(201);
  });

  it('PUT with dates out of order names the date the client sent', async () => {
    const booking = await makeBooking(site, { date: '2027-03-20', date_start: '2027-03-10' });
    const before = await snapshot(t);
    // Only `date`, before the stored start: refused on `date` (it was refused on date_start, which the client never sent).
    const endOnly = await call(t, site, 'PUT', `bookings/${booking.id}`, { date: '2027-03-01' });
    expect(endOnly.statusCode).toBe(400);
    expect(endOnly.json().data.params).toEqual({ date: 'must not be before the start date (date_start, 2027-03-10)' });
    const startOnly = await call(t, site, 'PUT', `bookings/${booking.id}`, { date_start: '2027-04-01' });
    expect(startOnly.json().data.params).toEqual({ date_start: 'must not be after the end date (date)' });
    const both = await call(t, site, 'PUT', `bookings/${booking.id}`, { date: '2027-03-01', date_start: '2027-03-05' });
    expect(both.json().data.params).toEqual({ date_start: 'must not be after the end date (date)' });
    expect(await snapshot(t)).toBe(before);
  });

  it('refuses invalid updates and changes nothing', async () => {
    const booking = await makeBooking(site);
    const before = await snapshot(t);
    for (const patch of [{ currencies: 'USD' }, { channels: usd.id }, { date: '2026-12-01', date_start: '2026-12-02' }, { total: -5 }, { email: '' }, { id: 'x', nope: 1 }]) {
      const response = await call(t, site, 'PUT', `bookings/${booking.id}`, patch);
      expect(response.statusCode, JSON.stringify(patch)).toBe(400);
    }
    for (const id of ['999999', 'x', '0']) {
      expect((await call(t, site, 'PUT', `bookings/${id}`, { total: 1 })).json().code).toBe('rest_post_invalid_id');
    }
    expect(await snapshot(t)).toBe(before);
  });

  it('takes no new booking on a closed channel, and still lets one it holds be corrected', async () => {
    const closing = await makeChannel(t, site, { name: 'Closing', currencies: 'GBP' });
    const held = await makeBooking(site, { channels: closing.id });
    await t.db.query(`UPDATE channels SET account_mode = 'closed' WHERE id = $1`, [closing.id]);
    const created = await call(t, site, 'POST', 'bookings', { ...valid(), channels: closing.id });
    expect(created.json()).toEqual({
      code: 'rest_invalid_param',
      message: 'Invalid parameter(s): channels',
      data: { status: 400, params: { channels: 'The channel is closed and takes no new bookings.' } },
    });
    const other = await makeBooking(site);
    const moved = await call(t, site, 'PUT', `bookings/${other.id}`, { channels: closing.id });
    expect(moved.json().data.params).toEqual({ channels: 'The channel is closed and takes no new bookings.' });
    expect((await call(t, site, 'PUT', `bookings/${held.id}`, { surname: 'Byron' })).json()).toMatchObject({ surname: 'Byron', channels: closing.id });
    expect(await t.db.query('SELECT id FROM bookings WHERE channel_id = $1', [closing.id])).toEqual([{ id: held.id }]);
  });

  it('refuses a channel of another site as the booking channel', async () => {
    const foreign = await makeChannel(t, other, { name: 'Foreign', currencies: 'GBP' });
    const response = await call(t, site, 'POST', 'bookings', { ...valid(), channels: foreign.id });
    expect(response.statusCode).toBe(400);
    expect(response.json().data.params).toEqual({ channels: 'Invalid channel ID.' });
  });
});

describe('bookings: security', () => {
  it('requires a token and keeps read-only users to reads', async () => {
    const booking = await makeBooking(site);
    expect((await t.app.inject({ method: 'GET', url: api(site, 'bookings') })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: api(site, 'bookings'), payload: valid() })).statusCode).toBe(401);
    const before = await snapshot(t);
    expect((await call(t, readOnly, 'GET', 'bookings')).statusCode).toBe(200);
    for (const [method, rest, body] of [['POST', 'bookings', valid()], ['PUT', `bookings/${booking.id}`, { total: 1 }], ['DELETE', `bookings/${booking.id}`, undefined]] as const) {
      const response = await call(t, readOnly, method, rest, body);
      expect(response.statusCode, method).toBe(403);
      expect(response.json().code).toBe('rest_forbidden');
    }
    expect(await snapshot(t)).toBe(before);
  });

  it('isolates tenants in reads, writes and lists', async () => {
    const booking = await makeBooking(site);
    const before = await snapshot(t);
    const crossPath = await t.app.inject({ method: 'GET', url: api(site, `bookings/${booking.id}`), headers: other.headers });
    expect(crossPath.statusCode).toBe(404);
    expect(crossPath.json().code).toBe('rest_post_invalid_id');
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await call(t, other, method, `bookings/${booking.id}`, method === 'PUT' ? { total: 1 } : undefined);
      expect(response.statusCode, method).toBe(404);
      expect(response.json().code).toBe('rest_post_invalid_id');
    }
    expect((await call(t, other, 'GET', `bookings?include=${booking.id}`)).json()).toEqual([]);
    expect((await call(t, other, 'GET', `bookings?channels=${gbp.id}`)).json()).toEqual([]);
    expect(await snapshot(t)).toBe(before);
  });
});
