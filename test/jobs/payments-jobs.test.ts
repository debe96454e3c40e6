import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connector } from '../../src/processor/connector.js';
import { expirePendingTransactions, purgeExpiredIdempotencyKeys, reconcileIncompleteTransactions } from '../../src/jobs/payments.js';
import type { TestContext } from '../support/context.js';
import { limits } from '../../src/limits.js';
import { bookingRow, createBooking, createShop, get, paymentsContext, post, purchaseBody, type Shop } from '../payments/support.js';
import { statisticsSayEmpty } from '../support/statistics.js';
import { buildStatement } from '../../src/domain/statements/index.js';

// A controlled clock: the jobs compare ages with context.now().
let clockMs = Date.UTC(2026, 5, 1, 12, 0, 0);
const advanceMinutes = (minutes: number) => {
  clockMs += minutes * 60_000;
};

let t: TestContext;
let shop: Shop;
beforeAll(async () => {
  // A short processor timeout so the no-answer card leaves its transaction `incomplete` quickly.
  t = await paymentsContext({ now: () => new Date(clockMs), env: { PROCESSOR_TIMEOUT_MS: '400', SANDBOX_NO_ANSWER_MS: '1500' } });
  shop = await createShop(t);
  // One purchase first, outside the tests: the first processor call of a process (modules, the
  // sandbox pool's connections) can take longer than the 400 ms timeout on a loaded machine, and
  // left the first test's frictionless purchase `incomplete` (seen with six test runs at once).
  const warmUp = await createBooking(t, shop, { total: 100 });
  await post(t, shop, purchaseBody(shop, warmUp, 100, { token: 'tok_visa' }));
});
afterAll(async () => t.close());

async function challengeFor(total: number, extra: Record<string, unknown> = {}) {
  const booking = await createBooking(t, shop, { total });
  const body = purchaseBody(shop, booking, total, { token: 'tok_visa_3ds_challenge', attempt_3ds: true, ...extra });
  const key = { 'idempotency-key': `challenge-${booking}` };
  const response = await post(t, shop, body, key);
  expect(response.statusCode).toBe(201);
  return { booking, transaction: response.json(), retry: () => post(t, shop, body, key) };
}

