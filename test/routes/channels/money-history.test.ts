import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../../support/context.js';
import { addChannel, createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../../payments/support.js';

/**
 * A channel can hold money without having bookings: allocations from another channel credit its
 * funds. Such a channel must keep its currency (its ledger is in that currency) and must not be
 * deleted (the money would be stranded on a deleted channel), exactly like a channel with bookings.
 */
let t: TestContext;
let shop: Shop;
let receiving: number;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  receiving = await addChannel(t, shop);
  const booking = await createBooking(t, shop, { total: 10_000 });
  const paid = await post(t, shop, purchaseBody(shop, booking, 10_000, { allocations: [{ channels: receiving, total: 2_500 }] }));
  expect(paid.statusCode).toBe(201);
  expect(paid.json().status).toBe('complete');
  const entries = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM ledger_entries WHERE channel_id = $1', [receiving]);
  expect(entries.count).toBeGreaterThan(0);
});
afterAll(async () => t.close());

const channelUrl = (id: number) => `${shop.base}/channels/${id}`;

describe('a channel holding allocated money but no bookings', () => {
  it('keeps its currency', async () => {
    const reply = await t.app.inject({ method: 'PUT', url: channelUrl(receiving), headers: shop.site.headers, payload: { currencies: 'EUR' } });
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { currencies: expect.any(String) } } });
    const row = await t.db.one<{ currency: string }>('SELECT currency FROM channels WHERE id = $1', [receiving]);
    expect(row.currency.trim()).toBe('USD');
  });

  it('cannot be deleted', async () => {
    const reply = await t.app.inject({ method: 'DELETE', url: channelUrl(receiving), headers: shop.site.headers });
    expect(reply.statusCode).toBe(409);
    expect((await t.app.inject({ url: channelUrl(receiving), headers: shop.site.headers })).statusCode).toBe(200);
  });

  it('a channel without any money history still changes currency and is deleted (control)', async () => {
    const empty = await addChannel(t, shop);
    expect((await t.app.inject({ method: 'PUT', url: channelUrl(empty), headers: shop.site.headers, payload: { currencies: 'EUR' } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: channelUrl(empty), headers: shop.site.headers })).statusCode).toBe(200);
  });
});

/**
 * Test money and sandbox cards never share a channel with real cards (docs/allocations.md): a
 * site cannot move a channel out of `test` (or back into it) once money or a card has moved on it,
 * as its currency cannot change; a new channel takes the other kind.
 */
describe('the account mode of a channel with money history', () => {
  const switchMode = (id: number, mode: string) => t.app.inject({ method: 'PUT', url: channelUrl(id), headers: shop.site.headers, payload: { account_mode: mode } });
  const modeOf = async (id: number) => (await t.db.one<{ account_mode: string }>('SELECT account_mode FROM channels WHERE id = $1', [id])).account_mode;

  it('stays test while the channel holds a sandbox card', async () => {
    const vaulting = await addChannel(t, shop);
    const vault = await post(t, shop, { transaction_types: 'vault', channels: vaulting, currencies: 'USD', total: 0, token: 'tok_visa' });
    expect(vault.json().status).toBe('complete');
    const reply = await switchMode(vaulting, 'draft');
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { account_mode: expect.stringMatching(/test money or sandbox cards.*new channel/) } } });
    expect(await modeOf(vaulting)).toBe('test');
  });

  it('stays test while the channel holds allocated test money', async () => {
    expect((await switchMode(receiving, 'draft')).statusCode).toBe(400);
    expect(await modeOf(receiving)).toBe('test');
  });

  it('a draft channel with money history stays draft', async () => {
    const draft = await addChannel(t, shop);
    expect((await post(t, shop, { transaction_types: 'vault', channels: draft, currencies: 'USD', total: 0, token: 'tok_visa' })).statusCode).toBe(201);
    await t.db.query(`UPDATE channels SET account_mode = 'draft' WHERE id = $1`, [draft]);
    expect((await switchMode(draft, 'test')).statusCode).toBe(400);
    expect(await modeOf(draft)).toBe('draft');
  });

  it('a channel without money history switches both ways (control)', async () => {
    const empty = await addChannel(t, shop);
    expect((await switchMode(empty, 'draft')).statusCode).toBe(200);
    expect((await switchMode(empty, 'test')).statusCode).toBe(200);
  });
});
