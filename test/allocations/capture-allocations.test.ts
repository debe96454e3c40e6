import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { addChannel, bookingRow, createBooking, createShop, get, post, shopContext, type Body, type Shop } from '../payments/support.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';

/**
 * What an authorisation's planned allocations become once it is captured (with or without the
 * capture's own allocations, in full or in part) or voided, and what refunds of the capture then
 * take back: the transactions' `allocations` as GET shows them, the channels' funds in the
 * ledger, the bookings' totals. docs/allocations.md "When money moves".
 */

let t: TestContext;
let shop: Shop;

beforeAll(async () => {
  ({ t, shop } = await shopContext());
});
afterAll(async () => t.close());
// A shop of its own per test: the paying channel's funds are then this test's alone.
beforeEach(async () => {
  shop = await createShop(t);
});

async function funds(channelId: number): Promise<number> {
  const row = await t.db.one<{ balance: number }>(
    `SELECT coalesce(sum(CASE WHEN direction = 'credit' THEN amount ELSE -amount END), 0)::bigint AS balance FROM ledger_entries WHERE channel_id = $1 AND account = 'channel_funds'`,
    [channelId],
  );
  return Number(row.balance);
}

async function transaction(id: number): Promise<{ status: string; total_remaining: number; allocations: Record<string, unknown>[] }> {
  const response = await get(t, shop, `/transactions/${id}`);
  expect(response.statusCode).toBe(200);
  return response.json();
}

async function authorize(allocations: Body[], total = 10_000): Promise<{ id: number; booking: number }> {
  const booking = await createBooking(t, shop, { total });
  const response = await post(t, shop, {
    transaction_types: 'authorize', channels: shop.channelId, currencies: 'USD', total, token: 'tok_visa',
    bookings: [{ id: booking, currencies: 'USD', total }], allocations,
  });
  expect(response.statusCode).toBe(201);
  expect(response.json().status).toBe('complete');
  return { id: response.json().id, booking };
}

async function follow(type: 'capture' | 'void' | 'refund', options: { linkedId: number; booking: number; total: number; extra?: Body; headers?: Record<string, string> }) {
  return post(t, shop, {
    transaction_types: type, channels: shop.channelId, currencies: 'USD', total: options.total, linked_id: options.linkedId,
    bookings: [{ id: options.booking, currencies: 'USD', total: options.total }], ...options.extra,
  }, options.headers);
}

async function expectBalancedLedger(): Promise<void> {
  expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
}

describe('a capture sending an empty allocations list', () => {
  it('applies the authorisation\'s planned ones, as a capture without the field does (docs/allocations.md)', async () => {
    const planned = await addChannel(t, shop);
    const authorization = await authorize([{ channels: planned, total: 2000 }]);

    const capture = await follow('capture', { linkedId: authorization.id, booking: authorization.booking, total: 10_000, extra: { allocations: [] } });
    expect(capture.statusCode).toBe(201);
    expect(capture.json().status).toBe('complete');

    expect((await transaction(capture.json().id)).allocations).toEqual([expect.objectContaining({ channels: planned, total: 2000, reversed: false })]);
    expect(await funds(planned)).toBe(2000);
    expect(await funds(shop.channelId)).toBe(8000);
    await expectBalancedLedger();
  });
});