describe('3-D Secure', () => {
  it('completes a frictionless purchase at once', async () => {
    const booking = await createBooking(t, shop, { total: 1500 });
    const transaction = (await post(t, shop, purchaseBody(shop, booking, 1500, { token: 'tok_mastercard_3ds_frictionless', attempt_3ds: true }))).json();
    expect(transaction).toMatchObject({ status: 'complete', '3ds_response': { status: 'frictionless', challenge_url: null } });
  });

  it('records a card outside 3-D Secure as not enrolled, approved without authentication', async () => {
    const booking = await createBooking(t, shop, { total: 1600 });
    const transaction = (await post(t, shop, purchaseBody(shop, booking, 1600, { token: 'tok_visa', attempt_3ds: true }))).json();
    expect(transaction).toMatchObject({ status: 'complete', '3ds_response': { status: 'not_enrolled', challenge_url: null } });
  });

  it('leaves a challenged purchase pending with its challenge URL, then completes it after the cardholder authenticates', async () => {
    const { booking, transaction, retry } = await challengeFor(2500, { redirect_url: 'https://shop.example/done?order=7' });
    expect(transaction).toMatchObject({ status: 'pending', payment_ids: [], '3ds_response': { status: 'challenge', challenge_url: expect.stringContaining('/sandbox/3ds/') } });
    expect(transaction._links.challenge[0].href).toBe(transaction['3ds_response'].challenge_url);
    const challengePath = new URL(transaction['3ds_response'].challenge_url).pathname;
    const page = await t.app.inject({ method: 'POST', url: challengePath, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'result=authenticate' });
    expect(page.statusCode).toBe(303);
    const back = await t.app.inject({ method: 'GET', url: new URL(page.headers.location as string).pathname });
    expect(back.statusCode).toBe(303);
    const target = new URL(back.headers.location as string);
    expect(target.origin + target.pathname).toBe('https://shop.example/done');
    expect(Object.fromEntries(target.searchParams)).toEqual({ order: '7', transaction_id: String(transaction.id), status: 'complete' });
    const settled = (await get(t, shop, `/transactions/${transaction.id}`)).json();
    expect(settled).toMatchObject({ status: 'complete', '3ds_response': { status: 'authenticated', challenge_url: null } });
    expect(settled.payment_ids).toHaveLength(2);
    expect((await bookingRow(t, booking)).status).toBe('paid');
    // A retry with the key shows the outcome, not the finished challenge to send the cardholder to.
    const replay = await retry();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(settled);
  });

  it('charges a card vaulted through a challenge later without one (merchant-initiated); a retained charge takes no attempt_3ds', async () => {
    const vault = (await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: shop.currency, total: 0, token: 'tok_visa_3ds_challenge', attempt_3ds: true })).json();
    expect(vault.status).toBe('pending');
    await t.app.inject({ method: 'POST', url: new URL(vault['3ds_response'].challenge_url).pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'result=authenticate' });
    await t.app.inject({ method: 'GET', url: `/3ds/return/${vault.uuid}` });
    expect((await get(t, shop, `/transactions/${vault.id}`)).json().status).toBe('complete');
    const booking = await createBooking(t, shop, { total: 2700 });
    const retained = { transaction_types: 'retained_purchase', channels: shop.channelId, currencies: shop.currency, total: 2700, linked_id: vault.id, bookings: [{ id: booking, currencies: shop.currency, total: 2700 }] };
    const refused = await post(t, shop, { ...retained, attempt_3ds: true });
    expect(refused.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { attempt_3ds: expect.stringContaining('merchant-initiated') } } });
    expect((await bookingRow(t, booking)).transaction_ids).toEqual([]);
    expect((await post(t, shop, retained)).json()).toMatchObject({ status: 'complete', '3ds_response': null });
    expect((await bookingRow(t, booking)).status).toBe('paid');
  });

  it('fails a purchase whose challenge fails, whatever the browser claims', async () => {
    const { booking, transaction } = await challengeFor(3500);
    const forged = await t.app.inject({ method: 'GET', url: `/3ds/return/${transaction.uuid}?status=complete` });
    expect(forged.statusCode).toBe(200);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json().status).toBe('pending');
    const challengePath = new URL(transaction['3ds_response'].challenge_url).pathname;
    await t.app.inject({ method: 'POST', url: challengePath, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'result=fail' });
    const back = await t.app.inject({ method: 'GET', url: `/3ds/return/${transaction.uuid}` });
    expect(back.statusCode).toBe(200);
    expect(back.body).toContain('not completed');
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json()).toMatchObject({ status: 'failed', payment_ids: [] });
    expect((await bookingRow(t, booking)).status).toBe('unpaid');
    expect((await t.app.inject({ method: 'GET', url: '/3ds/return/00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404);
  });

  it("tells the cardholder back from the challenge without a redirect_url how it ended, in the transaction's language", async () => {
    const answer = async (total: number, result: string, language: string) => {
      const { transaction } = await challengeFor(total, { language });
      await t.app.inject({ method: 'POST', url: new URL(transaction['3ds_response'].challenge_url).pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `result=${result}` });
      return (await t.app.inject({ method: 'GET', url: `/3ds/return/${transaction.uuid}` })).body;
    };
    const french = await answer(3_610, 'fail', 'frFR');
    expect(french).toContain('<html lang="fr-FR">');
    expect(french).toContain('Le paiement n’a pas abouti.');
    expect(french).toContain('Vous pouvez fermer cette fenêtre.');
    const german = await answer(3_620, 'authenticate', 'deDE');
    expect(german).toContain('<html lang="de-DE">');
    expect(german).toContain('Zahlung abgeschlossen.');
  });

  it('expires challenges left pending for more than 35 minutes (job), past the processor\'s 30', async () => {
    const { transaction } = await challengeFor(4500);
    advanceMinutes(limits.pendingExpiryMinutes - 1);
    expect((await expirePendingTransactions(t.context)).expired).toBe(0);
    advanceMinutes(2);
    const run = await expirePendingTransactions(t.context);
    expect(run.expired).toBeGreaterThanOrEqual(1);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json()).toMatchObject({ status: 'expired', payment_ids: [] });
    // A second run (or a second process) finds nothing left to do.
    expect((await expirePendingTransactions(t.context)).expired).toBe(0);
  });

  it('does not expire a payment whose challenge the cardholder can still answer at the processor (its record is a little younger than ours)', async () => {
    const { booking, transaction } = await challengeFor(4600);
    const path = new URL(transaction['3ds_response'].challenge_url).pathname;
    // Past the processor's lifetime on our clock, 10 s short of it on the processor's record.
    advanceMinutes(limits.sandboxChallengeLifetimeSeconds / 60 + 1);
    await t.db.query(`UPDATE sandbox_operations SET created_at = now() - make_interval(secs => $2) WHERE challenge_id = $1`, [path.split('/').pop(), limits.sandboxChallengeLifetimeSeconds - 10]);
    expect((await expirePendingTransactions(t.context)).expired).toBe(0);
    // So the cardholder's answer, right then, is the one that counts.
    expect((await t.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'result=authenticate' })).statusCode).toBe(303);
    await t.app.inject({ method: 'GET', url: `/3ds/return/${transaction.uuid}` });
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json()).toMatchObject({ status: 'complete' });
    expect((await bookingRow(t, booking)).status).toBe('paid');
  });
});

