-- `purchase-real-schema.sql` for :batch bookings at once: the same write set on trustfare's own
-- tables in the same two statements, each writing :batch purchases (docs/performance-history.md,
-- "Batching across requests"). pgbench's tps times :batch is the purchases per second.
--
-- Set up as for purchase-real-schema.sql, plus a sequence stepping by 10:
--   psql … -c "CREATE SEQUENCE pgb_seq10 INCREMENT 10"
--   pgbench -n -M prepared -c4 -j2 -T6 -D batch=10 <the -D variables of purchase-real-schema.sql> -f bench/pgbench/purchase-real-schema-batched.sql …
-- Clients take windows of :batch bookings 10 apart; with :batch above 10 neighbouring windows
-- overlap and wait for each other's locks, as two requests for one booking would. Each row's
-- booking id rides in ip_address (text) so the statement can match the rows it inserted.
\set k random(1, 2000000000)
SELECT nextval('pgb_seq10') AS s \gset
WITH auth AS (SELECT site_id FROM api_tokens WHERE token_hash = :token_hash),
  booking AS (SELECT b.id, b.site_id, b.channel_id, b.total FROM bookings b JOIN auth ON auth.site_id = b.site_id
               WHERE b.id IN (SELECT id FROM pgb_fresh WHERE n BETWEEN (:s::bigint % :bookings::bigint) + 1 AND (:s::bigint % :bookings::bigint) + :batch::bigint) ORDER BY b.id FOR NO KEY UPDATE OF b),
  inserted AS (INSERT INTO transactions (site_id, channel_id, author_id, source, type, status, total, currency, total_remaining, reserved_total, linked_id,
                                         card_id, token, content, payment_method, language, statement_date, card_brand, bin_number, last_four, attempt_3ds,
                                         created_at, modified_at, ip_address)
               SELECT site_id, channel_id, :user, 'api', 'retained_purchase', 'incomplete', total, 'USD', 0, 0, :vault, :card, :token, '', 'credit-card',
                      'enGB', current_date, 'visa', '411111', '1111', false, now(), now(), id::text FROM booking RETURNING id, site_id, ip_address::bigint AS booking_id, total),
  shares AS (INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) SELECT i.id, i.booking_id, i.total, 0, 1 FROM inserted i),
  claimed AS (INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at)
              SELECT site_id, 'pgb-' || :client_id || '-' || id, 'hash', 'in_flight', id, now() FROM inserted),
  attempt AS (UPDATE bookings b SET transaction_ids = array_append(b.transaction_ids, i.id), modified_at = now() FROM inserted i WHERE b.id = i.booking_id)
SELECT array_agg(id)::text AS ids FROM inserted \gset
WITH locked AS (SELECT id FROM transactions WHERE id = ANY (:ids::bigint[]) ORDER BY id FOR NO KEY UPDATE),
  updated AS (UPDATE transactions t SET status = 'complete', total_remaining = t.total, processor_reference = 'sandbox-ref', auth_code = '123456', content = 'Approved',
                                        three_ds_status = 'not_attempted', settled_at = now(), modified_at = now()
                FROM locked WHERE t.id = locked.id RETURNING t.id, t.site_id, t.channel_id, t.status, t.total),
  restored AS (UPDATE transaction_bookings SET total_remaining = total WHERE transaction_id = ANY (:ids::bigint[])),
  entries AS (INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
              SELECT u.site_id, u.id, u.channel_id, 'USD', e.account, e.direction, u.total
                FROM updated u CROSS JOIN (VALUES ('processor_clearing', 'debit'), ('channel_funds', 'credit')) e (account, direction)),
  paid AS (UPDATE bookings b SET total_paid = b.total_paid + u.total, status = 'paid', modified_at = now()
             FROM updated u, transaction_bookings tb WHERE tb.transaction_id = u.id AND b.id = tb.booking_id),
  mails AS (INSERT INTO mail_requests (site_id, transaction_id, status) SELECT site_id, id, status FROM updated),
  answered AS (UPDATE idempotency_keys k SET status = 'done', response_status = 201, response_headers = '{}', response_body = repeat('x', 1500), completed_at = now()
                 FROM updated u WHERE k.site_id = u.site_id AND k.key = 'pgb-' || :client_id || '-' || u.id)
SELECT count(*) FROM updated;