describe('a capture with its own allocations', () => {
  it('replaces the authorisation\'s planned ones: those show reversed, only the capture\'s move money', async () => {
    const planned = await addChannel(t, shop);
    const chosen = await addChannel(t, shop);
    const authorization = await authorize([{ channels: planned, total: 2000 }]);

    const capture = await follow('capture', { linkedId: authorization.id, booking: authorization.booking, total: 10_000, extra: { allocations: [{ channels: chosen, total: 3000 }] } });
    expect(capture.statusCode).toBe(201);
    expect(capture.json().status).toBe('complete');

    expect((await transaction(capture.json().id)).allocations).toEqual([expect.objectContaining({ channels: chosen, total: 3000, reversed: false })]);
    // The authorisation's planned allocation never moves now: it shows as reversed, as after a void.
    expect((await transaction(authorization.id)).allocations).toEqual([expect.objectContaining({ channels: planned, total: 2000, reversed: true })]);
    expect(await funds(planned)).toBe(0);
    expect(await funds(chosen)).toBe(3000);
    expect(await funds(shop.channelId)).toBe(7000);
    await expectBalancedLedger();

    // A refund of the capture reverses the capture's allocations, never the authorisation's.
    const refund = await follow('refund', { linkedId: capture.json().id, booking: authorization.booking, total: 10_000 });
    expect(refund.statusCode).toBe(201);
    expect(refund.json().allocations).toEqual([expect.objectContaining({ channels: chosen, total: 3000, reversed: true })]);
    expect(await funds(chosen)).toBe(0);
    expect(await funds(planned)).toBe(0);
    expect(await funds(shop.channelId)).toBe(0);
    expect((await transaction(capture.json().id)).allocations).toEqual([expect.objectContaining({ channels: chosen, reversed: true })]);
    await expectBalancedLedger();
  });

  it('in part, moves the capture\'s allocations as sent and reverses the planned ones', async () => {
    const planned = await addChannel(t, shop);
    const chosen = await addChannel(t, shop);
    const authorization = await authorize([{ channels: planned, total: 2000 }]);
    const capture = await follow('capture', { linkedId: authorization.id, booking: authorization.booking, total: 4000, extra: { allocations: [{ channels: chosen, total: 1000 }] } });
    expect(capture.statusCode).toBe(201);
    expect((await transaction(authorization.id)).allocations).toEqual([expect.objectContaining({ channels: planned, reversed: true })]);
    expect(await funds(chosen)).toBe(1000);
    expect(await funds(planned)).toBe(0);
    expect(await bookingRow(t, authorization.booking)).toMatchObject({ status: 'partial-payment', total_paid: 4000, total_authorized: 0 });
    await expectBalancedLedger();
  });
});

describe('a capture without allocations of its own', () => {
  it('in part, moves the planned allocations scaled to the capture; refunds of it take them back pro rata', async () => {
    const first = await addChannel(t, shop);
    const second = await addChannel(t, shop);
    const authorization = await authorize([{ channels: first, total: 2000 }, { channels: second, total: 1000, operator: 'percent' }]);
    const capture = await follow('capture', { linkedId: authorization.id, booking: authorization.booking, total: 5000 });
    expect(capture.statusCode).toBe(201);
    const captureId = capture.json().id as number;
    expect(capture.json().allocations).toEqual([
      expect.objectContaining({ channels: first, total: 1000, reversed: false }),
      expect.objectContaining({ channels: second, total: 500, reversed: false }),
    ]);
    expect(await funds(first)).toBe(1000);
    expect(await funds(second)).toBe(500);
    expect(await funds(shop.channelId)).toBe(3500);
    expect(await bookingRow(t, authorization.booking)).toMatchObject({ status: 'partial-payment', total_paid: 5000, total_authorized: 0 });
    expect((await transaction(authorization.id)).total_remaining).toBe(0);
    await expectBalancedLedger();

    const key = { 'idempotency-key': `refund-part-${captureId}` };
    const refund = await follow('refund', { linkedId: captureId, booking: authorization.booking, total: 2000, headers: key });
    expect(refund.statusCode).toBe(201);
    expect(refund.json().allocations).toEqual([
      expect.objectContaining({ channels: first, total: 400, reversed: true }),
      expect.objectContaining({ channels: second, total: 200, reversed: true }),
    ]);
    // The same request again is the same answer, and moves nothing more.
    const replay = await follow('refund', { linkedId: captureId, booking: authorization.booking, total: 2000, headers: key });
    expect(replay.json().id).toBe(refund.json().id);
    expect(await funds(first)).toBe(600);
    expect(await funds(second)).toBe(300);
    expect(await funds(shop.channelId)).toBe(2100);
    expect((await transaction(captureId)).total_remaining).toBe(3000);
    expect(await bookingRow(t, authorization.booking)).toMatchObject({ status: 'partial-payment', total_paid: 3000 });
    await expectBalancedLedger();

    const rest = await follow('refund', { linkedId: captureId, booking: authorization.booking, total: 3000 });
    expect(rest.statusCode).toBe(201);
    expect(rest.json().allocations).toEqual([
      expect.objectContaining({ channels: first, total: 600, reversed: true }),
      expect.objectContaining({ channels: second, total: 300, reversed: true }),
    ]);
    expect(await funds(first)).toBe(0);
    expect(await funds(second)).toBe(0);
    expect(await funds(shop.channelId)).toBe(0);
    expect((await transaction(captureId)).allocations).toEqual([
      expect.objectContaining({ channels: first, reversed: true }),
      expect.objectContaining({ channels: second, reversed: true }),
    ]);
    expect(await bookingRow(t, authorization.booking)).toMatchObject({ status: 'unpaid', total_paid: 0, total_authorized: 0 });
    const over = await follow('refund', { linkedId: captureId, booking: authorization.booking, total: 1 });
    expect(over.statusCode).toBe(400);
    await expectBalancedLedger();
  });
});

