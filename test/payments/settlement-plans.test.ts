import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/context.js';
import { renderRequestedMails } from '../../src/domain/emails/outbox.js';
import { wholeTableReadsDuring } from '../support/scans.js';
import { createBooking, post, vaultedShopContext, type Shop } from './support.js';

// Concurrent payments are written in batches (create.ts): statements that join a batch's rows to
// tables that grow with every payment. What a merchant would notice if one of them read such a
// table whole: every payment slower as the history grows (session 17 measured 5 of the
// settlement write's 8 ms on 12,000 transactions).
let t: TestContext;
let shop: Shop;
let vaultId: number;
beforeAll(async () => void ({ t, shop, vaultId } = await vaultedShopContext()));
afterAll(async () => t.close());

/** The tables every payment adds to. */
const grown = ['bookings', 'transactions', 'transaction_bookings', 'idempotency_keys', 'ledger_entries'];

/** The payment's statements that run in a database transaction: its attempt, then its settlement. */
const paymentStatements = [
  'transaction_create_lookup', 'transaction_insert', 'bookings_record_attempt',
  'transaction_lock_for_settlement', 'transactions_settle_views', 'idempotency_store',
];

/** The delivery job's statements that read the payments' facts and write their mails. */
const mailStatements = ['mail_requests_claim', 'mail_transaction_facts', 'mail_outbox_insert'];

/** Paid bookings of the past, written directly: `count` of each grown table's rows. */
async function history(count: number): Promise<void> {
  await t.db.query(
    `WITH booked AS (
       INSERT INTO bookings (site_id, channel_id, author_id, firstname, surname, email, date_end, total, total_paid, status, currency, country, reference)
       SELECT v.site_id, v.channel_id, v.author_id, 'Ada', 'Lovelace', 'ada@example.com', '2099-12-31', 1000, 1000, 'paid', v.currency, 'GB', 'HISTORY-' || g
         FROM transactions v, generate_series(1, $2) g WHERE v.id = $1
       RETURNING id, site_id, channel_id, currency, author_id, reference)
     , made AS (
       INSERT INTO transactions (site_id, channel_id, author_id, type, status, total, currency, linked_id, card_id, content)
       SELECT b.site_id, b.channel_id, b.author_id, 'retained_purchase', 'complete', 1000, b.currency, v.id, v.card_id, b.reference
         FROM booked b, transactions v WHERE v.id = $1
       RETURNING id, site_id, channel_id, currency, content)
     , shares AS (
       INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position)
       SELECT m.id, b.id, 1000, 1000, 1 FROM made m JOIN booked b ON b.reference = m.content)
     , entries AS (
       INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
       SELECT m.site_id, m.id, m.channel_id, m.currency, e.account, e.direction, 1000
         FROM made m CROSS JOIN (VALUES ('processor_clearing', 'debit'), ('channel_funds', 'credit')) e (account, direction))
     INSERT INTO idempotency_keys (site_id, key, request_hash, status, created_at, transaction_id)
     SELECT site_id, 'history-' || id, 'hash', 'done', now(), id FROM made`,
    [vaultId, count],
  );
  await t.db.query(`ANALYZE ${grown.join(', ')}`);
}

describe('a batch of payments on a long history', () => {
  it('finds the rows it reads and writes by key, never reading a table that grows with every payment whole, nor do its mails', async () => {
    await history(6000);
    const bookings = await Promise.all(Array.from({ length: 8 }, () => createBooking(t, shop, { total: 2500 })));
    const pay = () => Promise.all(bookings.map((booking, index) => post(t, shop, {
      transaction_types: 'retained_purchase', channels: shop.channelId, currencies: 'USD', total: 2500, linked_id: vaultId,
      bookings: [{ id: booking, currencies: 'USD', total: 2500 }],
    }, { 'idempotency-key': `long-history-${index}` })));
    const { result: responses, reads } = await wholeTableReadsDuring(paymentStatements, pay);
    expect(responses.map((response) => [response.statusCode, response.json().status])).toEqual(bookings.map(() => [201, 'complete']));
    // Then their mails, rendered by the delivery job's first step from the same history.
    const { result: rendered, reads: mailReads } = await wholeTableReadsDuring(mailStatements, () =>
      renderRequestedMails(t.db, { batchSizeMax: 100, claimedUntil: new Date(Date.now() + 60_000) }));
    // The 8 receipts, and the vaulting of the card the payments charged (requested, no mail).
    expect(rendered).toMatchObject({ requests: 9, written: 8, errors: [] });
    for (const [statement, runs] of [...reads, ...mailReads]) {
      expect(runs.length, statement).toBeGreaterThan(0);
      for (const tables of runs) expect(tables.filter((table) => grown.includes(table)), statement).toEqual([]);
    }
  });
});
