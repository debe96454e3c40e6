import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { buildApp } from '../../src/app.js';
import { createAppContext } from '../../src/context.js';
import { createDb } from '../../src/storage/db.js';
import { signJwt } from '../../src/domain/credentials.js';
import type { AuthoriseRequest } from '../../src/processor/connector.js';
import { addChannel, bookingRow, createBooking, createShop, paymentsContext, post, type Shop } from './support.js';

// A capture token carries the card's CVV for one cardholder-initiated charge (docs/vault.md
// "CVV"). The token is redeemed with the attempt it pays for, not while the request is checked:
// a refused request must leave the token usable, CVV included, so the cardholder does not have to
// type it again. Once redeemed, it names no card: a second charge on it would reach the bank
// without the CVV, as if the cardholder had typed the card again.
let t: TestContext;
let shop: Shop;
/** Each authorisation the processor received: whether it carried a CVV (never the CVV itself). */
const authorisations: { withCvv: boolean; merchantInitiated: boolean }[] = [];
beforeAll(async () => {
  t = await paymentsContext();
  shop = await createShop(t);
  const connector = t.context.connector;
  const authorise = connector.authorise.bind(connector);
  connector.authorise = async (request: AuthoriseRequest) => {
    authorisations.push({ withCvv: request.card.cvv !== undefined, merchantInitiated: request.merchantInitiated });
    return authorise(request);
  };
});
afterAll(async () => t.close());

/** The hosted page's card capture: a short-lived `ct_` token for a card vaulted to `channelId`. */
async function captureToken(channelId: number, card: { pan?: string; cvv?: string } = {}): Promise<string> {
  const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'cardvaultuser', siteId: shop.site.siteId });
  const response = await t.app.inject({
    method: 'POST', url: `${shop.base}/cards`, headers: { authorization: `Bearer ${jwt}` },
    payload: { channels: channelId, card_number: card.pan ?? '4111 1111 1111 1111', expiry_month: '04', expiry_year: new Date().getUTCFullYear() + 3, cvv: card.cvv ?? '123' },
  });
  expect(response.statusCode).toBe(201);
  return response.json().token;
}

const purchase = (token: string, booking: number, total: number) =>
  post(t, shop, { transaction_types: 'purchase', channels: shop.channelId, currencies: 'USD', total, token, bookings: [{ id: booking, currencies: 'USD', total }] });

function expectUnknownToken(answer: Awaited<ReturnType<typeof purchase>>): void {
  expect(answer.statusCode).toBe(400);
  expect(answer.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { token: 'Unknown or expired card token.' } } });
}

describe('the CVV of a capture token', () => {
  it('survives a refused request and goes to the first authorisation; the token then pays for nothing more', async () => {
    authorisations.length = 0;
    const token = await captureToken(shop.channelId);
    const booking = await createBooking(t, shop, { total: 3000 });
    const euroChannel = await addChannel(t, shop, { currency: 'EUR' });
    const euroBooking = await createBooking(t, shop, { total: 3000, channelId: euroChannel });

    // Refused after the card was found: it was vaulted to a USD channel.
    const refused = await post(t, shop, { transaction_types: 'purchase', channels: euroChannel, currencies: 'EUR', total: 3000, token, bookings: [{ id: euroBooking, currencies: 'EUR', total: 3000 }] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().data.params).toHaveProperty('channels');
    expect(authorisations).toEqual([]);

    const paid = await purchase(token, booking, 1000);
    expect(paid.statusCode).toBe(201);
    expect(paid.json().status).toBe('complete');
    expect(authorisations).toEqual([{ withCvv: true, merchantInitiated: false }]);

    // The token paid once: a second charge on it is refused before anything is written.
    expectUnknownToken(await purchase(token, booking, 1000));
    expect(authorisations).toHaveLength(1);
    expect((await bookingRow(t, booking)).transaction_ids).toEqual([paid.json().id]);
  });

  it('gives a card tester one CVV guess: after a CVV decline the token charges nothing, with or without CVV', async () => {
    authorisations.length = 0;
    const token = await captureToken(shop.channelId, { pan: '5555555555554444', cvv: '000' });
    const booking = await createBooking(t, shop, { total: 10_000 });
    // A total ending in 53 makes the sandbox decline the CVV (800.100.153).
    const declined = await purchase(token, booking, 153);
    expect(declined.json()).toMatchObject({ status: 'failed', content: expect.stringContaining('invalid CVV') });
    expectUnknownToken(await purchase(token, booking, 153));
    expectUnknownToken(await purchase(token, booking, 9000));
    expect(authorisations).toEqual([{ withCvv: true, merchantInitiated: false }]);
    expect((await bookingRow(t, booking)).transaction_ids).toEqual([declined.json().id]);
  });

  it('is redeemed by one of several requests sent at once, to two server processes; the others are refused before the bank', async () => {
    authorisations.length = 0;
    // A second process on the same database: its own batches, so its attempts race this one's.
    const db = createDb(t.config.databaseUrl!, 4);
    const context = createAppContext(t.config, db, { connector: t.context.connector });
    const other = await buildApp({ context, logger: false });
    try {
      const token = await captureToken(shop.channelId);
      const bookings = await Promise.all(Array.from({ length: 6 }, () => createBooking(t, shop, { total: 500 })));
      const answers = await Promise.all(bookings.map((booking, index) => {
        const payload = { transaction_types: 'purchase', channels: shop.channelId, currencies: 'USD', total: 500, token, bookings: [{ id: booking, currencies: 'USD', total: 500 }] };
        return (index % 2 === 0 ? t.app : other).inject({ method: 'POST', url: `${shop.base}/transactions`, headers: shop.site.headers, payload });
      }));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 400, 400, 400, 400, 400]);
      for (const answer of answers.filter((candidate) => candidate.statusCode === 400)) expectUnknownToken(answer);
      expect(authorisations).toEqual([{ withCvv: true, merchantInitiated: false }]);
      const rows = await t.db.one<{ count: number }>('SELECT count(*)::int AS count FROM transaction_bookings WHERE booking_id = ANY($1::bigint[])', [bookings]);
      expect(rows.count).toBe(1);
    } finally {
      await other.close();
      await context.close();
      await db.close();
    }
  });
});
