import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import type { TestContext } from '../support/context.js';
import { pageSessionOf } from '../support/fixtures.js';
import { raceOnRow } from '../support/lock-race.js';
import { addChannel, bookingRow, createBooking, post, purchaseBody, shopContext, type Body, type Shop } from './support.js';

// A payment reads its channel (currency, mode) when it is prepared, without locks, then records its
// attempt. A PUT changing the channel's currency, or switching it between test and live, that
// committed in between found no money on the channel yet and went through: the payment was then
// recorded and charged in the old currency, or as test money on a live channel. The race is made
// certain by holding the channel's row lock (as updateChannel does) while the payment waits for it,
// and changing the channel as the PUT would before letting it go.
let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  ({ t, shop } = await shopContext());
});
afterAll(async () => t.close());

/** Runs `change` on `channel` while the payment `body` waits for the channel's lock; the payment's answer. */
function payRacing(channel: number, body: Body, change: string) {
  return raceOnRow(t.db, { table: 'channels', id: channel, request: () => post(t, shop, body), change: { sql: change, values: [channel] } });
}

const recordedOn = async (channel: number) =>
  (await t.db.query('SELECT 1 FROM transactions WHERE channel_id = $1 UNION ALL SELECT 1 FROM ledger_entries WHERE channel_id = $1', [channel])).length;
const sandboxCalls = async (amount: number) => (await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM sandbox_operations WHERE amount = $1', [amount])).count;
const refusal = { code: 'rest_invalid_param', message: expect.any(String), data: { status: 400, params: { channels: expect.stringContaining('while this payment was being prepared; nothing was charged') } } };

describe('a channel changed while a payment on it was being prepared', () => {
  it('currency changed: the vaulting in the old currency is refused and nothing is recorded', async () => {
    const channel = await addChannel(t, shop);
    const response = await payRacing(channel, { transaction_types: 'vault', channels: channel, currencies: 'USD', total: 0, token: 'tok_visa' }, `UPDATE channels SET currency = 'EUR' WHERE id = $1`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(refusal);
    expect(await recordedOn(channel)).toBe(0);
  });

  it('switched from test to live (draft): the test-card purchase is refused, nothing is charged or recorded', async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 3107 });
    const response = await payRacing(channel, purchaseBody(shop, booking, 3107, { channels: channel }), `UPDATE channels SET account_mode = 'draft' WHERE id = $1`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(refusal);
    expect(await recordedOn(channel)).toBe(0);
    expect(await sandboxCalls(3107)).toBe(0);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0, transaction_ids: [] });
  });

  it('deleted: the vaulting is refused and nothing is recorded on the deleted channel', async () => {
    const channel = await addChannel(t, shop);
    const response = await payRacing(channel, { transaction_types: 'vault', channels: channel, currencies: 'USD', total: 0, token: 'tok_visa' }, 'UPDATE channels SET deleted_at = now() WHERE id = $1');
    expect(response.json()).toEqual(refusal);
    expect(await recordedOn(channel)).toBe(0);
  });

  it('switched to live under a payment of the hosted payment request page: refused, nothing charged', async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 3108 });
    const linked = await t.app.inject({ method: 'PUT', url: `${shop.base}/bookings/${booking}`, headers: shop.site.headers, payload: { payment_request_url: true } });
    const page = await t.app.inject({ url: new URL(linked.json()._links.self[0].payment_request as string).pathname });
    const session = pageSessionOf(page.body)!;
    const pay = () => t.app.inject({ method: 'POST', url: '/hosted/payments', headers: { authorization: `Bearer ${session}` }, payload: { card_token: 'tok_visa' } });
    const response = await raceOnRow(t.db, { table: 'channels', id: channel, request: pay, change: { sql: `UPDATE channels SET account_mode = 'draft' WHERE id = $1`, values: [channel] } });
    expect(response.json()).toEqual(refusal);
    expect(await recordedOn(channel)).toBe(0);
    expect(await sandboxCalls(3108)).toBe(0);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0, transaction_ids: [] });
  });

  it('changed otherwise (renamed): the payment waits for the lock and goes through', async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 3109 });
    const response = await payRacing(channel, purchaseBody(shop, booking, 3109, { channels: channel }), `UPDATE channels SET name = 'Renamed' WHERE id = $1`);
    expect(response.json()).toMatchObject({ status: 'complete', channels: channel });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'paid', total_paid: 3109 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });
});