describe('reconciliation of incomplete transactions', () => {
  it('waits for the request\'s own processor timeout before looking a row up (a slow answer may still come to the request)', async () => {
    const booking = await createBooking(t, shop, { total: 5600 });
    const transaction = (await post(t, shop, purchaseBody(shop, booking, 5600, { token: 'tok_visa_no_answer' }))).json();
    expect(transaction.status).toBe('incomplete');
    // Past reconcileAfterSeconds alone (all it waited before session 29), not past the timeout too.
    const timeoutMinutes = t.config.processorTimeoutMs / 60_000;
    advanceMinutes(limits.reconcileAfterSeconds / 60 + timeoutMinutes / 2);
    await reconcileIncompleteTransactions(t.context);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json().status).toBe('incomplete');
    advanceMinutes(timeoutMinutes / 2 + 1 / 60);
    await reconcileIncompleteTransactions(t.context);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json().status).toBe('complete');
  });

  it('leaves a purchase the processor does not answer incomplete, then completes it from the processor record', async () => {
    const booking = await createBooking(t, shop, { total: 5500 });
    const body = purchaseBody(shop, booking, 5500, { token: 'tok_visa_no_answer' });
    const key = { 'idempotency-key': 'no-answer-5500' };
    const response = await post(t, shop, body, key);
    expect(response.statusCode).toBe(201);
    const transaction = response.json();
    expect(transaction).toMatchObject({ status: 'incomplete', payment_ids: [] });
    const earlyRetry = await post(t, shop, body, key);
    expect(earlyRetry.headers['idempotent-replayed']).toBe('true');
    expect(earlyRetry.json()).toMatchObject({ id: transaction.id, status: 'incomplete' });
    expect((await bookingRow(t, booking)).transaction_ids).toContain(transaction.id);
    expect((await reconcileIncompleteTransactions(t.context)).completed).toBe(0); // younger than a minute
    advanceMinutes(2);
    const run = await reconcileIncompleteTransactions(t.context);
    expect(run.completed).toBeGreaterThanOrEqual(1);
    const settled = (await get(t, shop, `/transactions/${transaction.id}`)).json();
    expect(settled).toMatchObject({ status: 'complete', total_remaining: 5500 });
    expect(settled.payment_ids).toHaveLength(2);
    expect((await bookingRow(t, booking)).status).toBe('paid');
    // The client that retries with its key learns the outcome the first answer could not give.
    const retry = await post(t, shop, body, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers.location).toBe(response.headers.location);
    expect(retry.json()).toEqual(settled);
  });

  it('fails a transaction the processor never received, after the give-up bound', async () => {
    const sandbox = t.context.connector;
    const lost: Connector = { ...sandbox, name: 'lossy', authorise: async () => Promise.reject(new Error('connection reset')), lookup: (reference) => sandbox.lookup(reference) };
    t.context.connector = lost;
    const booking = await createBooking(t, shop, { total: 6500 });
    const transaction = (await post(t, shop, purchaseBody(shop, booking, 6500))).json();
    t.context.connector = sandbox;
    expect(transaction.status).toBe('incomplete');
    advanceMinutes(2);
    expect((await reconcileIncompleteTransactions(t.context)).unresolved).toBeGreaterThanOrEqual(1);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json().status).toBe('incomplete');
    advanceMinutes(60);
    await reconcileIncompleteTransactions(t.context);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json()).toMatchObject({ status: 'failed', payment_ids: [] });
    expect((await bookingRow(t, booking)).status).toBe('unpaid');
  });
});

