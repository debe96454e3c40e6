import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { addChannel, createBooking, createShop, get, post, shopContext, type Body, type Shop } from '../payments/support.js';
import { grantAllocation, revokeAllocationGrant } from '../../src/domain/allocations/index.js';
import { verifyLedger } from '../../src/domain/ledger/verify.js';
import { commands as channelCommands } from '../../src/cli/commands/channels-admin.js';

/**
 * An authorisation plans allocations; its capture, later, moves them. Between the two the target
 * must stay able to receive: it cannot be deleted or change currency while money is planned to it,
 * and a capture whose target can no longer receive (closed by the operator, grant withdrawn, or
 * deleted before this rule existed) is refused before the processor captures anything.
 */

let t: TestContext;
let shop: Shop;

beforeAll(async () => {
  ({ t, shop } = await shopContext());
});
afterAll(async () => t.close());

async function fundsByCurrency(channelId: number): Promise<Record<string, number>> {
  const rows = await t.db.query<{ currency: string; balance: number }>(
    `SELECT currency, sum(CASE WHEN direction = 'credit' THEN amount ELSE -amount END)::bigint AS balance
       FROM ledger_entries WHERE channel_id = $1 AND account = 'channel_funds' GROUP BY currency`,
    [channelId],
  );
  return Object.fromEntries(rows.map((row) => [row.currency.trim(), Number(row.balance)]));
}

async function authorizeTo(target: number, total = 10_000): Promise<{ id: number; booking: number }> {
  const booking = await createBooking(t, shop, { total });
  const response = await post(t, shop, {
    transaction_types: 'authorize', channels: shop.channelId, currencies: 'USD', total, token: 'tok_visa',
    bookings: [{ id: booking, currencies: 'USD', total }], allocations: [{ channels: target, total: 2000 }],
  });
  expect(response.statusCode).toBe(201);
  expect(response.json().status).toBe('complete');
  return { id: response.json().id, booking };
}

function captureBody(authorization: { id: number; booking: number }, extra: Body = {}): Body {
  return {
    transaction_types: 'capture', channels: shop.channelId, currencies: 'USD', total: 10_000, linked_id: authorization.id,
    bookings: [{ id: authorization.booking, currencies: 'USD', total: 10_000 }], ...extra,
  };
}

const channelRequest = (method: 'DELETE' | 'PUT', channelId: number, payload?: Body) =>
  t.app.inject({ method, url: `${shop.base}/channels/${channelId}`, headers: shop.site.headers, ...(payload ? { payload } : {}) });

describe('a channel an authorisation plans money to', () => {
  it('cannot be deleted or change currency until the capture has moved the money to it, in its currency', async () => {
    const target = await addChannel(t, shop);
    const authorization = await authorizeTo(target);

    const deleted = await channelRequest('DELETE', target);
    expect(deleted.statusCode).toBe(409);
    expect(deleted.json()).toMatchObject({ code: 'rest_channel_in_use' });
    const switched = await channelRequest('PUT', target, { currencies: 'EUR' });
    expect(switched.statusCode).toBe(400);
    expect(switched.json().data.params.currencies).toMatch(/allocations planned to it/);
    expect((await get(t, shop, `/channels/${target}`)).json()).toMatchObject({ id: target, currencies: 'USD' });

    const capture = await post(t, shop, captureBody(authorization));
    expect(capture.statusCode).toBe(201);
    expect(capture.json().allocations).toEqual([expect.objectContaining({ channels: target, total: 2000, currencies: 'USD', credit: { currencies: 'USD', total: 2000 } })]);
    expect(await fundsByCurrency(target)).toEqual({ USD: 2000 });
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  });

  it('is free again once the authorisation is voided: a void moves nothing to it', async () => {
    const target = await addChannel(t, shop);
    const authorization = await authorizeTo(target);
    expect((await channelRequest('DELETE', target)).statusCode).toBe(409);
    const voided = await post(t, shop, {
      transaction_types: 'void', channels: shop.channelId, currencies: 'USD', total: 10_000, linked_id: authorization.id,
      bookings: [{ id: authorization.booking, currencies: 'USD', total: 10_000 }],
    });
    expect(voided.statusCode).toBe(201);
    expect((await channelRequest('PUT', target, { currencies: 'EUR' })).statusCode).toBe(200);
    expect((await channelRequest('DELETE', target)).statusCode).toBe(200);
  });
});

describe('a capture whose planned target can no longer receive', () => {
  async function expectRefusedCapture(authorization: { id: number; booking: number }, target: number, reason: RegExp): Promise<void> {
    const refused = await post(t, shop, captureBody(authorization));
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'rest_invalid_param' });
    expect(refused.json().data.params.allocations).toMatch(reason);
    expect(refused.json().data.params.allocations).toMatch(/Send the capture with its own allocations/);
    expect(await fundsByCurrency(target)).toEqual({});
    // Nothing was captured: the authorisation is still whole and can be captured without the target.
    const still = (await get(t, shop, `/transactions/${authorization.id}`)).json();
    expect(still).toMatchObject({ total_remaining: 10_000, allocations: [expect.objectContaining({ channels: target, reversed: false })] });
    const elsewhere = await addChannel(t, shop);
    const captured = await post(t, shop, captureBody(authorization, { allocations: [{ channels: elsewhere, total: 2000 }] }));
    expect(captured.statusCode).toBe(201);
    expect(captured.json().allocations).toEqual([expect.objectContaining({ channels: elsewhere, total: 2000 })]);
    expect(await fundsByCurrency(elsewhere)).toEqual({ USD: 2000 });
    expect(await fundsByCurrency(target)).toEqual({});
    expect((await verifyLedger(t.db, { siteId: shop.site.siteId })).problems).toEqual([]);
  }

  it('is refused when the operator closed the target', async () => {
    const target = await addChannel(t, shop);
    const authorization = await authorizeTo(target);
    const channelSet = channelCommands.find((command) => command.name === 'channel set')!;
    await channelSet.run(t.context, { site: shop.site.path, id: String(target), 'account-mode': 'closed' }, []);
    await expectRefusedCapture(authorization, target, new RegExp(`channel ${target} does not exist or may not receive`));
  });

  it('is refused when the other site withdrew its grant', async () => {
    const other = await createShop(t);
    await grantAllocation(t.db, { fromSiteId: shop.site.siteId, toSiteId: other.site.siteId });
    const authorization = await authorizeTo(other.channelId);
    await revokeAllocationGrant(t.db, { fromSiteId: shop.site.siteId, toSiteId: other.site.siteId });
    await expectRefusedCapture(authorization, other.channelId, new RegExp(`channel ${other.channelId} does not exist or may not receive`));
  });

  it('is refused when the target was deleted or changed currency before deleting it was refused', async () => {
    // Rows as an earlier version left them: the target deleted, or switched to EUR, after the
    // authorisation planned money to it (isInUse did not count planned allocations then).
    const deleted = await addChannel(t, shop);
    const first = await authorizeTo(deleted);
    await t.db.query('UPDATE channels SET deleted_at = now() WHERE id = $1', [deleted]);
    await expectRefusedCapture(first, deleted, new RegExp(`channel ${deleted} does not exist or may not receive`));

    const switched = await addChannel(t, shop);
    const second = await authorizeTo(switched);
    await t.db.query(`UPDATE channels SET currency = 'EUR' WHERE id = $1`, [switched]);
    await expectRefusedCapture(second, switched, new RegExp(`channel ${switched} does not accept USD: its currency is EUR`));
  });
});