describe('a planned allocation a partial capture scales to 0', () => {
  it('moves nothing, and shows reversed once the capture is refunded in full, as every other allocation of it', async () => {
    const small = await addChannel(t, shop);
    const large = await addChannel(t, shop);
    // 1 of 600 cents, captured 200 of 600: a third of a cent, 0; 300 of 600 scales to 100.
    const authorization = await authorize([{ channels: small, total: 1 }, { channels: large, total: 300 }], 600);
    const capture = await follow('capture', { linkedId: authorization.id, booking: authorization.booking, total: 200 });
    expect(capture.statusCode).toBe(201);
    const captureId = capture.json().id as number;
    expect(capture.json().allocations).toEqual([
      expect.objectContaining({ channels: small, total: 0, reversed: false }),
      expect.objectContaining({ channels: large, total: 100, reversed: false }),
    ]);
    expect(await funds(small)).toBe(0);
    expect(await funds(large)).toBe(100);

    const part = await follow('refund', { linkedId: captureId, booking: authorization.booking, total: 80 });
    expect(part.json().allocations).toEqual([expect.objectContaining({ channels: large, total: 40, reversed: true })]);
    expect((await transaction(captureId)).allocations.map((allocation) => allocation.reversed)).toEqual([false, false]);

    const rest = await follow('refund', { linkedId: captureId, booking: authorization.booking, total: 120 });
    expect(rest.statusCode).toBe(201);
    // Nothing of the 0 allocation moves back (nothing had moved), but it is no longer open.
    expect(rest.json().allocations).toEqual([expect.objectContaining({ channels: large, total: 60, reversed: true })]);
    expect((await transaction(captureId)).allocations).toEqual([
      expect.objectContaining({ channels: small, total: 0, reversed: true }),
      expect.objectContaining({ channels: large, total: 100, reversed: true }),
    ]);
    expect(await funds(large)).toBe(0);
    expect(await funds(shop.channelId)).toBe(0);
    await expectBalancedLedger();
  });
});

describe('a void of an authorisation with planned allocations', () => {
  it('moves nothing and shows the planned allocations reversed', async () => {
    const target = await addChannel(t, shop);
    const authorization = await authorize([{ channels: target, total: 2000 }]);
    expect(await bookingRow(t, authorization.booking)).toMatchObject({ status: 'authorized', total_authorized: 10_000 });
    const voided = await follow('void', { linkedId: authorization.id, booking: authorization.booking, total: 10_000 });
    expect(voided.statusCode).toBe(201);
    expect(voided.json()).toMatchObject({ status: 'complete', total_remaining: 0, allocations: [] });
    expect((await transaction(authorization.id)).allocations).toEqual([expect.objectContaining({ channels: target, reversed: true })]);
    expect(await funds(target)).toBe(0);
    expect(await funds(shop.channelId)).toBe(0);
    expect(await bookingRow(t, authorization.booking)).toMatchObject({ status: 'unpaid', total_paid: 0, total_authorized: 0 });
    const late = await follow('capture', { linkedId: authorization.id, booking: authorization.booking, total: 10_000 });
    expect(late.statusCode).toBe(400);
    await expectBalancedLedger();
  });
});