describe('a processor that does not answer its look-ups', () => {
  // Every look-up hangs past the job's bound: the job knows nothing, so it may decide nothing.
  const silent = (): Connector => ({ ...t.context.connector, name: 'silent', lookup: () => new Promise(() => undefined) });

  it('never fails an approved charge for it, however long the silence: the booking cannot be charged twice', async () => {
    const sandbox = t.context.connector;
    const booking = await createBooking(t, shop, { total: 7500 });
    t.context.connector = { ...sandbox, name: 'slow', authorise: async (request) => { await sandbox.authorise(request); return new Promise(() => undefined); } };
    const transaction = (await post(t, shop, purchaseBody(shop, booking, 7500))).json();
    expect(transaction.status).toBe('incomplete');
    t.context.connector = silent();
    advanceMinutes(limits.reconcileGiveUpMinutes + 5);
    expect((await reconcileIncompleteTransactions(t.context)).unresolved).toBeGreaterThanOrEqual(1);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json().status).toBe('incomplete');
    const again = await post(t, shop, purchaseBody(shop, booking, 7500));
    expect(again.json()).toMatchObject({ code: 'rest_invalid_param', data: { params: { bookings: expect.stringContaining('above its total') } } });
    // Once it answers, the charge is settled from its record.
    t.context.connector = sandbox;
    await reconcileIncompleteTransactions(t.context);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json().status).toBe('complete');
    expect((await bookingRow(t, booking)).status).toBe('paid');
  }, 60_000);

  it('does not expire a challenge the cardholder may have passed while the look-up goes unanswered', async () => {
    const sandbox = t.context.connector;
    const { booking, transaction } = await challengeFor(8500);
    await t.app.inject({ method: 'POST', url: new URL(transaction['3ds_response'].challenge_url).pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'result=authenticate' });
    t.context.connector = silent();
    advanceMinutes(limits.pendingExpiryMinutes + 5);
    expect((await expirePendingTransactions(t.context)).unresolved).toBeGreaterThanOrEqual(1);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json().status).toBe('pending');
    t.context.connector = sandbox;
    await expirePendingTransactions(t.context);
    expect((await get(t, shop, `/transactions/${transaction.id}`)).json().status).toBe('complete');
    expect((await bookingRow(t, booking)).status).toBe('paid');
  }, 60_000);
});

describe('reconciliation order', () => {
  it('looks a newer transaction up before ones it already looked up in vain, however many those are', async () => {
    // A processor outage: calls that never reached it leave incomplete rows it has no record of,
    // which stay incomplete for limits.reconcileGiveUpMinutes. A later purchase whose answer was
    // only lost must not wait behind them for that hour.
    const sandbox = t.context.connector;
    t.context.connector = { ...sandbox, name: 'lossy', authorise: async () => Promise.reject(new Error('connection reset')), lookup: (reference) => sandbox.lookup(reference) };
    try {
      for (let index = 0; index < 3; index++) {
        const booking = await createBooking(t, shop, { total: 700 + index });
        expect((await post(t, shop, purchaseBody(shop, booking, 700 + index))).json().status).toBe('incomplete');
      }
    } finally {
      t.context.connector = sandbox;
    }
    advanceMinutes(1);
    const booking = await createBooking(t, shop, { total: 7100 });
    const answerLost = (await post(t, shop, purchaseBody(shop, booking, 7100, { token: 'tok_visa_no_answer' }))).json();
    expect(answerLost.status).toBe('incomplete');
    advanceMinutes(2);
    const { older } = await t.db.one<{ older: number }>(`SELECT count(*)::int AS older FROM transactions WHERE status = 'incomplete' AND id <> $1`, [answerLost.id]);
    // Each run examines as many rows as the lookups in vain: the older rows fill the first run.
    expect((await reconcileIncompleteTransactions(t.context, { batchSize: older })).unresolved).toBeGreaterThanOrEqual(1);
    await reconcileIncompleteTransactions(t.context, { batchSize: older });
    expect((await get(t, shop, `/transactions/${answerLost.id}`)).json().status).toBe('complete');
  });
});

