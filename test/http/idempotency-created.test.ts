import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { addUser } from '../support/fixtures.js';
import { createBooking, createShop, paymentsContext, post, purchaseBody, type Body, type Shop } from '../payments/support.js';

// POST bookings and POST channels create their resource, then store their answer for the
// Idempotency-Key (onSend). When that write failed (the database lost meanwhile) the client got a
// 500 and the key stayed in flight: every retry with the key was told only 409 "still being
// processed" until the key's purge, so a client could not learn what was created and, retrying
// with a new key, created it twice. The failure is made here by a trigger refusing the answer's
// write for keys starting with `lost-`.
let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  await t.db.query(`CREATE FUNCTION lose_answer() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'connection lost (test)'; END $$`);
  await t.db.query(`CREATE TRIGGER lose_answer BEFORE UPDATE ON idempotency_keys FOR EACH ROW
    WHEN (NEW.status = 'done' AND NEW.key LIKE 'lost-%') EXECUTE FUNCTION lose_answer()`);
});
afterAll(async () => t.close());

const send = (path: string, body: Body, key: string) =>
  t.app.inject({ method: 'POST', url: `${shop.base}/${path}`, headers: { ...shop.site.headers, 'idempotency-key': key }, payload: body });

/** The key as a retry long after finds it: its request ended an hour ago. */
const ageKey = (key: string) => t.db.query(`UPDATE idempotency_keys SET created_at = created_at - interval '1 hour' WHERE key = $1`, [key]);

describe('a created resource whose answer could not be stored for its Idempotency-Key', () => {
  it('booking: a retry with the key is answered with the booking as it is now, and nothing is created twice', async () => {
    const body = { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2027-03-01', total: 4200, currencies: 'USD', countries: 'GB', channels: shop.channelId, reference: 'LOST-ANSWER-1' };
    const first = await send('bookings', body, 'lost-booking');
    expect(first.statusCode).toBe(500);
    const created = await t.db.query<{ id: number }>(`SELECT id FROM bookings WHERE reference = 'LOST-ANSWER-1'`);
    expect(created).toHaveLength(1);
    // Changed since: the retry shows it as it reads now.
    await t.db.query('UPDATE bookings SET surname = $2 WHERE id = $1', [created[0]!.id, 'King']);
    await ageKey('lost-booking');

    const retry = await send('bookings', body, 'lost-booking');
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toMatchObject({ id: created[0]!.id, surname: 'King', total: 4200, reference: 'LOST-ANSWER-1' });
    expect(await t.db.query(`SELECT id FROM bookings WHERE reference = 'LOST-ANSWER-1'`)).toHaveLength(1);
  });

  it('channel: a retry with the key is answered with the channel, and nothing is created twice', async () => {
    const body = { name: 'Lost Answer Tours', currencies: 'EUR' };
    const first = await send('channels', body, 'lost-channel');
    expect(first.statusCode).toBe(500);
    const created = await t.db.query<{ id: number }>(`SELECT id FROM channels WHERE name = 'Lost Answer Tours'`);
    expect(created).toHaveLength(1);
    await ageKey('lost-channel');

    const retry = await send('channels', body, 'lost-channel');
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toMatchObject({ id: created[0]!.id, name: 'Lost Answer Tours', currencies: 'EUR' });
    expect(await t.db.query(`SELECT id FROM channels WHERE name = 'Lost Answer Tours'`)).toHaveLength(1);
  });

  it('chargeback: a retry with the key is answered with the recorded chargeback, and nothing is charged back twice', async () => {
    const operator = await addUser(t.db, shop.site.siteId, { role: 'member_admin', platformAdmin: true });
    const booking = await createBooking(t, shop, { total: 3000 });
    const payment = (await post(t, shop, purchaseBody(shop, booking, 3000))).json();
    expect(payment.status).toBe('complete');
    const body = { transaction_types: 'chargeback', linked_id: payment.id, total: 1000 };
    const send = () => t.app.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: { ...operator.headers, 'idempotency-key': 'lost-chargeback' }, payload: body });
    const first = await send();
    expect(first.statusCode).toBe(500);
    const recorded = await t.db.query<{ id: number }>(`SELECT id FROM transactions WHERE linked_id = $1 AND type = 'chargeback'`, [payment.id]);
    expect(recorded).toHaveLength(1);
    await ageKey('lost-chargeback');

    const retry = await send();
    expect([retry.statusCode, retry.headers['idempotent-replayed']], retry.body).toEqual([201, 'true']);
    expect(retry.headers.location).toMatch(new RegExp(`/transactions/${recorded[0]!.id}$`));
    expect(retry.json()).toMatchObject({ id: recorded[0]!.id, transaction_types: 'chargeback', total: 1000, linked_id: payment.id });
    expect(await t.db.query(`SELECT id FROM transactions WHERE linked_id = $1 AND type = 'chargeback'`, [payment.id])).toHaveLength(1);
  });

  it('a refused create notes nothing on its key: the refusal is stored and replayed as before', async () => {
    // Past the schema (a key is claimed), refused by the domain: no such channel.
    const body = { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2027-03-01', total: 4200, currencies: 'USD', countries: 'GB', channels: 99_999_999 };
    const first = await send('bookings', body, 'refused-booking');
    const again = await send('bookings', body, 'refused-booking');
    expect(first.statusCode).toBe(400);
    expect(again.statusCode).toBe(400);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await t.db.query(`SELECT resource_id FROM idempotency_keys WHERE key = 'refused-booking'`)).toEqual([{ resource_id: null }]);
  });

  it('channels of one name created at once under keys (each in its own database transaction) all get a slug of their own', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => send('channels', { name: 'Same Name', currencies: 'USD' }, `same-name-${index}`)));
    expect(answers.map((answer) => answer.statusCode), answers.map((answer) => answer.body).join('\n')).toEqual([201, 201, 201, 201, 201, 201]);
    const slugs = answers.map((answer) => answer.json().slug as string);
    expect(new Set(slugs).size).toBe(6);
    expect(slugs.sort()).toEqual(['same-name', 'same-name-2', 'same-name-3', 'same-name-4', 'same-name-5', 'same-name-6']);
  });
});
