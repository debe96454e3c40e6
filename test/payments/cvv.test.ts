import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { signJwt } from '../../src/domain/credentials.js';
import type { AuthoriseRequest } from '../../src/processor/connector.js';
import { addChannel, createBooking, createShop, paymentsContext, post, type Shop } from './support.js';

// A capture token carries the card's CVV for its first authorisation only. The CVV must be taken
// from it when the processor is called, not while the request is checked: a refused request must
// leave the token usable, CVV included, so the cardholder does not have to type it again.
let t: TestContext;
let shop: Shop;
/** Whether each authorisation the processor received carried a CVV (never the CVV itself). */
const cvvSeen: boolean[] = [];
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  const connector = t.context.connector;
  const authorise = connector.authorise.bind(connector);
  connector.authorise = async (request: AuthoriseRequest) => {
    cvvSeen.push(request.card.cvv !== undefined);
    return authorise(request);
  };
});
afterAll(async () => t.close());

/** The hosted page's card capture: a short-lived `ct_` token for a card vaulted to `channelId`. */
async function captureToken(channelId: number): Promise<string> {
  const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'cardvaultuser', siteId: shop.site.siteId });
  const response = await t.app.inject({
    method: 'POST', url: `${shop.base}/cards`, headers: { authorization: `Bearer ${jwt}` },
    payload: { channels: channelId, card_number: '4111 1111 1111 1111', expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 3, cvv: '123' },
  });
  expect(response.statusCode).toBe(201);
  return response.json().token;
}

describe('the CVV of a capture token', () => {
  it('survives a refused request and goes to the first authorisation, once', async () => {
    const token = await captureToken(shop.channelId);
    const booking = await createBooking(t, shop, { total: 3000 });
    const euroChannel = await addChannel(t, shop, { currency: 'EUR' });
    const euroBooking = await createBooking(t, shop, { total: 3000, channelId: euroChannel });

    // Refused after the card was found: it was vaulted to a USD channel.
    const refused = await post(t, shop, { transaction_types: 'purchase', channels: euroChannel, currencies: 'EUR', total: 3000, token, bookings: [{ id: euroBooking, currencies: 'EUR', total: 3000 }] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().data.params).toHaveProperty('channels');
    expect(cvvSeen).toEqual([]);

    const paid = await post(t, shop, { transaction_types: 'purchase', channels: shop.channelId, currencies: 'USD', total: 1000, token, bookings: [{ id: booking, currencies: 'USD', total: 1000 }] });
    expect(paid.statusCode).toBe(201);
    expect(paid.json().status).toBe('complete');
    expect(cvvSeen).toEqual([true]);

    // The CVV was for that first authorisation only.
    const again = await post(t, shop, { transaction_types: 'purchase', channels: shop.channelId, currencies: 'USD', total: 1000, token, bookings: [{ id: booking, currencies: 'USD', total: 1000 }] });
    expect(again.statusCode).toBe(201);
    expect(cvvSeen).toEqual([true, false]);
  });
});
