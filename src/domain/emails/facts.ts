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
/** The payee fields of a transaction. */
export type PayerRow = Pick<TransactionRow, 'payee_email' | 'payee_name' | 'payee_surname'>;

export interface TransactionFacts {
  transaction: TransactionRow;
  /** The payment a refund or chargeback applies to (itself for a payment). */
  original: TransactionRow;
  /**
   * When `original` is a capture: the payer named on the authorisation it captured (a capture
   * takes no payee fields of its own, docs/payments.md), so its receipt, and the refund and
   * chargeback mails of it, reach that payer rather than the booking's lead traveller.
   */
  capturedFrom: PayerRow | null;
  bookings: BookingRow[];
  /**
   * The lead traveller of the original payment's first booking: the payer when no payee field
   * names one, for every mail of that payment. A refund's or chargeback's own shares (`bookings`)
   * may start with another booking of the payment, whose traveller never paid.
   */
  payerBooking: PayerBookingRow | null;
  channel: ChannelRow;
}

export type PayerBookingRow = Pick<BookingRow, 'email' | 'firstname' | 'surname' | 'language'>;

const transactionColumns = (t: string) => `${t}.id, ${t}.site_id, ${t}.channel_id, ${t}.type, ${t}.status, ${t}.total, ${t}.currency::text AS currency,
  ${t}.language, ${t}.linked_id, ${t}.payee_name, ${t}.payee_surname, ${t}.payee_email, ${t}.card_brand, ${t}.last_four, ${t}.content, ${t}.decline_code,
  ${t}.created_at, ${t}.settled_at, ${t}.forex_rate::text AS forex_rate, ${t}.channel_currency::text AS channel_currency, ${t}.channel_total`;

// Types whose mails reuse the language, payer and card of the payment they apply to.
const followLinkedTypes = ['refund', 'chargeback', 'chargeback-reversal', 'chargeback-override', 'void'];

/**
 * One statement for a batch of transactions (the delivery job renders a batch of requests at a
 * time, docs/emails.md "Throughput"): for each, the transaction, the payment it applies to
 * (linked_id followed from a refund or chargeback, at most limits.mailLinkedDepthMax hops,
 * stopping at a missing row or a type that does not follow), its channel with the site name, and
 * its bookings, or, when it names none (a chargeback), those of that payment.
 */
const factsStatement = {
  name: 'mail_transaction_facts',
  text: `WITH RECURSIVE chain AS (
           SELECT t.id AS root_id, ${transactionColumns('t')}, 0 AS hop FROM transactions t WHERE t.id = ANY($1::bigint[])
           UNION ALL
           SELECT chain.root_id, ${transactionColumns('l')}, chain.hop + 1
             FROM chain JOIN transactions l ON l.id = chain.linked_id
            WHERE chain.hop < $2 AND chain.type = ANY($3::text[])
         ),
         own AS (SELECT * FROM chain WHERE hop = 0),
         original AS (SELECT DISTINCT ON (root_id) * FROM chain ORDER BY root_id, hop DESC)
  SELECT own.id,
         to_json(own) AS transaction,
         to_json(original) AS original,
         (SELECT json_build_object('payee_email', a.payee_email, 'payee_name', a.payee_name, 'payee_surname', a.payee_surname)
            FROM transactions a WHERE original.type = 'capture' AND a.id = original.linked_id) AS captured_from,
         (SELECT to_json(x) FROM (
            SELECT c.id, c.name, c.language, c.currency::text AS currency, c.primary_mail, c.mail_bcc_transactional_mails, c.mail_failures, c.receipt_label,
                   c.chargeback_mail, s.name AS site_name
              FROM channels c JOIN sites s ON s.id = c.site_id
             WHERE c.id = own.channel_id) x) AS channel,
         (SELECT coalesce(json_agg(json_build_object('id', b.id, 'site_id', b.site_id, 'reference', b.reference, 'email', b.email, 'firstname', b.firstname,
                   'surname', b.surname, 'language', b.language, 'share', tb.total, 'currency', b.currency::text) ORDER BY tb.position, b.id), '[]'::json)
            FROM transaction_bookings tb JOIN bookings b ON b.id = tb.booking_id
           WHERE tb.transaction_id = CASE WHEN EXISTS (SELECT 1 FROM transaction_bookings WHERE transaction_id = own.id) THEN own.id ELSE original.id END
         ) AS bookings,
         (SELECT json_build_object('email', b.email, 'firstname', b.firstname, 'surname', b.surname, 'language', b.language)
            FROM transaction_bookings tb JOIN bookings b ON b.id = tb.booking_id
           WHERE tb.transaction_id = original.id ORDER BY tb.position, b.id LIMIT 1) AS payer_booking
    FROM own JOIN original ON original.root_id = own.root_id`,
};

/** A chain row as JSON: the transaction's columns, and the chain's own `root_id` and `hop`. */
type JsonTransaction = Omit<TransactionRow, 'created_at' | 'settled_at'> & { created_at: string; settled_at: string | null; root_id: number; hop: number };

/** The facts of each transaction that exists, by id. */
export async function loadFactsOfTransactions(q: Queryable, transactionIds: readonly number[]): Promise<Map<number, TransactionFacts>> {
  const rows = await q.query<{
    id: number; transaction: JsonTransaction; original: JsonTransaction; captured_from: PayerRow | null; channel: ChannelRow | null; bookings: BookingRow[]; payer_booking: PayerBookingRow | null;
  }>(factsStatement, [
    transactionIds,
    limits.mailLinkedDepthMax,
    followLinkedTypes,
  ]);
  const facts = new Map<number, TransactionFacts>();
  for (const row of rows) {
    if (!row.channel) throw new Error(`transaction ${row.id}: its channel ${row.transaction.channel_id} does not exist`);
    facts.set(row.id, {
      transaction: fromJson(row.transaction), original: fromJson(row.original), capturedFrom: row.captured_from, bookings: row.bookings, payerBooking: row.payer_booking ?? row.bookings[0] ?? null,
      channel: row.channel,
    });
  }
  return facts;
}

/** Undefined when no such transaction exists. */
export async function loadTransactionFacts(q: Queryable, transactionId: number): Promise<TransactionFacts | undefined> {
  return (await loadFactsOfTransactions(q, [transactionId])).get(transactionId);
}

// JSON carries timestamps as ISO strings; the mails format Dates. The chain's own columns are
// dropped here rather than in SQL: removing keys from a jsonb (and jsonb itself) cost the
// statement 40% more than plain json (docs/emails.md "Throughput").
function fromJson({ root_id: _root, hop: _hop, ...row }: JsonTransaction): TransactionRow {
  return { ...row, created_at: new Date(row.created_at), settled_at: row.settled_at === null ? null : new Date(row.settled_at) };
}
