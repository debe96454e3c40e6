-- purchase-real-schema.sql's write set on trustfare's own tables, one statement per step, in the
-- same two database transactions (the attempt, then the settlement): 17 round trips and 2 commits
-- instead of 2 and 2. The pair bounds what folding the service's write path into one statement per
-- phase could save in the database (docs/performance-history.md, "Three last levers", "One
-- statement per phase, bounded in the database"). Set up and run it exactly as
-- purchase-real-schema.sql (same variables, same pgb_fresh table and pgb_seq sequence).
\set k random(1, 2000000000)
BEGIN;
SELECT site_id FROM api_tokens WHERE token_hash = :token_hash \gset
SELECT b.id AS booking_id, b.channel_id, b.total FROM bookings b WHERE b.id = (SELECT id FROM pgb_fresh WHERE n = (SELECT nextval('pgb_seq') % :bookings + 1)) AND b.site_id = :site_id FOR NO KEY UPDATE \gset
INSERT INTO transactions (site_id, channel_id, author_id, source, type, status, total, currency, total_remaining, reserved_total, linked_id,
                          card_id, token, content, payment_method, language, statement_date, card_brand, bin_number, last_four, attempt_3ds,
                          created_at, modified_at)
  VALUES (:site_id, :channel_id, :user, 'api', 'retained_purchase', 'incomplete', :total, 'USD', 0, 0, :vault, :card, :token, '', 'credit-card',
          'enGB', current_date, 'visa', '411111', '1111', false, now(), now()) RETURNING id \gset
INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) VALUES (:id, :booking_id, :total, 0, 1);
INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at)
  VALUES (:site_id, 'pgbs-' || :client_id || '-' || :k, 'hash', 'in_flight', :id, now());
UPDATE bookings SET transaction_ids = array_append(transaction_ids, :id::bigint), modified_at = now() WHERE id = :booking_id;
COMMIT;
BEGIN;
SELECT id FROM transactions WHERE id = :id FOR NO KEY UPDATE;
UPDATE transactions SET status = 'complete', total_remaining = total, processor_reference = 'sandbox-ref', auth_code = '123456', content = 'Approved',
                        three_ds_status = 'not_attempted', settled_at = now(), modified_at = now() WHERE id = :id;
UPDATE transaction_bookings SET total_remaining = total WHERE transaction_id = :id;
INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
  VALUES (:site_id, :id, :channel_id, 'USD', 'processor_clearing', 'debit', :total), (:site_id, :id, :channel_id, 'USD', 'channel_funds', 'credit', :total);
UPDATE bookings SET total_paid = total_paid + :total, status = 'paid', modified_at = now() WHERE id = :booking_id;
INSERT INTO mail_requests (site_id, transaction_id, status) VALUES (:site_id, :id, 'complete');
UPDATE idempotency_keys SET status = 'done', response_status = 201, response_headers = '{}', response_body = repeat('x', 1500), completed_at = now()
  WHERE site_id = :site_id AND key = 'pgbs-' || :client_id || '-' || :k;
COMMIT;
