// The "bare batched purchase" of the ceiling server (docs/performance-history.md, "Batching across
// requests"): trustfare's purchase write set on trustfare's own tables (every index, key, CHECK and
// the ledger's balance trigger), with the processor discipline (the attempt commits before the
// processor is called, the settlement after), written for many concurrent requests at once. Not a
// target's ceiling: it bounds what a service that batches its write path could reach here, where
// `bench/pgbench/purchase-real-schema.sql` bounds one that writes each request on its own.
import type pg from 'pg';
import { allFulfilled, Batcher } from '../src/batcher.js';

/**
 * The attempt for a batch: the API token read, the linked (vault) transaction of the token's site
 * with its card, each booking locked in id order, a transaction row `incomplete` per booking, its
 * share, its Idempotency-Key claimed and the booking's attempt recorded. $1 token hash, $2 linked
 * transaction id, $3 booking ids, $4 keys (one per booking). Each row's uuid is made first so the
 * rows inserted can be matched back to their booking and key.
 */
const attemptStatement = {
  name: 'batched_purchase_attempt',
  text: `WITH auth AS (SELECT site_id, user_id FROM api_tokens WHERE token_hash = $1),
    linked AS (SELECT t.id, t.card_id, t.token, t.card_brand, t.bin_number, t.last_four FROM transactions t JOIN auth ON auth.site_id = t.site_id WHERE t.id = $2),
    requested AS (SELECT r.booking_id, r.key, gen_random_uuid() AS uuid FROM unnest($3::bigint[], $4::text[]) AS r (booking_id, key)),
    booking AS (SELECT b.id, b.site_id, b.channel_id, b.total, r.key, r.uuid FROM bookings b JOIN auth ON auth.site_id = b.site_id JOIN requested r ON r.booking_id = b.id
                 ORDER BY b.id FOR NO KEY UPDATE OF b),
    inserted AS (INSERT INTO transactions (site_id, uuid, channel_id, author_id, source, type, status, total, currency, total_remaining, reserved_total, linked_id,
                                           card_id, token, content, payment_method, language, statement_date, card_brand, bin_number, last_four, attempt_3ds,
                                           created_at, modified_at)
                 SELECT b.site_id, b.uuid, b.channel_id, auth.user_id, 'api', 'retained_purchase', 'incomplete', b.total, 'USD', 0, 0, linked.id,
                        linked.card_id, linked.token, '', 'credit-card', 'enGB', current_date, linked.card_brand, linked.bin_number, linked.last_four, false, now(), now()
                   FROM booking b, auth, linked
                 RETURNING id, uuid, site_id, total),
    matched AS (SELECT i.id, i.uuid, i.site_id, i.total, b.id AS booking_id, b.key FROM inserted i JOIN booking b ON b.uuid = i.uuid),
    shares AS (INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) SELECT id, booking_id, total, 0, 1 FROM matched),
    claimed AS (INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at) SELECT site_id, key, 'bench', 'in_flight', id, now() FROM matched),
    attempted AS (UPDATE bookings b SET transaction_ids = array_append(b.transaction_ids, m.id), modified_at = now() FROM matched m WHERE b.id = m.booking_id)
  SELECT id, uuid, total, key FROM matched`,
};

/** What the sandbox processor records for each approved authorisation (asynchronous commit, as its own pool has). $1 references, $2 amounts. */
const processorStatement = {
  name: 'batched_purchase_processor',
  text: `INSERT INTO sandbox_operations (reference, processor_reference, kind, mode, amount, currency, status, auth_code, message, card_brand, card_last_four)
         SELECT r.reference, 'sbx_' || r.reference, 'authorise', 'test', r.amount, 'USD', 'approved', '123456', 'Approved (sandbox)', 'visa', '1111'
           FROM unnest($1::text[], $2::bigint[]) AS r (reference, amount)`,
};

/**
 * The settlement for a batch: the rows locked, `complete`, their shares restored, two balanced
 * ledger entries each, the bookings' money and status, a mail request each and the answer stored
 * for each key. $1 transaction ids, $2 their keys, $3 the answer. The mail requests are set aside
 * (`last_error`) so the service's delivery job leaves them alone: the write is the same, and the
 * runs after this one are not slowed by rendering these mails.
 */
