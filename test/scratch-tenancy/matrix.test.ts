import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { addUser, createSite } from '../support/fixtures.js';
import { addChannel, createBooking, createShop, paymentsContext, purchaseBody, type Shop } from '../payments/support.js';

let t: TestContext;
let A: Shop;
let B: Shop;
const ids: Record<string, number | string> = {};
const out: string[] = [];
const log = (label: string, r: { statusCode: number; body: string }) => out.push(`${label} => ${r.statusCode} ${r.body.slice(0, 260)}`);

function inj(method: string, url: string, headers: Record<string, string>, payload?: unknown) {
  return t.app.inject({ method: method as never, url, headers, ...(payload !== undefined ? { payload: payload as never } : {}) });
}
async function login(path: string, username: string, password: string) {
  const r = await inj('POST', `/${path}/site-json/jwt-auth/v1/token`, {}, { username, password });
  return r.json() as { token: string; refresh_token: string };
}

beforeAll(async () => {
  t = await paymentsContext();
  A = await createShop(t);
  B = await createShop(t);
  const bBooking = await createBooking(t, B, { total: 5000 });
  ids.bBooking = bBooking;
  const bBooking2 = await createBooking(t, B, { total: 5000 });
  const p = await inj('POST', `${B.base}/transactions`, B.site.headers, purchaseBody(B, bBooking, 5000));
  ids.bPurchase = p.json().id;
  const au = await inj('POST', `${B.base}/transactions`, B.site.headers, { ...purchaseBody(B, bBooking2, 5000), transaction_types: 'authorize' });
  ids.bAuth = au.json().id;
  const v = await inj('POST', `${B.base}/transactions`, B.site.headers, { transaction_types: 'vault', channels: B.channelId, currencies: 'USD', total: 0, token: 'tok_visa' });
  ids.bVault = v.json().id;
  const card = await t.db.one<{ token: string }>('SELECT c.token FROM cards c JOIN transactions t ON t.card_id = c.id WHERE t.id = $1', [ids.bVault]);
  ids.bVaultToken = card.token;
  ids.aBooking = await createBooking(t, A, { total: 5000 });
});
afterAll(async () => {
  console.log(out.join('\n'));
  await t.close();
});

describe('cross-site', () => {
  it('paths', async () => {
    const H = A.site.headers;
    for (const [res, id] of [['bookings', ids.bBooking], ['bookings', 99999999], ['channels', B.channelId], ['channels', 99999999], ['transactions', ids.bPurchase], ['transactions', 99999999]] as const) {
      log(`GET A/${res}/${id}`, await inj('GET', `${A.base}/${res}/${id}`, H));
      log(`PUT A/${res}/${id}`, await inj('PUT', `${A.base}/${res}/${id}`, H, res === 'bookings' ? { surname: 'X' } : { name: 'X' }));
      log(`DELETE A/${res}/${id}`, await inj('DELETE', `${A.base}/${res}/${id}`, H));
    }
    log('A token on B path', await inj('GET', `${B.base}/bookings`, H));
    log('A token on nonexistent path', await inj('GET', `/nope-xyz/site-json/vendor/v2/bookings`, H));
    for (const q of [`include=${ids.bBooking}`, `channels=${B.channelId}`]) {
      const r = await inj('GET', `${A.base}/bookings?${q}`, H);
      log(`GET A/bookings?${q} total=${r.headers['x-site-total']}`, r);
    }
    for (const q of [`include=${ids.bPurchase}`, `channels=${B.channelId}`]) {
      const r = await inj('GET', `${A.base}/transactions?${q}`, H);
      log(`GET A/transactions?${q} total=${r.headers['x-site-total']}`, r);
    }
    const r = await inj('GET', `${A.base}/channels?include=${B.channelId}`, H);
    log(`GET A/channels?include total=${r.headers['x-site-total']}`, r);
  });

  it('bodies', async () => {
    const H = A.site.headers;
    const post = (b: unknown) => inj('POST', `${A.base}/transactions`, H, b);
    log('purchase channels=B', await post(purchaseBody({ ...A, channelId: B.channelId }, ids.bBooking as number, 5000)));
    log('purchase channels=none', await post(purchaseBody({ ...A, channelId: 99999999 }, ids.bBooking as number, 5000)));
    log('purchase bookings=B', await post(purchaseBody(A, ids.bBooking as number, 5000)));
    log('purchase bookings=none', await post(purchaseBody(A, 99999999, 5000)));
    const aB = ids.aBooking as number;
    for (const [type, linked] of [['refund', ids.bPurchase], ['capture', ids.bAuth], ['void', ids.bAuth], ['retained_purchase', ids.bVault], ['refund', 99999999]] as const) {
      log(`${type} linked=${linked}`, await post({ transaction_types: type, channels: A.channelId, currencies: 'USD', total: 100, linked_id: linked, bookings: [{ id: aB, currencies: 'USD', total: 100 }] }));
    }
    log('retained token=B vault token', await post({ transaction_types: 'retained_purchase', channels: A.channelId, currencies: 'USD', total: 100, token: ids.bVaultToken, bookings: [{ id: aB, currencies: 'USD', total: 100 }] }));
    log('purchase token=B vault token', await post({ ...purchaseBody(A, aB, 100), token: ids.bVaultToken }));
    log('allocation to B', await post({ ...purchaseBody(A, aB, 100), allocations: [{ channels: B.channelId, operator: 'flat', total: 10 }] }));
    log('allocation to none', await post({ ...purchaseBody(A, aB, 100), allocations: [{ channels: 99999999, operator: 'flat', total: 10 }] }));
    log('booking create channels=B', await inj('POST', `${A.base}/bookings`, H, { firstname: 'a', surname: 'b', email: 'a@b.co', date: '2099-01-01', total: 100, currencies: 'USD', countries: 'GB', channels: B.channelId }));
    log('booking update channels=B', await inj('PUT', `${A.base}/bookings/${aB}`, H, { channels: B.channelId }));
    log('chargeback non-admin', await post({ transaction_types: 'chargeback', channels: A.channelId, currencies: 'USD', total: 100, linked_id: ids.bPurchase }));
  });
});
