import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestContext } from '../support/context.js';
import { requestFingerprint } from '../../src/http/idempotency.js';
import { createBooking, createShop, get, paymentsContext, post, purchaseBody, type Shop } from '../payments/support.js';

let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
});
afterAll(async () => t.close());

describe('Idempotency-Key', () => {
  it('replays the stored response for the same key and body', async () => {
    // Room for a second payment on the booking: only the key prevents it.
    const booking = await createBooking(t, shop, { total: 10_000 });
    const first = await post(t, shop, purchaseBody(shop, booking, 1000), { 'idempotency-key': 'k-replay' });
    const second = await post(t, shop, purchaseBody(shop, booking, 1000), { 'idempotency-key': 'k-replay' });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    expect(second.headers.location).toBe(first.headers.location);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const count = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transactions WHERE $1 IN (SELECT booking_id FROM transaction_bookings WHERE transaction_id = transactions.id)', [booking]);
    expect(count.count).toBe(1);
  });

  it('leaves the refunded payment as one refund left it, however often the refund is replayed', async () => {
    const booking = await createBooking(t, shop, { total: 1000 });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, 1000))).json();
    const refund = { transaction_types: 'refund', channels: shop.channelId, currencies: 'USD', total: 100, linked_id: purchase.id, bookings: [{ id: booking, currencies: 'USD', total: 100 }] };
    const answers = [];
    for (let attempt = 0; attempt < 3; attempt++) answers.push(await post(t, shop, refund, { 'idempotency-key': 'k-refund-100' }));
    expect(answers.map((answer) => answer.headers['idempotent-replayed'] ?? 'first')).toEqual(['first', 'true', 'true']);
    expect(new Set(answers.map((answer) => answer.json().id)).size).toBe(1);
    const payment = (await get(t, shop, `/transactions/${purchase.id}`)).json();
    expect(payment.total_remaining).toBe(900);
    const shares = await t.db.query<{ total_remaining: number }>('SELECT total_remaining FROM transaction_bookings WHERE transaction_id = $1', [purchase.id]);
    expect(shares.map((share) => share.total_remaining)).toEqual([900]);
    // The rest stays refundable.
    expect((await post(t, shop, { ...refund, total: 900, bookings: [{ id: booking, currencies: 'USD', total: 900 }] })).json()).toMatchObject({ status: 'complete' });
  });

  it('replays over a real socket without running the request again', async () => {
    // Through a listening server (not inject): the replay must end the request before the
    // handler, whatever the socket timing.
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const booking = await createBooking(t, shop, { total: 10_000 });
    const send = () => fetch(`${address}${shop.base}/transactions`, {
      method: 'POST',
      headers: { ...shop.site.headers, 'content-type': 'application/json', 'idempotency-key': 'k-socket' },
      body: JSON.stringify(purchaseBody(shop, booking, 1000)),
    });
    const first = await send();
    const firstBody = await first.json();
    const responses = await Promise.all([send(), send(), send()]);
    for (const response of responses) {
      expect(response.status).toBe(201);
      expect(response.headers.get('idempotent-replayed')).toBe('true');
      expect((await response.json()).id).toBe(firstBody.id);
    }
    // A replay must not run the request again even after answering: let any stray work finish.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const count = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transaction_bookings WHERE booking_id = $1', [booking]);
    expect(count.count).toBe(1);
  });

  it('refuses the same key with a different body (409) and leaves the first result alone', async () => {
    const booking = await createBooking(t, shop, { total: 1000 });
    await post(t, shop, purchaseBody(shop, booking, 400), { 'idempotency-key': 'k-conflict' });
    const other = await post(t, shop, purchaseBody(shop, booking, 500), { 'idempotency-key': 'k-conflict' });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ code: 'rest_idempotency_conflict', data: { status: 409 } });
  });

  it('scopes keys per site', async () => {
    const other = await createShop(t);
    const mine = await post(t, shop, purchaseBody(shop, await createBooking(t, shop, { total: 300 }), 300), { 'idempotency-key': 'shared-key' });
    const theirs = await post(t, other, purchaseBody(other, await createBooking(t, other, { total: 300 }), 300), { 'idempotency-key': 'shared-key' });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().id).not.toBe(mine.json().id);
  });

  it('replays error responses too, and applies to every POST resource (bookings)', async () => {
    const bad = purchaseBody(shop, await createBooking(t, shop, { total: 300 }), 300, { linked_id: 999_999 });
    const first = await post(t, shop, bad, { 'idempotency-key': 'k-error' });
    const again = await post(t, shop, bad, { 'idempotency-key': 'k-error' });
    expect(again.statusCode).toBe(first.statusCode);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const booking = { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2099-01-01', total: 100, currencies: 'USD', countries: 'GB', channels: shop.channelId };
    const inject = () => t.app.inject({ method: 'POST', url: `${shop.base}/bookings`, headers: { ...shop.site.headers, 'idempotency-key': 'k-booking' }, payload: booking });
    const created = await inject();
    const replayed = await inject();
    expect(created.statusCode).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json().id).toBe(created.json().id);
  });

  it('answers 201 with the transaction recorded under a key whose request never finished, as it reads now, and never runs it again', async () => {
    const booking = await createBooking(t, shop, { total: 500 });
    const body = purchaseBody(shop, booking, 500);
    const url = `${shop.base}/transactions`;
    const earlier = (await post(t, shop, body)).json();
    // As a process that died after recording this request's attempt would leave its key (its answer not stored).
    await t.db.query(
      `INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at) VALUES ($1, 'k-crashed', $2, 'in_flight', $3, now() - interval '1 hour')`,
      [shop.site.siteId, requestFingerprint('POST', url, body), earlier.id],
    );
    const response = await post(t, shop, body, { 'idempotency-key': 'k-crashed' });
    expect(response.statusCode).toBe(201);
    expect(response.headers['idempotent-replayed']).toBe('true');
    expect(response.headers.location).toBe(earlier._links.self[0].href);
    expect(response.json()).toMatchObject({ id: earlier.id, status: earlier.status });
    const count = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transaction_bookings WHERE booking_id = $1', [booking]);
    expect(count.count).toBe(1);
  });

  it('reads a key still in flight less and less often while it waits, then replays the answer once it is stored', async () => {
    const booking = await createBooking(t, shop, { total: 500 });
    const body = purchaseBody(shop, booking, 500);
    const first = (await post(t, shop, body)).json();
    await t.db.query(
      `INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at) VALUES ($1, 'k-slow', $2, 'in_flight', $3, now())`,
      [shop.site.siteId, requestFingerprint('POST', `${shop.base}/transactions`, body), first.id],
    );
    const query = vi.spyOn(t.db, 'query');
    // Each look reads the key (the attempt found it held, so the retry only reads it, claims nothing).
    const looks = () => query.mock.calls.filter(([statement]) => (statement as { name?: string }).name === 'idempotency_find').length;
    const retry = post(t, shop, body, { 'idempotency-key': 'k-slow' });
    // Three seconds of waiting: at a steady 25 ms that was some 120 reads; backing off to 500 ms, under 15.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(looks()).toBeGreaterThan(3);
    expect(looks()).toBeLessThan(15);
    await t.db.query(
      `UPDATE idempotency_keys SET status = 'done', response_status = 201, response_headers = '{}', response_body = $3 WHERE site_id = $1 AND key = $2`,
      [shop.site.siteId, 'k-slow', JSON.stringify(first)],
    );
    const response = await retry;
    query.mockRestore();
    expect(response.statusCode).toBe(201);
    expect(response.headers['idempotent-replayed']).toBe('true');
    expect(response.json()).toMatchObject({ id: first.id });
  });

  // A key whose request never finished and recorded nothing is run again past the bound, once:
  // test/http/idempotency-takeover.test.ts.

  it('answers a server error in the error shape even when its answer cannot be stored for the key (the database gone)', async () => {
    // The request fails in the database, and so does storing its 500 (as when PostgreSQL goes away
    // mid-request): two triggers stand for that, for this one booking and key.
    await t.db.query(`CREATE FUNCTION fail_for_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'terminating connection due to administrator command'; END $$`);
    await t.db.query(`CREATE TRIGGER fail_booking BEFORE INSERT ON bookings FOR EACH ROW WHEN (NEW.firstname = 'Unstorable') EXECUTE FUNCTION fail_for_test()`);
    await t.db.query(`CREATE TRIGGER fail_store BEFORE UPDATE ON idempotency_keys FOR EACH ROW WHEN (NEW.key = 'k-unstorable') EXECUTE FUNCTION fail_for_test()`);
    try {
      const booking = { firstname: 'Unstorable', surname: 'Lovelace', email: 'ada@example.com', date: '2099-01-01', total: 100, currencies: 'USD', countries: 'GB', channels: shop.channelId };
      const response = await t.app.inject({ method: 'POST', url: `${shop.base}/bookings`, headers: { ...shop.site.headers, 'idempotency-key': 'k-unstorable' }, payload: booking });
      // Fastify's own fallback answered before: {statusCode: 500, code: "P0001", error, message: the database's words}.
      expect([response.statusCode, response.json()]).toEqual([500, { code: 'rest_internal_error', message: 'An internal error occurred. It has been logged.', data: { status: 500 } }]);
      expect(response.headers['x-request-id']).toBeDefined();
    } finally {
      await t.db.query('DROP TRIGGER fail_booking ON bookings; DROP TRIGGER fail_store ON idempotency_keys; DROP FUNCTION fail_for_test()');
    }
  });

  it('refuses malformed keys and ignores request bodies key order', async () => {
    const response = await post(t, shop, purchaseBody(shop, 1, 100), { 'idempotency-key': 'x'.repeat(300) });
    expect(response.statusCode).toBe(400);
    expect(requestFingerprint('POST', '/a', { a: 1, b: [1, { c: 2, d: 3 }] })).toBe(requestFingerprint('POST', '/a', { b: [1, { d: 3, c: 2 }], a: 1 }));
    expect(requestFingerprint('POST', '/a', { a: 1 })).not.toBe(requestFingerprint('POST', '/b', { a: 1 }));
  });
});

