-- trustfare's own purchase write set on its own tables (every index, key, CHECK and the ledger's
-- balance trigger), in two statements as the bare two-phase purchase makes it: the attempt
-- (API-token read, booking locked, transaction row, booking share, Idempotency-Key claimed, booking
-- updated) and the settlement (row locked, status, shares restored, two ledger entries, booking
-- money, mail request, the key's answer). No processor record and no view: the same write set as
-- `purchase-two-phases.sql`, whose tables carry keys only (docs/performance-history.md, "The real
-- schema's floor").
--
-- Run it on the database of `npm run bench:serve` (its PostgreSQL port from `ss -ltnp`, user
-- postgres, password trustfare, database trustfare), with the tenant's ids as variables:
--   psql … -c "CREATE TABLE pgb_fresh AS SELECT row_number() OVER (ORDER BY id) AS n, id FROM bookings
--              WHERE total_paid = 0 AND channel_id = <channel>; CREATE UNIQUE INDEX ON pgb_fresh (n);
--              CREATE SEQUENCE pgb_seq; ANALYZE pgb_fresh"
--   pgbench -n -M prepared -c50 -j2 -T8 -D token_hash=<api_tokens.token_hash> -D user=<users.id>
--           -D vault=<vault transaction id> -D card=<its card_id> -D token=<its token>
--           -D bookings=<count of pgb_fresh> -f bench/pgbench/purchase-real-schema.sql …
-- Bookings are reused in turn once all are paid; nothing here checks a booking's total.
\set k random(1, 2000000000)
WITH auth AS (SELECT site_id FROM api_tokens WHERE token_hash = :token_hash),
  booking AS (SELECT b.id, b.site_id, b.channel_id, b.total FROM bookings b JOIN auth ON auth.site_id = b.site_id
               WHERE b.id = (SELECT id FROM pgb_fresh WHERE n = (SELECT nextval('pgb_seq') % :bookings + 1)) FOR NO KEY UPDATE OF b),
  inserted AS (INSERT INTO transactions (site_id, channel_id, author_id, source, type, status, total, currency, total_remaining, reserved_total, linked_id,
                                         card_id, token, content, payment_method, language, statement_date, card_brand, bin_number, last_four, attempt_3ds,
                                         created_at, modified_at)
               SELECT site_id, channel_id, :user, 'api', 'retained_purchase', 'incomplete', total, 'USD', 0, 0, :vault, :card, :token, '', 'credit-card',
                      'enGB', current_date, 'visa', '411111', '1111', false, now(), now() FROM booking RETURNING id, site_id),
  shares AS (INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) SELECT i.id, b.id, b.total, 0, 1 FROM inserted i, booking b),
  claimed AS (INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at)
              SELECT site_id, 'pgb-' || :client_id || '-' || :k, 'hash', 'in_flight', id, now() FROM inserted),
  attempt AS (UPDATE bookings b SET transaction_ids = array_append(b.transaction_ids, i.id), modified_at = now() FROM inserted i, booking WHERE b.id = booking.id)
SELECT id FROM inserted \gset
WITH locked AS (SELECT id FROM transactions WHERE id = :id FOR NO KEY UPDATE),
  updated AS (UPDATE transactions t SET status = 'complete', total_remaining = t.total, processor_reference = 'sandbox-ref', auth_code = '123456', content = 'Approved',
                                        three_ds_status = 'not_attempted', settled_at = now(), modified_at = now()
                FROM locked WHERE t.id = locked.id RETURNING t.id, t.site_id, t.channel_id, t.status, t.total),
  restored AS (UPDATE transaction_bookings SET total_remaining = total WHERE transaction_id = :id),
  entries AS (INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
              SELECT u.site_id, u.id, u.channel_id, 'USD', e.account, e.direction, u.total
                FROM updated u CROSS JOIN (VALUES ('processor_clearing', 'debit'), ('channel_funds', 'credit')) e (account, direction)),
  paid AS (UPDATE bookings b SET total_paid = b.total_paid + u.total, status = 'paid', modified_at = now()
             FROM updated u, transaction_bookings tb WHERE tb.transaction_id = u.id AND b.id = tb.booking_id),
  mails AS (INSERT INTO mail_requests (site_id, transaction_id, status) SELECT site_id, id, status FROM updated),
  answered AS (UPDATE idempotency_keys k SET status = 'done', response_status = 201, response_headers = '{}', response_body = repeat('x', 1500), completed_at = now()
                 FROM updated u WHERE k.site_id = u.site_id AND k.key = 'pgb-' || :client_id || '-' || :k)
SELECT id FROM updated;
