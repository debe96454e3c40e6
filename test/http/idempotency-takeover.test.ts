import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestContext } from '../support/context.js';
import { buildApp, type App } from '../../src/app.js';
import { createAppContext } from '../../src/context.js';
import { requireAccess } from '../../src/http/auth.js';
import { limits } from '../../src/limits.js';
import { requestFingerprint } from '../../src/http/idempotency.js';
import { addUser } from '../support/fixtures.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { createDb, type Db } from '../../src/storage/db.js';
import { bookingRow, createBooking, createShop, paymentsContext, purchaseBody, type Body, type Shop } from '../payments/support.js';

// A request that claimed its Idempotency-Key and died before noting anything on it (refused
// before its attempt, its process killed before the refusal was stored) left the key in flight
// with no transaction and no resource. A retry was told 409 rest_idempotency_conflict for the
// key's 48 hours, and the client could only pay under a new key. On the routes that note every
// effect on the key in the effect's own database transaction (idempotencyEffectNoted), such a key
// past the dead-request bound (idempotencyWaitMs + processor timeout) provably did nothing: the
// retry takes it over and runs, once (docs/payments.md "Idempotency").
let t: TestContext;
let shop: Shop;
let secondDb: Db;
let second: App;
let unnotedRuns = 0;
beforeAll(async () => {
  t = await paymentsContext({ poolSize: 16 });
  shop = await createShop(t);
  // A second server process on the same database (WORKERS=2), with one route more that notes
  // nothing on its key: what a route without idempotencyEffectNoted is.
  secondDb = createDb(t.config.databaseUrl!, 8);
  second = await buildApp({ context: createAppContext(t.config, secondDb, { connector: t.context.connector }), logger: false });
  second.post('/:path/site-json/vendor/v2/unnoted', { onRequest: requireAccess({ db: secondDb, jwtSecret: t.config.secrets.jwtSecret }) }, async (_request, reply) => {
    unnotedRuns += 1;
    return reply.code(201).send({ ran: true });
  });
  await second.ready();
});
afterAll(async () => {
  await second.close();
  await secondDb.close();
  await t.close();
});

const send = (app: App, path: string, body: Body, key: string) =>
  app.inject({ method: 'POST', url: `${shop.base}/${path}`, headers: { ...shop.site.headers, 'idempotency-key': key }, payload: body });

/** The key as its request left it when it died before noting anything; `age` since its claim. */
const leftInFlight = (path: string, body: Body, key: string, age: string) => t.db.query(
  `INSERT INTO idempotency_keys (site_id, key, request_hash, status, created_at) VALUES ($1, $2, $3, 'in_flight', now() - $4::interval)`,
  [shop.site.siteId, key, requestFingerprint('POST', `${shop.base}/${path}`, body), age],
);

/** Approved authorisations at the bank for the booking's transactions. */
const charges = async (booking: number) => (await t.db.one<{ count: number }>(
  `SELECT count(*)::int AS count FROM transactions t JOIN sandbox_operations o ON o.reference = t.uuid::text
    WHERE t.id = ANY ((SELECT transaction_ids FROM bookings WHERE id = $1)::bigint[]) AND o.kind = 'authorise' AND o.status = 'approved'`, [booking])).count;

