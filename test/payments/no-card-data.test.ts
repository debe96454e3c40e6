import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../../src/domain/credentials.js';
import type { TestContext } from '../support/context.js';
import { createBooking, createShop, get, paymentsContext, post, type Shop } from './support.js';

/**
 * Real flows with the sandbox test cards typed into the capture endpoint, then a search of every
 * column of every table, every log line and every API response for a full card number or a CVV.
 */

const cards = [
  { pan: '4111111111111111', cvv: '739' },
  { pan: '5555555555554444', cvv: '428' },
  { pan: '378282246310005', cvv: '6197' },
  { pan: '4000000000000002', cvv: '582' },
  { pan: '4200000000000042', cvv: '914' },
  { pan: '4000000000001000', cvv: '367' },
];

const logLines: string[] = [];
const responses: string[] = [];
let t: TestContext;
let shop: Shop;
let cardJwt: string;
beforeAll(async () => {
  t = await paymentsContext({ env: { LOG_LEVEL: 'debug' }, logStream: { write: (line: string) => void logLines.push(line) } });
  shop = await createShop(t);
  cardJwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'cardvaultuser', siteId: shop.site.siteId });
});
afterAll(async () => t.close());

async function capture(card: (typeof cards)[number]): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: `${shop.base}/cards`,
    headers: { authorization: `Bearer ${cardJwt}` },
    payload: { channels: shop.channelId, card_number: card.pan.replace(/(\d{4})/g, '$1 ').trim(), expiry_month: 12, expiry_year: 2031, cvv: card.cvv, name: 'Ada Lovelace' },
  });
  responses.push(response.body);
  expect(response.statusCode).toBe(201);
  return response.json().token as string;
}

async function pay(body: Record<string, unknown>) {
  const response = await post(t, shop, { channels: shop.channelId, currencies: 'USD', ...body });
  responses.push(response.body);
  expect(response.statusCode).toBe(201);
  return response.json();
}

const share = (booking: number, total: number) => [{ id: booking, currencies: 'USD', total }];

describe('card data never leaves the vault', () => {
  it('runs every card flow with typed test cards', async () => {
    const booking = await createBooking(t, shop, { total: 100_000 });
    const vault = await pay({ transaction_types: 'vault', total: 0, token: await capture(cards[0]!) });
    expect(vault.status).toBe('complete');
    await pay({ transaction_types: 'retained_purchase', total: 1200, linked_id: vault.id, bookings: share(booking, 1200) });
    const purchase = await pay({ transaction_types: 'purchase', total: 3000, token: await capture(cards[1]!), bookings: share(booking, 3000) });
    await pay({ transaction_types: 'refund', total: 1000, linked_id: purchase.id, bookings: share(booking, 1000) });
    const authorization = await pay({ transaction_types: 'authorize', total: 2000, token: await capture(cards[2]!), bookings: share(booking, 2000) });
    await pay({ transaction_types: 'capture', total: 1500, linked_id: authorization.id, bookings: share(booking, 1500) });
    expect((await pay({ transaction_types: 'purchase', total: 800, token: await capture(cards[3]!), bookings: share(booking, 800) })).status).toBe('failed');
    const challenged = await pay({ transaction_types: 'purchase', total: 900, token: await capture(cards[4]!), attempt_3ds: true, bookings: share(booking, 900) });
    expect(challenged.status).toBe('pending');
    const page = await t.app.inject({ method: 'GET', url: new URL(challenged['3ds_response'].challenge_url).pathname });
    responses.push(page.body);
    await t.app.inject({ method: 'POST', url: new URL(challenged['3ds_response'].challenge_url).pathname, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'result=authenticate' });
    await t.app.inject({ method: 'GET', url: `/3ds/return/${challenged.uuid}` });
    expect((await pay({ transaction_types: 'purchase', total: 700, token: await capture(cards[5]!), attempt_3ds: true, bookings: share(booking, 700) })).status).toBe('complete');
    const list = await get(t, shop, '/transactions?per_page=100');
    responses.push(list.body);
    expect(list.json().length).toBeGreaterThanOrEqual(8);
    for (const item of list.json()) responses.push((await get(t, shop, `/transactions/${item.id}`)).body);
    responses.push((await get(t, shop, `/bookings/${booking}`)).body);
  });

  it('finds no card number or CVV in any table, log line or response', async () => {
    const tables = await t.db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
    expect(tables.length).toBeGreaterThan(10);
    const haystacks: { where: string; text: string }[] = [];
    for (const { table_name: table } of tables) {
      const rows = await t.db.query<{ row: string }>(`SELECT to_jsonb(x)::text AS row FROM "${table}" x`);
      for (const row of rows) haystacks.push({ where: `table ${table}`, text: row.row });
    }
    expect(haystacks.some((item) => item.where === 'table cards')).toBe(true);
    for (const line of logLines) haystacks.push({ where: 'log', text: line });
    for (const body of responses) haystacks.push({ where: 'response', text: body });
    expect(logLines.length).toBeGreaterThan(10);
    const hits: string[] = [];
    for (const card of cards) {
      // A CVV is a short digit run: count it only where it stands alone (not inside a longer
      // number, hash or uuid, nor a decimal such as a timestamp's milliseconds `10:58:06.582`
      // or a log's `responseTime`, which made this test fail at random).
      const cvv = new RegExp(`(?<![0-9A-Za-z.])${card.cvv}(?![0-9A-Za-z.])`);
      const spaced = card.pan.replace(/(\d{4})/g, '$1 ').trim();
      for (const { where, text } of haystacks) {
        if (text.includes(card.pan) || text.includes(spaced)) hits.push(`${where}: PAN ${card.pan.slice(-4)}`);
        if (cvv.test(text)) hits.push(`${where}: CVV of ${card.pan.slice(-4)} in ${text.slice(0, 200)}`);
      }
    }
    expect(hits).toEqual([]);
  });
});
