-- purchase-real-schema.sql's write set on trustfare's own tables, grouped into statements as the
-- service groups them today (the round trips listed by test/payments/round-trips.test.ts with
-- ROUND_TRIPS_LOG=1): the API-token read; the attempt's look-up (channel, booking, linked
-- transaction and its card), its insert (the row, its booking share, the Idempotency-Key, the
-- booking locked) and the booking update; the settlement's lock, its update (status, shares
-- restored, two ledger entries, the booking's money, the mail request), the answer's view and the
-- key's answer. 12 round trips and 2 commits; no processor record, as in the other scripts. Set up
-- and run it exactly as purchase-real-schema.sql. With it and purchase-real-schema-statements.sql
-- (17 round trips) it bounds, in the database alone, what folding each phase into one statement
-- could save (docs/performance-history.md, "Three last levers": "One statement per phase, bounded
-- in the database").
\set k random(1, 2000000000)
SELECT site_id FROM api_tokens WHERE token_hash = :token_hash \gset
BEGIN;
WITH bk AS (SELECT b.id, b.channel_id, b.currency, b.total FROM bookings b
             WHERE b.id = (SELECT id FROM pgb_fresh WHERE n = (SELECT nextval('pgb_seq') % :bookings + 1)) AND b.site_id = :site_id AND b.deleted_at IS NULL)
SELECT c.id AS channel_id, c.name AS channel_name, c.currency AS channel_currency, s.name AS site_name,
       (SELECT json_agg(json_build_object('id', bk.id, 'channel_id', bk.channel_id, 'currency', bk.currency)) FROM bk) AS booking_list,
       (SELECT bk.id FROM bk) AS booking_id, (SELECT bk.total FROM bk) AS total,
       (SELECT row_to_json(l) FROM (SELECT * FROM transactions WHERE id = :vault AND site_id = :site_id) l) AS linked_row,
       k.* 
  FROM channels c JOIN sites s ON s.id = c.site_id
  LEFT JOIN cards k ON k.id = (SELECT card_id FROM transactions WHERE id = :vault AND site_id = :site_id)
 WHERE c.site_id = :site_id AND c.id = (SELECT channel_id FROM transactions WHERE id = :vault AND site_id = :site_id) AND c.deleted_at IS NULL \gset
WITH inserted AS (INSERT INTO transactions (site_id, channel_id, author_id, source, type, status, total, currency, total_remaining, reserved_total, linked_id,
                                            card_id, token, content, payment_method, language, statement_date, card_brand, bin_number, last_four, attempt_3ds,
                                            created_at, modified_at)
                  VALUES (:site_id, :channel_id, :user, 'api', 'retained_purchase', 'incomplete', :total, 'USD', 0, 0, :vault, :card, :token, '', 'credit-card',
                          'enGB', current_date, 'visa', '411111', '1111', false, now(), now()) RETURNING *),
  shares AS (INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) SELECT inserted.id, :booking_id, :total, 0, 1 FROM inserted),
  claim AS (INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at)
            SELECT :site_id, 'pgbv-' || :client_id || '-' || :k, 'hash', 'in_flight', inserted.id, now() FROM inserted ON CONFLICT (site_id, key) DO NOTHING RETURNING key),
  locked AS (SELECT b.id, b.total, b.total_paid, b.status FROM bookings b WHERE b.id = :booking_id FOR NO KEY UPDATE)
SELECT inserted.id, EXISTS (SELECT 1 FROM claim) AS claimed, (SELECT json_agg(locked) FROM locked) AS locked_bookings FROM inserted \gset
UPDATE bookings SET transaction_ids = array_append(transaction_ids, :id::bigint), modified_at = now() WHERE id = :booking_id;
COMMIT;
BEGIN;
SELECT * FROM transactions WHERE id = :id FOR NO KEY UPDATE;
WITH updated AS (UPDATE transactions t SET status = 'complete', total_remaining = t.total, processor_reference = 'sandbox-ref', auth_code = '123456', content = 'Approved',
                                           three_ds_status = 'not_attempted', settled_at = now(), modified_at = now() WHERE t.id = :id RETURNING t.id, t.site_id, t.channel_id, t.status, t.total),
  restored AS (UPDATE transaction_bookings SET total_remaining = total WHERE transaction_id = :id),
  entries AS (INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
              SELECT u.site_id, u.id, u.channel_id, 'USD', e.account, e.direction, u.total
                FROM updated u CROSS JOIN (VALUES ('processor_clearing', 'debit'), ('channel_funds', 'credit')) e (account, direction)),
  paid AS (UPDATE bookings b SET total_paid = b.total_paid + u.total, status = 'paid', modified_at = now() FROM updated u WHERE b.id = :booking_id),
  mails AS (INSERT INTO mail_requests (site_id, transaction_id, status) SELECT site_id, id, status FROM updated)
SELECT id FROM updated;
SELECT t.*, u.display_name AS author_name, c.channel_secret, s.path AS site_path,
       coalesce((SELECT json_agg(json_build_object('transaction_id', tb.transaction_id, 'booking_id', tb.booking_id, 'total', tb.total)) FROM transaction_bookings tb WHERE tb.transaction_id = t.id), '[]'::json) AS shares
  FROM transactions t JOIN users u ON u.id = t.author_id JOIN channels c ON c.id = t.channel_id JOIN sites s ON s.id = t.site_id WHERE t.id = :id;
UPDATE idempotency_keys SET status = 'done', response_status = 201, response_headers = '{}', response_body = repeat('x', 1500), completed_at = now()
 WHERE site_id = :site_id AND key = 'pgbv-' || :client_id || '-' || :k;
COMMIT;
