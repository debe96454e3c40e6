import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../../support/context.js';
import { addUser } from '../../support/fixtures.js';
import { createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../../payments/support.js';
import { renderRequestedMails } from '../../../src/domain/emails/outbox.js';
import { limits } from '../../../src/limits.js';

// The spec: "The language is the transaction's language, falling back to the booking's and then
// the channel's", and refund and chargeback mails use the language of the original payment.
let t: TestContext;
let shop: Shop;
let admin: Shop;
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  await t.db.query(`UPDATE channels SET language = 'deDE' WHERE id = $1`, [shop.channelId]);
  const operator = await addUser(t.db, shop.site.siteId, { role: 'member_admin', platformAdmin: true });
  admin = { ...shop, site: { ...shop.site, headers: operator.headers } };
});
afterAll(async () => t.close());

async function frenchBooking(total: number): Promise<number> {
  const id = await createBooking(t, shop, { total });
  await t.db.query(`UPDATE bookings SET language = 'frFR' WHERE id = $1`, [id]);
  return id;
}

async function mailLanguage(transactionId: number, kind: string): Promise<string> {
  // The payment requested its mails; the delivery job renders them (emails/outbox.ts). A batch
  // may write no mail while requests remain (a vault's request calls for none): render until none
  // is left, a bounded number of batches.
  for (let batch = 0; batch < 10; batch++) {
    if ((await renderRequestedMails(t.db, { batchSizeMax: limits.mailBatchSizeMax, claimedUntil: new Date() })).requests === 0) break;
  }
  const row = await t.db.one<{ language: string }>('SELECT language FROM email_outbox WHERE transaction_id = $1 AND kind = $2', [transactionId, kind]);
  return row.language;
}

const refundBody = (linkedId: number, bookingId: number, total: number, extra: Record<string, unknown> = {}) => ({
  transaction_types: 'refund', channels: shop.channelId, currencies: shop.currency, total, linked_id: linkedId, bookings: [{ id: bookingId, currencies: shop.currency, total }], ...extra,
});

describe('transaction language', () => {
  it("takes the request's language, else the booking's, else the channel's", async () => {
    const booking = await frenchBooking(5000);
    const fromBooking = await post(t, shop, purchaseBody(shop, booking, 1000));
    expect(fromBooking.json()).toMatchObject({ status: 'complete', language: 'frFR' });
    expect(await mailLanguage(fromBooking.json().id, 'receipt')).toBe('frFR');

    const asked = await post(t, shop, purchaseBody(shop, booking, 1000, { language: 'itIT' }));
    expect(asked.json()).toMatchObject({ status: 'complete', language: 'itIT' });
    expect(await mailLanguage(asked.json().id, 'receipt')).toBe('itIT');

    // No booking (a card verification): the channel's.
    const vault = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: shop.currency, total: 0, token: 'tok_visa' });
    expect(vault.json()).toMatchObject({ status: 'complete', language: 'deDE' });
  });

  it("keeps the original payment's language for refunds and chargebacks and their mails", async () => {
    const booking = await frenchBooking(5000);
    const payment = (await post(t, shop, purchaseBody(shop, booking, 3000, { language: 'jaJA' }))).json();

    const refund = await post(t, shop, refundBody(payment.id, booking, 500));
    expect(refund.json()).toMatchObject({ status: 'complete', language: 'jaJA' });
    expect(await mailLanguage(refund.json().id, 'refund')).toBe('jaJA');

    // A refund that names another language records it, but its mail follows the payment.
    const other = await post(t, shop, refundBody(payment.id, booking, 500, { language: 'esES' }));
    expect(other.json()).toMatchObject({ status: 'complete', language: 'esES' });
    expect(await mailLanguage(other.json().id, 'refund')).toBe('jaJA');

    const chargeback = await post(t, admin, { transaction_types: 'chargeback', linked_id: payment.id, total: 1000 });
    expect(chargeback.json()).toMatchObject({ status: 'complete', language: 'jaJA' });
    expect(await mailLanguage(chargeback.json().id, 'chargeback')).toBe('jaJA');
  });

  it("gives a capture the authorisation's language when its request names none", async () => {
    const booking = await frenchBooking(2000);
    const authorization = (await post(t, shop, { ...purchaseBody(shop, booking, 2000, { language: 'koKO' }), transaction_types: 'authorize' })).json();
    const capture = await post(t, shop, { ...refundBody(authorization.id, booking, 2000), transaction_types: 'capture' });
    expect(capture.json()).toMatchObject({ status: 'complete', language: 'koKO' });
    expect(await mailLanguage(capture.json().id, 'receipt')).toBe('koKO');
  });
});
