import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { createBooking, createShop, paymentsContext, post, purchaseBody, type Shop } from '../payments/support.js';

// Migration 015: the database itself refuses a row of one site that names another site's
// transaction or channel, whatever code writes it (docs/scaling.md, "What keeps this possible").

let t: TestContext;
let shopA: Shop;
let shopB: Shop;
let purchaseId: number;
beforeAll(async () => {
  t = await paymentsContext();
  shopA = await createShop(t);
  shopB = await createShop(t);
  const booking = await createBooking(t, shopA, { total: 5000 });
  const answer = await post(t, shopA, purchaseBody(shopA, booking, 5000));
  expect(answer.statusCode).toBe(201);
  purchaseId = answer.json().id;
});
afterAll(async () => t.close());

/** Runs `sql` in a transaction that is always rolled back; resolves with the error, if any. */
async function refusal(sql: string, values: unknown[]): Promise<string | null> {
  try {
    await t.db.transaction(async (tx) => {
      await tx.query(sql, values);
      throw new Error('accepted');
    });
  } catch (error) {
    const message = (error as Error).message;
    return message === 'accepted' ? null : message;
  }
  return null;
}

const ledgerEntry = `INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
                     VALUES ($1, $2, $3, 'USD', 'processor_clearing', 'debit', 100), ($1, $2, $3, 'USD', 'channel_funds', 'credit', 100)`;
const outboxMail = `INSERT INTO email_outbox (site_id, transaction_id, kind, language, from_name, to_addresses, subject, text_body, html_body)
                    VALUES ($1, $2, 'refund', 'enGB', 'Shop', ARRAY['payer@example.com'], 's', 't', 'h')`;

describe('tenant integrity', () => {
  it('refuses ledger entries of one site for another site\'s transaction, and accepts them for its own', async () => {
    expect(await refusal(ledgerEntry, [shopB.site.siteId, purchaseId, shopB.channelId])).toMatch(/ledger_entries_transaction_same_site_fk/);
    expect(await refusal(ledgerEntry, [shopA.site.siteId, purchaseId, shopA.channelId])).toBeNull();
  });

  it('refuses an outbox mail, an allocation or an Idempotency-Key record that names another site\'s transaction', async () => {
    expect(await refusal(outboxMail, [shopB.site.siteId, purchaseId])).toMatch(/email_outbox_transaction_same_site_fk/);
    expect(await refusal(outboxMail, [shopA.site.siteId, purchaseId])).toBeNull();
    expect(await refusal(
      `INSERT INTO allocations (site_id, transaction_id, from_channel_id, to_channel_id, applied, operator, value, currency, total, paid_currency, paid_total, channel_currency, channel_total)
       VALUES ($1, $2, $3, $4, false, 'flat', 100, 'USD', 100, 'USD', 100, 'USD', 100)`,
      [shopB.site.siteId, purchaseId, shopA.channelId, shopB.channelId],
    )).toMatch(/allocations_transaction_same_site_fk/);
    expect(await refusal(
      `INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id) VALUES ($1, 'cross-site', 'x', 'in_flight', $2)`,
      [shopB.site.siteId, purchaseId],
    )).toMatch(/idempotency_keys_transaction_same_site_fk/);
  });

  it('refuses a booking, a transaction or a card on a channel of another site', async () => {
    const booking = await refusal(
      `INSERT INTO bookings (site_id, channel_id, author_id, firstname, surname, email, date_end, total, currency, country)
       VALUES ($1, $2, $3, 'Ada', 'Lovelace', 'ada@example.com', '2027-01-01', 100, 'USD', 'GB')`,
      [shopB.site.siteId, shopA.channelId, shopB.site.userId],
    );
    expect(booking).toMatch(/bookings_channel_same_site_fk/);
    const transaction = await refusal(
      `INSERT INTO transactions (site_id, channel_id, type, status, total, currency) VALUES ($1, $2, 'purchase', 'incomplete', 100, 'USD')`,
      [shopB.site.siteId, shopA.channelId],
    );
    expect(transaction).toMatch(/transactions_site_id_channel_id_fkey/);
    const card = await refusal(
      `INSERT INTO cards (site_id, channel_id, token, fingerprint, bin, last_four, brand, expiry_month, expiry_year, currency, account_type, is_test_card, key_id, wrapped_key, pan_ciphertext)
       VALUES ($1, $2, repeat('A', 32), '\\x00', '411111', '1111', 'visa', 12, 2030, 'USD', 'standard', true, 'k1', '\\x00', '\\x00')`,
      [shopB.site.siteId, shopA.channelId],
    );
    expect(card).toMatch(/cards_channel_same_site_fk/);
  });
});
