import type { Db, Queryable } from '../../../src/storage/db.js';
import { requestMails } from '../../../src/domain/emails/outbox.js';
import { createSite, type SiteFixture } from '../../support/fixtures.js';

export interface ChannelOptions {
  name?: string;
  currency?: string;
  language?: string;
  primaryMail?: string;
  bccTransactionalMails?: boolean;
  mailFailures?: boolean;
  receiptLabel?: string | null;
  chargebackMail?: string;
}

export async function insertChannel(db: Queryable, site: SiteFixture, options: ChannelOptions = {}): Promise<number> {
  const name = options.name ?? 'Sunny Tours';
  const row = await db.one<{ id: number }>(
    `INSERT INTO channels (site_id, name, slug, currency, language, primary_mail, mail_bcc_transactional_mails, mail_failures, receipt_label, chargeback_mail)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
    [site.siteId, name, `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${Math.random().toString(36).slice(2, 8)}`, options.currency ?? 'EUR', options.language ?? 'enGB',
      options.primaryMail ?? '', options.bccTransactionalMails ?? false, options.mailFailures ?? false, options.receiptLabel ?? null, options.chargebackMail ?? ''],
  );
  return row.id;
}

export interface BookingOptions {
  channelId: number;
  email?: string;
  firstname?: string;
  surname?: string;
  language?: string;
  reference?: string;
  total?: number;
  currency?: string;
}

export async function insertBooking(db: Queryable, site: SiteFixture, options: BookingOptions): Promise<number> {
  const row = await db.one<{ id: number }>(
    `INSERT INTO bookings (site_id, channel_id, author_id, firstname, surname, email, date_end, reference, total, currency, country, language)
     VALUES ($1, $2, $3, $4, $5, $6, '2030-06-30', $7, $8, $9, 'GB', $10) RETURNING id`,
    [site.siteId, options.channelId, site.userId, options.firstname ?? 'Anna', options.surname ?? 'Traveller', options.email ?? 'anna@example.com',
      options.reference ?? 'REF-1', options.total ?? 125_000, options.currency ?? 'EUR', options.language ?? 'enGB'],
  );
  return row.id;
}

export interface TransactionOptions {
  channelId: number;
  type: string;
  status: string;
  total: number;
  currency?: string;
  language?: string;
  linkedId?: number | null;
  payeeName?: string | null;
  payeeSurname?: string | null;
  payeeEmail?: string | null;
  cardBrand?: string | null;
  lastFour?: string | null;
  binNumber?: string | null;
  content?: string;
  declineCode?: string | null;
  bookings?: { id: number; total: number }[];
}

export async function insertTransaction(db: Queryable, site: SiteFixture, options: TransactionOptions): Promise<number> {
  const row = await db.one<{ id: number }>(
    `INSERT INTO transactions (site_id, channel_id, author_id, type, status, total, currency, language, linked_id, payee_name, payee_surname, payee_email,
                               card_brand, last_four, bin_number, content, decline_code, settled_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, '2026-03-14T09:30:00Z') RETURNING id`,
    [site.siteId, options.channelId, site.userId, options.type, options.status, options.total, options.currency ?? 'EUR', options.language ?? 'enGB',
      options.linkedId ?? null, options.payeeName ?? null, options.payeeSurname ?? null, options.payeeEmail ?? null, options.cardBrand ?? 'visa',
      options.lastFour === undefined ? '1111' : options.lastFour, options.binNumber ?? '411111', options.content ?? '', options.declineCode ?? null],
  );
  for (const [position, booking] of (options.bookings ?? []).entries()) {
    await db.query('INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) VALUES ($1, $2, $3, $3, $4)', [row.id, booking.id, booking.total, position]);
  }
  return row.id;
}

/**
 * A booking on `channelId` paid in full by a complete purchase, committed with its mails requested
 * as a settlement leaves it; returns the transaction id.
 */
export async function paidWithMailsRequested(db: Db, site: SiteFixture, options: { channelId: number; reference?: string; total?: number; payeeEmail?: string }): Promise<number> {
  const total = options.total ?? 5_000;
  const bookingId = await insertBooking(db, site, { channelId: options.channelId, reference: options.reference, total });
  return db.transaction(async (tx) => {
    const id = await insertTransaction(tx, site, { channelId: options.channelId, type: 'purchase', status: 'complete', total, payeeEmail: options.payeeEmail ?? 'payer@example.com', bookings: [{ id: bookingId, total }] });
    await requestMails(tx, id);
    return id;
  });
}

export { createSite };

/** `count` paid bookings of 10.00 on a new site's channel, referenced `<prefix>0`, `<prefix>1`, ..., with their receipts requested; returns the transaction ids. */
export async function receiptsRequested(db: Db, count: number, prefix: string): Promise<number[]> {
  const site = await createSite(db);
  const channelId = await insertChannel(db, site);
  const ids: number[] = [];
  for (let index = 0; index < count; index++) ids.push(await paidWithMailsRequested(db, site, { channelId, reference: `${prefix}${index}`, total: 1_000 }));
  return ids;
}