// The same race for the operator's `channel_status` (`trustfare channel set --channel-status`,
// which locks the row FOR UPDATE as updateChannel does): a channel closed or locked between the
// payment's read and its insert took the payment. Now it is refused as the read refuses it;
// refunds and voids, which a closed channel still takes, go through.
describe('a channel closed or locked while a payment on it was being prepared', () => {
  const statusRefusal = (reason: string) => ({ code: 'rest_invalid_param', message: expect.any(String), data: { status: 400, params: { channels: `The channel is ${reason} and takes no payments.` } } });

  it('locked: the purchase is refused as on a locked channel, nothing is charged or recorded', async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 3110 });
    const response = await payRacing(channel, purchaseBody(shop, booking, 3110, { channels: channel }), `UPDATE channels SET channel_status = 'locked' WHERE id = $1`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(statusRefusal('locked'));
    expect(await recordedOn(channel)).toBe(0);
    expect(await sandboxCalls(3110)).toBe(0);
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0, transaction_ids: [] });
  });

  it('closed: the vaulting is refused as on a closed channel and nothing is recorded', async () => {
    const channel = await addChannel(t, shop);
    const response = await payRacing(channel, { transaction_types: 'vault', channels: channel, currencies: 'USD', total: 0, token: 'tok_visa' }, `UPDATE channels SET channel_status = 'closed' WHERE id = $1`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(statusRefusal('closed'));
    expect(await recordedOn(channel)).toBe(0);
  });

  it('locked under a capture: refused as on a locked channel, and the whole authorisation can still be voided', async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 3112 });
    const onBooking = (fields: Body): Body => ({ channels: channel, currencies: 'USD', total: 3112, bookings: [{ id: booking, currencies: 'USD', total: 3112 }], ...fields });
    const authorization = (await post(t, shop, onBooking({ transaction_types: 'authorize', token: 'tok_visa' }))).json();
    expect(authorization.status).toBe('complete');
    const response = await payRacing(channel, onBooking({ transaction_types: 'capture', linked_id: authorization.id }), `UPDATE channels SET channel_status = 'locked' WHERE id = $1`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ ...statusRefusal('locked'), data: { status: 400, params: { channels: 'The channel is locked and takes no payments; void the authorisation to release the held amount.' } } });
    // Nothing of the capture stayed reserved on the authorisation: all of it is voided.
    const voided = await post(t, shop, onBooking({ transaction_types: 'void', linked_id: authorization.id }));
    expect(voided.json()).toMatchObject({ status: 'complete', total: 3112 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'unpaid', total_paid: 0, total_authorized: 0 });
  });

  it('closed under a refund: the refund goes through', async () => {
    const channel = await addChannel(t, shop);
    const booking = await createBooking(t, shop, { channelId: channel, total: 3111 });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, 3111, { channels: channel }))).json();
    expect(purchase.status).toBe('complete');
    const refund = { transaction_types: 'refund', channels: channel, currencies: 'USD', total: 1000, linked_id: purchase.id, bookings: [{ id: booking, currencies: 'USD', total: 1000 }] };
    const response = await payRacing(channel, refund, `UPDATE channels SET channel_status = 'closed' WHERE id = $1`);
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ status: 'complete', linked_id: purchase.id });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'partial-payment', total_paid: 2111 });
  });
});

describe('a PUT of the channel while a payment on it records its attempt', () => {
  it('waits for the attempt to commit, then refuses a new currency and a switch to live', async () => {
    const channel = await addChannel(t, shop);
    const put = (payload: Body) => t.app.inject({ method: 'PUT', url: `${shop.base}/channels/${channel}`, headers: shop.site.headers, payload });
    // The attempt's insert as a payment makes it: the channel key-share-locked until it commits.
    const attempt: pg.PoolClient = await t.db.pool.connect();
    try {
      await attempt.query('BEGIN');
      await attempt.query('SELECT 1 FROM channels WHERE id = $1 FOR KEY SHARE', [channel]);
      await attempt.query(`INSERT INTO transactions (site_id, channel_id, type, status, total, currency) VALUES ($1, $2, 'vault', 'incomplete', 0, 'USD')`, [shop.site.siteId, channel]);
      const replies = Promise.all([put({ currencies: 'EUR' }), put({ account_mode: 'draft' })]);
      await lockWaitsReach(2);
      await attempt.query('COMMIT');
      const [currency, mode] = await replies;
      expect(currency.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { currencies: expect.any(String) } } });
      expect(mode.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { account_mode: expect.any(String) } } });
    } finally {
      attempt.release();
    }
    expect(await t.db.one('SELECT currency, account_mode FROM channels WHERE id = $1', [channel])).toEqual({ currency: 'USD', account_mode: 'test' });
  });
});

/** Until `count` backends of this database wait for a lock; bounded (5 s), the assertions then tell what happened. */
async function lockWaitsReach(count: number): Promise<void> {
  for (let poll = 0; poll < 500; poll++) {
    const waiting = await t.db.one<{ count: number }>(`SELECT count(*)::int AS count FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`);
    if (waiting.count >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