describe('processor look-ups of a run', () => {
  it('run up to limits.jobLookupConcurrency at once, and every row is settled', async () => {
    const ids: number[] = [];
    for (let index = 0; index < limits.jobLookupConcurrency + 2; index++) {
      const booking = await createBooking(t, shop, { total: 900 + index });
      const transaction = (await post(t, shop, purchaseBody(shop, booking, 900 + index, { token: 'tok_visa_no_answer' }))).json();
      expect(transaction.status).toBe('incomplete');
      ids.push(transaction.id);
    }
    advanceMinutes(2);
    const sandbox = t.context.connector;
    let inFlight = 0;
    let most = 0;
    // A processor that takes a while to answer each look-up, as a real one over the network does:
    // long enough that the workers' own reads before their look-ups, slow on a loaded machine (the
    // full suite runs two files at once), cannot keep the look-ups from overlapping (at 100 ms one
    // full-suite run saw only 3 at once), and within a processor timeout longer than this file's
    // 400 ms, so no look-up is abandoned while it still counts as in flight.
    const config = t.context.config as { processorTimeoutMs: number };
    const timeoutMs = config.processorTimeoutMs;
    config.processorTimeoutMs = 5_000;
    t.context.connector = {
      ...sandbox,
      lookup: async (reference) => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 500));
        inFlight -= 1;
        return sandbox.lookup(reference);
      },
    };
    try {
      await reconcileIncompleteTransactions(t.context);
    } finally {
      t.context.connector = sandbox;
      config.processorTimeoutMs = timeoutMs;
    }
    expect(most).toBe(limits.jobLookupConcurrency);
    for (const id of ids) expect((await get(t, shop, `/transactions/${id}`)).json().status).toBe('complete');
  });
});

describe('a row the jobs cannot settle', () => {
  it('is set back with its error, and the rows after it are still settled', async () => {
    const answerLost = async (total: number) => {
      const booking = await createBooking(t, shop, { total });
      const transaction = (await post(t, shop, purchaseBody(shop, booking, total, { token: 'tok_visa_no_answer' }))).json();
      expect(transaction.status).toBe('incomplete');
      return transaction.id as number;
    };
    const broken = await answerLost(8100);
    advanceMinutes(1);
    const next = await answerLost(8200);
    advanceMinutes(2);
    // Settling this one row fails, as a bug or a row the code does not expect would.
    await t.db.query(`CREATE FUNCTION test_refuse_settle() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id = ${broken} AND NEW.status <> OLD.status THEN RAISE EXCEPTION 'cannot settle this row'; END IF; RETURN NEW; END $$`);
    await t.db.query('CREATE TRIGGER test_refuse_settle BEFORE UPDATE ON transactions FOR EACH ROW EXECUTE FUNCTION test_refuse_settle()');
    try {
      const first = await reconcileIncompleteTransactions(t.context, { batchSize: 1 });
      expect(first.errors).toEqual([{ id: broken, message: expect.stringContaining('cannot settle this row') }]);
      const second = await reconcileIncompleteTransactions(t.context, { batchSize: 1 });
      expect(second).toMatchObject({ completed: 1, errors: [] });
      expect((await get(t, shop, `/transactions/${next}`)).json().status).toBe('complete');
      expect((await get(t, shop, `/transactions/${broken}`)).json().status).toBe('incomplete');
    } finally {
      await t.db.query('DROP TRIGGER test_refuse_settle ON transactions');
      await t.db.query('DROP FUNCTION test_refuse_settle()');
    }
    // With the cause gone, a later run settles it.
    await reconcileIncompleteTransactions(t.context);
    expect((await get(t, shop, `/transactions/${broken}`)).json().status).toBe('complete');
  });
});