describe('a key left in flight by a request that died having noted nothing', () => {
  it('a payment retried past the bound runs under its key: 201, one transaction, one charge, the ledger balanced', async () => {
    const booking = await createBooking(t, shop, { total: 1_500 });
    const body = purchaseBody(shop, booking, 1_500);
    await leftInFlight('transactions', body, 'dead-purchase', '1 hour');

    const retry = await send(t.app, 'transactions', body, 'dead-purchase');
    expect([retry.statusCode, retry.headers['idempotent-replayed']], retry.body).toEqual([201, undefined]);
    expect(retry.json()).toMatchObject({ status: 'complete', total: 1_500 });
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: 1_500, transaction_ids: [retry.json().id] });
    expect(await charges(booking)).toBe(1);
    // Claimed afresh by the attempt, with its transaction, and answered: the next retry is a replay.
    expect(await t.db.query(`SELECT status, transaction_id, created_at > now() - interval '1 minute' AS fresh FROM idempotency_keys WHERE key = 'dead-purchase'`))
      .toEqual([{ status: 'done', transaction_id: retry.json().id, fresh: true }]);
    const again = await send(second, 'transactions', body, 'dead-purchase');
    expect([again.statusCode, again.headers['idempotent-replayed'], again.json().id]).toEqual([201, 'true', retry.json().id]);
    expect(await charges(booking)).toBe(1);
    expect(await verifyLedger(t.db, { siteId: shop.site.siteId })).toMatchObject({ ok: true, problems: [] });
  });

  it('two retries at once, in two processes, make one payment: the other is answered with it', async () => {
    const booking = await createBooking(t, shop, { total: 2_000 });
    const body = purchaseBody(shop, booking, 2_000);
    await leftInFlight('transactions', body, 'dead-twice', '1 hour');

    const answers = await Promise.all([send(t.app, 'transactions', body, 'dead-twice'), send(second, 'transactions', body, 'dead-twice')]);
    expect(answers.map((answer) => answer.statusCode), answers.map((answer) => answer.body).join('\n')).toEqual([201, 201]);
    expect(answers.map((answer) => answer.headers['idempotent-replayed']).sort()).toEqual(['true', undefined]);
    const [paid] = answers.map((answer) => answer.json().id as number);
    expect(answers.map((answer) => answer.json().id)).toEqual([paid, paid]);
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: 2_000, transaction_ids: [paid] });
    expect(await charges(booking)).toBe(1);
    expect(await verifyLedger(t.db, { siteId: shop.site.siteId })).toMatchObject({ ok: true, problems: [] });
  });

  it('a booking retried past the bound is created under its key, once', async () => {
    const body = { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-03-01', total: 4200, currencies: 'USD', countries: 'GB', channels: shop.channelId, reference: 'DEAD-KEY-1' };
    await leftInFlight('bookings', body, 'dead-booking', '1 hour');
    const answers = await Promise.all([send(t.app, 'bookings', body, 'dead-booking'), send(second, 'bookings', body, 'dead-booking')]);
    expect(answers.map((answer) => answer.statusCode), answers.map((answer) => answer.body).join('\n')).toEqual([201, 201]);
    const created = await t.db.query<{ id: number }>(`SELECT id FROM bookings WHERE reference = 'DEAD-KEY-1'`);
    expect(created).toHaveLength(1);
    expect(answers.map((answer) => answer.json().id)).toEqual([created[0]!.id, created[0]!.id]);
  });

  it('a chargeback retried past the bound is recorded under its key, once', async () => {
    const operator = await addUser(t.db, shop.site.siteId, { role: 'member_admin', platformAdmin: true });
    const booking = await createBooking(t, shop, { total: 3_000 });
    const payment = (await send(t.app, 'transactions', purchaseBody(shop, booking, 3_000), 'chargeback-payment')).json();
    const body = { transaction_types: 'chargeback', linked_id: payment.id, total: 1_000 };
    await leftInFlight('transactions', body, 'dead-chargeback', '1 hour');
    const record = (app: App) => app.inject({ method: 'POST', url: `${shop.base}/transactions`, headers: { ...operator.headers, 'idempotency-key': 'dead-chargeback' }, payload: body });
    const answers = await Promise.all([record(t.app), record(second)]);
    expect(answers.map((answer) => answer.statusCode), answers.map((answer) => answer.body).join('\n')).toEqual([201, 201]);
    const recorded = await t.db.query<{ id: number }>(`SELECT id FROM transactions WHERE linked_id = $1 AND type = 'chargeback'`, [payment.id]);
    expect(recorded).toHaveLength(1);
    expect(answers.map((answer) => answer.json().id)).toEqual([recorded[0]!.id, recorded[0]!.id]);
    expect(await verifyLedger(t.db, { siteId: shop.site.siteId })).toMatchObject({ ok: true, problems: [] });
  });

  it('a key younger than the bound is still waited for, never taken over: the retry gets its answer when it comes', async () => {
    const booking = await createBooking(t, shop, { total: 700 });
    const body = purchaseBody(shop, booking, 700);
    await leftInFlight('transactions', body, 'live-key', '0 seconds');
    const retry = send(t.app, 'transactions', body, 'live-key');
    // A while later (the retry reads the key meanwhile) the first request answers, refused.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await t.db.query(
      `UPDATE idempotency_keys SET status = 'done', response_status = 400, response_headers = '{"content-type": "application/json; charset=utf-8"}', response_body = '{"code":"rest_invalid_param"}' WHERE key = 'live-key'`,
    );
    const answer = await retry;
    expect([answer.statusCode, answer.headers['idempotent-replayed'], answer.json()]).toEqual([400, 'true', { code: 'rest_invalid_param' }]);
    expect(await bookingRow(t, booking)).toMatchObject({ total_paid: 0, transaction_ids: [] });
  });

  it('a key younger than the bound whose retry has waited its whole wait is still 409, and nothing runs', async () => {
    // The wait shortened to a second for this file's process (the bound with it: 1 s + the 10 s
    // processor timeout), so the test does not wait 30 s; the key is two seconds old.
    const wait = limits.idempotencyWaitMs;
    (limits as { idempotencyWaitMs: number }).idempotencyWaitMs = 1_000;
    try {
      const booking = await createBooking(t, shop, { total: 900 });
      const body = purchaseBody(shop, booking, 900);
      await leftInFlight('transactions', body, 'young-key', '2 seconds');
      const retry = await send(t.app, 'transactions', body, 'young-key');
      expect([retry.statusCode, retry.json()]).toEqual([409, { code: 'rest_idempotency_conflict', message: expect.any(String), data: { status: 409 } }]);
      expect(await bookingRow(t, booking)).toMatchObject({ total_paid: 0, transaction_ids: [] });
      expect(await t.db.query(`SELECT status FROM idempotency_keys WHERE key = 'young-key'`)).toEqual([{ status: 'in_flight' }]);
    } finally {
      (limits as { idempotencyWaitMs: number }).idempotencyWaitMs = wait;
    }
  });

  it('a route that does not note its effect on the key still answers 409 and does not run', async () => {
    await leftInFlight('unnoted', {}, 'dead-unnoted', '1 hour');
    const retry = await send(second, 'unnoted', {}, 'dead-unnoted');
    expect([retry.statusCode, retry.json().code]).toEqual([409, 'rest_idempotency_conflict']);
    expect(unnotedRuns).toBe(0);
    // Not that the route cannot run: under a new key it does.
    expect((await send(second, 'unnoted', {}, 'fresh-unnoted')).statusCode).toBe(201);
    expect(unnotedRuns).toBe(1);
  });

  it('a request that outlived the bound and was taken over cannot note its effect nor store its answer on the retry\'s claim', async () => {
    // The first request is held inside its booking's insert (a lock the test holds) while the key
    // is taken over, as a retry would after the bound; then it goes on.
    await t.db.query(`CREATE FUNCTION hold_booking() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NEW; END $$`);
    await t.db.query(`CREATE TRIGGER hold_booking BEFORE INSERT ON bookings FOR EACH ROW WHEN (NEW.reference = 'OUTLIVED-1') EXECUTE FUNCTION hold_booking()`);
    try {
      const body = { firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', date: '2031-03-01', total: 4200, currencies: 'USD', countries: 'GB', channels: shop.channelId, reference: 'OUTLIVED-1' };
      let outlived: ReturnType<typeof send> | undefined;
      await t.db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(4242)');
        outlived = send(t.app, 'bookings', body, 'outlived');
        await vi.waitFor(async () => expect(await t.db.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted`)).toHaveLength(1), { timeout: 10_000, interval: 20 });
        // The retry's takeover: the dead claim freed and the key claimed afresh.
        await t.db.query(`DELETE FROM idempotency_keys WHERE key = 'outlived'`);
        await leftInFlight('bookings', body, 'outlived', '0 seconds');
      });
      const answer = await outlived!;
      expect(answer.statusCode).toBe(500);
      expect(await t.db.query(`SELECT id FROM bookings WHERE reference = 'OUTLIVED-1'`)).toEqual([]);
      expect(await t.db.query(`SELECT status, resource_id, response_status FROM idempotency_keys WHERE key = 'outlived'`)).toEqual([{ status: 'in_flight', resource_id: null, response_status: null }]);
    } finally {
      await t.db.query('DROP TRIGGER hold_booking ON bookings; DROP FUNCTION hold_booking()');
    }
  });
});