const settleStatement = {
  name: 'batched_purchase_settle',
  text: `WITH locked AS (SELECT id FROM transactions WHERE id = ANY ($1::bigint[]) ORDER BY id FOR NO KEY UPDATE),
    updated AS (UPDATE transactions t SET status = 'complete', total_remaining = t.total, processor_reference = 'sbx_' || t.uuid, auth_code = '123456',
                                          content = 'Approved (sandbox)', three_ds_status = 'not_attempted', settled_at = now(), modified_at = now()
                  FROM locked WHERE t.id = locked.id AND t.status = 'incomplete' RETURNING t.id, t.site_id, t.channel_id, t.status, t.total),
    restored AS (UPDATE transaction_bookings tb SET total_remaining = tb.total FROM updated u WHERE tb.transaction_id = u.id),
    entries AS (INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
                SELECT u.site_id, u.id, u.channel_id, 'USD', e.account, e.direction, u.total
                  FROM updated u CROSS JOIN (VALUES ('processor_clearing', 'debit'), ('channel_funds', 'credit')) e (account, direction)),
    paid AS (UPDATE bookings b SET total_paid = b.total_paid + u.total, status = 'paid', modified_at = now()
               FROM updated u JOIN transaction_bookings tb ON tb.transaction_id = u.id WHERE b.id = tb.booking_id),
    mails AS (INSERT INTO mail_requests (site_id, transaction_id, status, last_error) SELECT site_id, id, status, 'bench: batched purchase bound, not for delivery' FROM updated),
    answered AS (UPDATE idempotency_keys k SET status = 'done', response_status = 201, response_headers = '{}', response_body = $3, completed_at = now()
                   FROM updated u JOIN unnest($1::bigint[], $2::text[]) AS r (id, key) ON r.id = u.id WHERE k.site_id = u.site_id AND k.key = r.key)
  SELECT id FROM updated`,
};

/** Bookings the bench gives the bare batched purchase to pay in turn: far more than its requests in flight. */
export const batchedPurchaseBookings = 2_000;

export interface BatchedPurchase {
  tokenHash: string;
  linkedId: number;
  bookingId: number;
  key: string;
}

/**
 * Purchases written in batches by src/batcher.ts, as the service writes its settlements: a
 * request that finds a free slot starts a batch at once; those arriving while every slot is busy
 * go together in the next. `onBatch` hears each batch's size. Requests of one token and one linked
 * transaction only (the bench sends one of each).
 */
export function purchaseBatcher(
  pool: pg.Pool, processorPool: pg.Pool, options: { batchMax: number; inFlightMax: number; answer: () => string; onBatch: (size: number) => void },
): Batcher<BatchedPurchase, void> {
  return new Batcher<BatchedPurchase, void>(async (batch) => {
    options.onBatch(batch.length);
    await writeBatch(pool, processorPool, batch, options.answer());
    return allFulfilled(batch.map(() => undefined));
  }, { batchMax: options.batchMax, inFlightMax: options.inFlightMax });
}

async function writeBatch(pool: pg.Pool, processorPool: pg.Pool, batch: BatchedPurchase[], answer: string): Promise<void> {
  const [first] = batch;
  const attempted = await pool.query<{ id: number; uuid: string; total: number; key: string }>({
    ...attemptStatement, values: [first!.tokenHash, first!.linkedId, batch.map((item) => item.bookingId), batch.map((item) => item.key)],
  });
  if (attempted.rowCount !== batch.length) throw new Error(`the batched attempt wrote ${attempted.rowCount} of ${batch.length} rows`);
  await processorPool.query({ ...processorStatement, values: [attempted.rows.map((row) => row.uuid), attempted.rows.map((row) => row.total)] });
  const settled = await pool.query({ ...settleStatement, values: [attempted.rows.map((row) => row.id), attempted.rows.map((row) => row.key), answer] });
  if (settled.rowCount !== batch.length) throw new Error(`the batched settlement wrote ${settled.rowCount} of ${batch.length} rows`);
}
