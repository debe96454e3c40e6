import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../../src/domain/credentials.js';
import type { AuthoriseRequest } from '../../src/processor/connector.js';
import type { TestContext } from '../support/context.js';
import { bookingRow, createBooking, createShop, paymentsContext, post, type Shop } from './support.js';

// A vaulted card keeps the expiry it was typed with; the vault's rule at capture (valid through
// the last day of its expiry month, UTC) holds when it is charged later too: a retained charge
// of a card that has expired since is refused before the bank, not sent as a doomed charge (the
// sandbox approved it; a real issuer declines it and the attempt stands as failed).
let clockMs = Date.parse('2027-04-15T12:00:00Z');
let t: TestContext;
let shop: Shop;
const authorisations: AuthoriseRequest[] = [];
beforeAll(async () => {
  t = await paymentsContext({ now: () => new Date(clockMs) });
  shop = await createShop(t);
  const connector = t.context.connector;
  const authorise = connector.authorise.bind(connector);
  connector.authorise = async (request: AuthoriseRequest) => {
    authorisations.push(request);
    return authorise(request);
  };
});
afterAll(async () => t.close());

async function vaultCard(expiry: { month: number; year: number }): Promise<{ id: number; token: string }> {
  const jwt = await signJwt(t.config.secrets.jwtSecret, { userId: shop.site.userId, kind: 'cardvaultuser', siteId: shop.site.siteId }, new Date(clockMs));
  const captured = await t.app.inject({
    method: 'POST', url: `${shop.base}/cards`, headers: { authorization: `Bearer ${jwt}` },
    payload: { channels: shop.channelId, card_number: '5555 5555 5555 4444', expiry_month: expiry.month, expiry_year: expiry.year, cvv: '123' },
  });
  expect(captured.statusCode).toBe(201);
  const vault = await post(t, shop, { transaction_types: 'vault', channels: shop.channelId, currencies: 'USD', total: 0, token: captured.json().token });
  expect(vault.json().status).toBe('complete');
  const card = await t.db.one<{ token: string }>('SELECT c.token FROM cards c JOIN transactions t ON t.card_id = c.id WHERE t.id = $1', [vault.json().id]);
  return { id: vault.json().id, token: card.token };
}

const retained = (booking: number, reference: Record<string, unknown>) =>
  post(t, shop, { transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total: 1000, bookings: [{ id: booking, currencies: 'USD', total: 1000 }], ...reference });

describe('retained charges of a vaulted card', () => {
  it('are refused once the card has expired (after the last day of its expiry month, UTC), by linked_id or vault token, before the bank', async () => {
    clockMs = Date.parse('2027-04-15T12:00:00Z');
    const vault = await vaultCard({ month: 5, year: 2027 });
    const booking = await createBooking(t, shop, { total: 1000 });

    // The last second of May 2027 (UTC): the card is still valid.
    clockMs = Date.parse('2027-05-31T23:59:59Z');
    const paid = await retained(booking, { linked_id: vault.id });
    expect(paid.statusCode).toBe(201);
    expect(paid.json().status).toBe('complete');

    // June 2027: expired.
    clockMs = Date.parse('2027-06-01T00:00:00Z');
    const other = await createBooking(t, shop, { total: 1000 });
    const before = authorisations.length;
    const byLinkedId = await retained(other, { linked_id: vault.id });
    expect(byLinkedId.statusCode).toBe(400);
    expect(byLinkedId.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { linked_id: expect.stringContaining('05/2027') } } });
    const byToken = await retained(other, { token: vault.token });
    expect(byToken.statusCode).toBe(400);
    expect(byToken.json()).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { token: expect.stringContaining('05/2027') } } });
    expect(authorisations.length).toBe(before);
    expect(await bookingRow(t, other)).toMatchObject({ status: 'unpaid', transaction_ids: [] });
  });

  it('pay again once the card is vaulted again with its new expiry date', async () => {
    clockMs = Date.parse('2027-06-10T12:00:00Z');
    const renewed = await vaultCard({ month: 6, year: 2031 });
    const booking = await createBooking(t, shop, { total: 1000 });
    const paid = await retained(booking, { linked_id: renewed.id });
    expect(paid.statusCode).toBe(201);
    expect(paid.json().status).toBe('complete');
    expect(authorisations.at(-1)?.card).toMatchObject({ expiryMonth: 6, expiryYear: 2031 });
  });
});
