import type { Queryable } from '../../storage/db.js';
import { limits } from '../../limits.js';

/** The columns of a transaction the mails read. */
export interface TransactionRow {
  id: number;
  site_id: number;
  channel_id: number;
  type: string;
  status: string;
  total: number;
  currency: string;
  language: string;
  linked_id: number | null;
  payee_name: string | null;
  payee_surname: string | null;
  payee_email: string | null;
  card_brand: string | null;
  last_four: string | null;
  content: string;
  decline_code: string | null;
  created_at: Date;
  settled_at: Date | null;
  /** Forex columns (migration 007): paid-currency units per channel-currency unit, and the channel side. */
  forex_rate: string | null;
  channel_currency: string | null;
  channel_total: number | null;
}

export interface BookingRow {
  id: number;
  site_id: number;
  reference: string;
  email: string;
  firstname: string;
  surname: string;
  language: string;
  /** This transaction's share of the booking, in the booking (channel) currency. */
  share: number;
  currency: string;
}

export interface ChannelRow {
  id: number;
  name: string;
  language: string;
  currency: string;
  primary_mail: string;
  mail_bcc_transactional_mails: boolean;
  mail_failures: boolean;
  receipt_label: string | null;
  chargeback_mail: string;
  site_name: string;
}

/** Everything a mail about one transaction needs, read in the caller's database transaction. */
export interface TransactionFacts {
  transaction: TransactionRow;
  /** The payment a refund or chargeback applies to (itself for a payment). */
  original: TransactionRow;
  bookings: BookingRow[];
  channel: ChannelRow;
}

const transactionColumns = `id, site_id, channel_id, type, status, total, currency::text AS currency, language, linked_id, payee_name, payee_surname,
  payee_email, card_brand, last_four, content, decline_code, created_at, settled_at, forex_rate::text AS forex_rate, channel_currency::text AS channel_currency,
  channel_total`;

/** Undefined when no such transaction exists. */
export async function loadTransactionFacts(q: Queryable, transactionId: number): Promise<TransactionFacts | undefined> {
  const transaction = await loadTransaction(q, transactionId);
  if (!transaction) return undefined;
  const original = await originalPayment(q, transaction);
  const channel = await q.one<ChannelRow & Record<string, unknown>>(
    `SELECT c.id, c.name, c.language, c.currency::text AS currency, c.primary_mail, c.mail_bcc_transactional_mails, c.mail_failures, c.receipt_label,
            c.chargeback_mail, s.name AS site_name
       FROM channels c JOIN sites s ON s.id = c.site_id
      WHERE c.id = $1`,
    [transaction.channel_id],
  );
  let bookings = await loadBookings(q, transaction.id);
  // A chargeback names only the payment it reverses; its bookings are that payment's.
  if (bookings.length === 0 && original.id !== transaction.id) bookings = await loadBookings(q, original.id);
  return { transaction, original, bookings, channel };
}

async function loadTransaction(q: Queryable, id: number): Promise<TransactionRow | undefined> {
  return q.maybeOne<TransactionRow & Record<string, unknown>>(`SELECT ${transactionColumns} FROM transactions t WHERE id = $1`, [id]);
}

async function loadBookings(q: Queryable, transactionId: number): Promise<BookingRow[]> {
  return q.query<BookingRow & Record<string, unknown>>(
    `SELECT b.id, b.site_id, b.reference, b.email, b.firstname, b.surname, b.language, tb.total AS share, b.currency::text AS currency
       FROM transaction_bookings tb JOIN bookings b ON b.id = tb.booking_id
      WHERE tb.transaction_id = $1
      ORDER BY tb.position, b.id`,
    [transactionId],
  );
}

const followLinkedTypes: ReadonlySet<string> = new Set(['refund', 'chargeback', 'chargeback-reversal', 'chargeback-override', 'void']);

/**
 * Follows linked_id from a refund or chargeback to the payment it applies to, whose language,
 * payer and card the later mails reuse. Bounded by limits.mailLinkedDepthMax.
 */
async function originalPayment(q: Queryable, transaction: TransactionRow): Promise<TransactionRow> {
  let current = transaction;
  for (let hop = 0; hop < limits.mailLinkedDepthMax && followLinkedTypes.has(current.type) && current.linked_id !== null; hop++) {
    const linked = await loadTransaction(q, current.linked_id);
    if (!linked) break;
    current = linked;
  }
  return current;
}