// POST transactions claims the key in the attempt's own database transaction (issue 7): these
// are the cases where that differs from claiming first.
describe('Idempotency-Key claimed by the attempt', () => {
  it('stores a refusal made inside the attempt (rolled back with its claim) and replays it', async () => {
    const booking = await createBooking(t, shop, { total: 1000 });
    const paid = await post(t, shop, purchaseBody(shop, booking, 1000));
    expect(paid.json().status).toBe('complete');
    // The booking is paid: the attempt's over-funding check refuses the next payment.
    const first = await post(t, shop, purchaseBody(shop, booking, 500), { 'idempotency-key': 'k-refused-in-attempt' });
    expect(first.statusCode).toBe(400);
    const again = await post(t, shop, purchaseBody(shop, booking, 500), { 'idempotency-key': 'k-refused-in-attempt' });
    expect(again.statusCode).toBe(400);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await post(t, shop, purchaseBody(shop, booking, 400), { 'idempotency-key': 'k-refused-in-attempt' });
    expect(other.statusCode).toBe(409);
    const count = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transaction_bookings WHERE booking_id = $1', [booking]);
    expect(count.count).toBe(1);
  });

  it('replays the first answer even when the request would now be refused (channel closed since)', async () => {
    const channelShop = await createShop(t);
    const booking = await createBooking(t, channelShop, { total: 800 });
    const first = await post(t, channelShop, purchaseBody(channelShop, booking, 800), { 'idempotency-key': 'k-closed-later' });
    expect(first.statusCode).toBe(201);
    await t.db.query(`UPDATE channels SET account_mode = 'closed' WHERE id = $1`, [channelShop.channelId]);
    const again = await post(t, channelShop, purchaseBody(channelShop, booking, 800), { 'idempotency-key': 'k-closed-later' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().id).toBe(first.json().id);
  });

  it('records the key with the transaction it created, before the processor is called', async () => {
    const booking = await createBooking(t, shop, { total: 700 });
    const response = await post(t, shop, purchaseBody(shop, booking, 700), { 'idempotency-key': 'k-linked' });
    const key = await t.db.one<{ transaction_id: number; status: string; response_status: number }>(
      `SELECT transaction_id, status, response_status FROM idempotency_keys WHERE site_id = $1 AND key = 'k-linked'`,
      [shop.site.siteId],
    );
    expect(key).toEqual({ transaction_id: response.json().id, status: 'done', response_status: 201 });
  });
});