describe('idempotency key purge', () => {
  it('keeps keys for at least 24 hours and purges them after the retention', async () => {
    const booking = await createBooking(t, shop, { total: 100 });
    await post(t, shop, purchaseBody(shop, booking, 100), { 'idempotency-key': 'purge-me' });
    advanceMinutes(24 * 60);
    expect((await purgeExpiredIdempotencyKeys(t.context)).purged).toBe(0);
    advanceMinutes(25 * 60);
    expect((await purgeExpiredIdempotencyKeys(t.context)).purged).toBeGreaterThanOrEqual(1);
    expect(await t.db.query(`SELECT 1 FROM idempotency_keys WHERE key = 'purge-me'`)).toHaveLength(0);
  });

  it('reports a backlog while a run purges a full batch, so the runner goes on at once', async () => {
    const booking = await createBooking(t, shop, { total: 100 });
    for (let index = 0; index < 3; index++) await post(t, shop, purchaseBody(shop, booking, 1), { 'idempotency-key': `purge-batch-${index}` });
    advanceMinutes(limits.idempotencyKeyRetentionHours * 60 + 60);
    // Earlier tests' keys are past their retention too: purge until a run reports no backlog,
    // in batches of 2 whatever the planner guesses from the statistics (src/storage/batches.ts).
    await statisticsSayEmpty(t.db, 'idempotency_keys');
    const runs: { purged: number; backlog: boolean }[] = [];
    for (let run = 0; run < 100 && runs.at(-1)?.backlog !== false; run++) runs.push(await purgeExpiredIdempotencyKeys(t.context, { batchSize: 2 }));
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.slice(0, -1)).toEqual(runs.slice(0, -1).map(() => ({ purged: 2, backlog: true })));
    expect(runs.at(-1)).toEqual({ purged: expect.any(Number), backlog: false });
    expect(runs.at(-1)!.purged).toBeLessThan(2);
    expect(await t.db.query(`SELECT 1 FROM idempotency_keys WHERE key LIKE 'purge-batch-%'`)).toHaveLength(0);
  });
});

describe('statement dates across a period boundary', () => {
  it('gives a payment settled after the boundary the statement date of its settlement, the period its ledger entries are in', async () => {
    await t.db.query(`UPDATE channels SET statement_period = 'month' WHERE id = $1`, [shop.channelId]);
    clockMs = Date.UTC(2026, 10, 30, 23, 55);
    const booking = await createBooking(t, shop, { total: 9100 });
    const attempted = (await post(t, shop, purchaseBody(shop, booking, 9100, { token: 'tok_visa_no_answer' }))).json();
    // Created on 30 November: November's statements, cut on 1 December.
    expect(attempted).toMatchObject({ status: 'incomplete', statement_date: '2026-12-01' });
    clockMs = Date.UTC(2026, 11, 1, 0, 10);
    await reconcileIncompleteTransactions(t.context);
    const settled = (await get(t, shop, `/transactions/${attempted.id}`)).json();
    expect(settled).toMatchObject({ status: 'complete', statement_date: '2027-01-01' });
    const inPeriod = async (from: string, to: string) =>
      (await buildStatement(t.db, { siteId: shop.site.siteId, channelId: shop.channelId, from, to })).entries.filter((entry) => entry.transaction_id === attempted.id).length;
    expect(await inPeriod('2026-11-01', '2026-11-30')).toBe(0);
    expect(await inPeriod('2026-12-01', '2026-12-31')).toBeGreaterThan(0);
    // The list's statement filter agrees with the statement that holds the money.
    const listed = (await get(t, shop, '/transactions?statement_date_after=2026-12-02&statement_date_before=2027-01-01&per_page=100')).json().map((row: { id: number }) => row.id);
    expect(listed).toContain(attempted.id);
  });
});

describe('a server error after the attempt was written', () => {
  it('is not replayed for the key once the transaction settled: the retry shows the transaction as it is now', async () => {
    const booking = await createBooking(t, shop, { total: 6_100 });
    const body = purchaseBody(shop, booking, 6_100);
    const key = { 'idempotency-key': 'server-error-6100' };
    // The settlement's write fails (a bug, the database away for a moment): the charge was made.
    await t.db.query(`CREATE FUNCTION test_refuse_settlement() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.total = 6100 AND NEW.status = 'complete' THEN RAISE EXCEPTION 'settlement write failed'; END IF; RETURN NEW; END $$`);
    await t.db.query('CREATE TRIGGER test_refuse_settlement BEFORE UPDATE ON transactions FOR EACH ROW EXECUTE FUNCTION test_refuse_settlement()');
    let failed;
    try {
      failed = await post(t, shop, body, key);
    } finally {
      await t.db.query('DROP TRIGGER test_refuse_settlement ON transactions');
      await t.db.query('DROP FUNCTION test_refuse_settlement()');
    }
    expect(failed.statusCode).toBe(500);
    // Reconciliation settles it from the processor's record.
    advanceMinutes(2);
    await reconcileIncompleteTransactions(t.context);
    const retry = await post(t, shop, body, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers.location).toContain('/transactions/');
    expect(retry.json()).toMatchObject({ status: 'complete', total: 6_100 });
    expect((await bookingRow(t, booking)).status).toBe('paid');
  });
});
