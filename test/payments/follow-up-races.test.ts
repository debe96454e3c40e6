import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestContext } from '../support/context.js';
import { addUser } from '../support/fixtures.js';
import { buildApp, type App } from '../../src/app.js';
import { createAppContext, type AppContext } from '../../src/context.js';
import { createDb, type Db } from '../../src/storage/db.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { bankHolds, bookingRow, createBooking, createShop, get, paymentsContext, post, purchaseBody, type Shop } from './support.js';

// Races of the brief's list not covered by concurrency.test.ts: what the operator's chargeback
// finds while a refund of the same payment is at the bank, two captures of one authorisation, and
// one Idempotency-Key with different bodies sent to two server processes on one database.
let t: TestContext;
let shop: Shop;
let operator: Shop;
let secondDb: Db;
let secondContext: AppContext;
let second: App;
let holdRefunds: ReturnType<typeof bankHolds>;
beforeAll(async () => {
  t = await paymentsContext({ poolSize: 20, env: { PROCESSOR_TIMEOUT_MS: '20000' } });
  shop = await createShop(t);
  const admin = await addUser(t.db, shop.site.siteId, { role: 'member_admin', platformAdmin: true });
  operator = { ...shop, site: { ...shop.site, headers: admin.headers } };
  holdRefunds = bankHolds(t, 'refund');
  // A second server process: its own pool and batches, as WORKERS=2 runs.
  secondDb = createDb(t.config.databaseUrl!, 8);
  secondContext = createAppContext(t.config, secondDb, { connector: t.context.connector });
  second = await buildApp({ context: secondContext, logger: false });
  await second.ready();
});
afterAll(async () => {
  await second.close();
  await secondContext.close();
  await secondDb.close();
  await t.close();
});

const shares = (booking: number, total: number) => [{ id: booking, currencies: 'USD', total }];
const ledgerProblems = async () => (await verifyLedger(t.db, { siteId: shop.site.siteId })).problems;

describe('follow-ups racing each other', () => {
  it("takes a chargeback recorded while a refund is at the bank from what the refund left, and both reach the books", async () => {
    const booking = await createBooking(t, shop, { total: 5000 });
    const purchase = (await post(t, shop, purchaseBody(shop, booking, 5000))).json();
    const atTheBank = holdRefunds();
    const refunding = post(t, shop, { transaction_types: 'refund', channels: shop.channelId, currencies: 'USD', total: 3000, linked_id: purchase.id, bookings: shares(booking, 3000) });
    await vi.waitFor(() => expect(atTheBank.reached).toBe(true), { timeout: 10_000 });
    // The refund's 3000 is reserved: the network cannot be recorded as taking more than the rest.
    const tooMuch = await post(t, operator, { transaction_types: 'chargeback', linked_id: purchase.id, total: 3000 });
    expect(tooMuch.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { total: expect.stringContaining('2000') } } });
    const chargeback = await post(t, operator, { transaction_types: 'chargeback', linked_id: purchase.id, total: 2000 });
    expect(chargeback.json()).toMatchObject({ status: 'complete', total_remaining: 2000 });
    atTheBank.release();
    const refund = (await refunding).json();
    expect(refund).toMatchObject({ status: 'complete', total: 3000 });
    // Each record's mails are requested once, for its settled status.
    const mails = await t.db.query('SELECT transaction_id, status FROM mail_requests WHERE transaction_id = ANY($1::bigint[]) ORDER BY transaction_id', [[refund.id, chargeback.json().id]]);
    expect(mails).toEqual([refund.id, chargeback.json().id].sort((a, b) => a - b).map((id) => ({ transaction_id: id, status: 'complete' })));
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ status: 'locked', total_remaining: 0 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'locked', total_paid: 0, locked_transactions: 1 });
    // The dispute won: the 2000 comes back to the payment and the booking, which unlock.
    expect((await post(t, operator, { transaction_types: 'chargeback-reversal', linked_id: purchase.id, total: 2000 })).statusCode).toBe(201);
    expect((await get(t, shop, `/transactions/${purchase.id}`)).json()).toMatchObject({ status: 'complete', total_remaining: 2000 });
    expect(await bookingRow(t, booking)).toMatchObject({ status: 'partial-payment', total_paid: 2000, locked_transactions: 0 });
    expect(await ledgerProblems()).toEqual([]);
  });

  it('captures an authorisation once when two captures race; the other is told it is captured', async () => {
    const booking = await createBooking(t, shop, { total: 5000 });
    const authorization = (await post(t, shop, { transaction_types: 'authorize', channels: shop.channelId, currencies: 'USD', total: 5000, token: 'tok_visa', bookings: shares(booking, 5000) })).json();
    const capture = (total: number, app: App) => app.inject({
      method: 'POST', url: `${shop.base}/transactions`, headers: shop.site.headers,
      payload: { transaction_types: 'capture', channels: shop.channelId, currencies: 'USD', total, linked_id: authorization.id, bookings: shares(booking, total) },
    });
    const answers = await Promise.all([capture(3000, t.app), capture(5000, second)]);
    const captured = answers.filter((answer) => answer.statusCode === 201);
    expect(captured).toHaveLength(1);
    const refused = answers.find((answer) => answer.statusCode !== 201)!;
    expect(refused.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { linked_id: 'The authorisation has already been captured or voided.' } } });
    const total = captured[0]!.json().total as number;
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: total, total_authorized: 0 });
    expect((await get(t, shop, `/transactions/${authorization.id}`)).json()).toMatchObject({ total_remaining: 0, adjustments: [captured[0]!.json().id] });
    expect(await ledgerProblems()).toEqual([]);
  });

  it('makes one payment of one Idempotency-Key sent with different bodies to two processes; the others are 409', async () => {
    const booking = await createBooking(t, shop, { total: 100_000 });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => (index % 2 === 0 ? t.app : second).inject({
      method: 'POST', url: `${shop.base}/transactions`, headers: { ...shop.site.headers, 'idempotency-key': 'order-17' }, payload: purchaseBody(shop, booking, 1000 + index),
    })));
    const paid = answers.filter((answer) => answer.statusCode === 201);
    expect(paid).toHaveLength(1);
    for (const answer of answers.filter((candidate) => candidate.statusCode !== 201)) {
      expect(answer.json()).toMatchObject({ code: 'rest_idempotency_conflict', data: { status: 409 } });
    }
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: paid[0]!.json().total, transaction_ids: [paid[0]!.json().id] });
  });
});
