-- purchase-real-schema.sql with the two reads the service also makes folded into its two
-- statements: the attempt returns the look-up (the channel and its site, the linked transaction as
-- JSON, its card), and the settlement returns the answer's view (the row, its author, the channel
-- secret, the site path, the booking shares). 2 round trips and 2 commits: one statement per phase
-- as a redesign of the write path would send it. Against purchase-real-schema-service.sql (today's
-- grouping, the same reads) it bounds that redesign in the database alone
-- (docs/performance-history.md, "Three last levers"). Set up and run it exactly as
-- purchase-real-schema.sql. The writes are purchase-real-schema.sql's, repeated on purpose: pgbench
-- has no include, and the comparison holds only while both scripts write exactly the same rows.
\set k random(1, 2000000000)
WITH auth AS (SELECT site_id FROM api_tokens WHERE token_hash = :token_hash),
  booking AS (SELECT b.id, b.site_id, b.channel_id, b.total FROM bookings b JOIN auth ON auth.site_id = b.site_id
               WHERE b.id = (SELECT id FROM pgb_fresh WHERE n = (SELECT nextval('pgb_seq') % :bookings + 1)) FOR NO KEY UPDATE OF b),
  lookup AS (SELECT c.id AS channel_id, c.name AS channel_name, c.currency AS channel_currency, s.name AS site_name,
                    (SELECT row_to_json(l) FROM (SELECT * FROM transactions v WHERE v.id = :vault AND v.site_id = c.site_id) l) AS linked_row,
                    (SELECT row_to_json(k) FROM cards k WHERE k.id = (SELECT card_id FROM transactions v WHERE v.id = :vault AND v.site_id = c.site_id)) AS card_row
               FROM channels c JOIN sites s ON s.id = c.site_id JOIN booking ON booking.channel_id = c.id WHERE c.deleted_at IS NULL),
  inserted AS (INSERT INTO transactions (site_id, channel_id, author_id, source, type, status, total, currency, total_remaining, reserved_total, linked_id,
                                         card_id, token, content, payment_method, language, statement_date, card_brand, bin_number, last_four, attempt_3ds,
                                         created_at, modified_at)
               SELECT site_id, channel_id, :user, 'api', 'retained_purchase', 'incomplete', total, 'USD', 0, 0, :vault, :card, :token, '', 'credit-card',
                      'enGB', current_date, 'visa', '411111', '1111', false, now(), now() FROM booking RETURNING *),
  shares AS (INSERT INTO transaction_bookings (transaction_id, booking_id, total, total_remaining, position) SELECT i.id, b.id, b.total, 0, 1 FROM inserted i, booking b),
  claimed AS (INSERT INTO idempotency_keys (site_id, key, request_hash, status, transaction_id, created_at)
              SELECT site_id, 'pgbr-' || :client_id || '-' || :k, 'hash', 'in_flight', id, now() FROM inserted),
  attempt AS (UPDATE bookings b SET transaction_ids = array_append(b.transaction_ids, i.id), modified_at = now() FROM inserted i, booking WHERE b.id = booking.id)
SELECT inserted.id, lookup.* FROM inserted, lookup \gset
WITH locked AS (SELECT id FROM transactions WHERE id = :id FOR NO KEY UPDATE),
  updated AS (UPDATE transactions t SET status = 'complete', total_remaining = t.total, processor_reference = 'sandbox-ref', auth_code = '123456', content = 'Approved',
                                        three_ds_status = 'not_attempted', settled_at = now(), modified_at = now()
                FROM locked WHERE t.id = locked.id RETURNING t.*),
  restored AS (UPDATE transaction_bookings SET total_remaining = total WHERE transaction_id = :id),
  entries AS (INSERT INTO ledger_entries (site_id, transaction_id, channel_id, currency, account, direction, amount)
              SELECT u.site_id, u.id, u.channel_id, 'USD', e.account, e.direction, u.total
                FROM updated u CROSS JOIN (VALUES ('processor_clearing', 'debit'), ('channel_funds', 'credit')) e (account, direction)),
  paid AS (UPDATE bookings b SET total_paid = b.total_paid + u.total, status = 'paid', modified_at = now()
             FROM updated u, transaction_bookings tb WHERE tb.transaction_id = u.id AND b.id = tb.booking_id),
  mails AS (INSERT INTO mail_requests (site_id, transaction_id, status) SELECT site_id, id, status FROM updated),
  answered AS (UPDATE idempotency_keys k SET status = 'done', response_status = 201, response_headers = '{}', response_body = repeat('x', 1500), completed_at = now()
                 FROM updated u WHERE k.site_id = u.site_id AND k.key = 'pgbr-' || :client_id || '-' || :k)
SELECT u.*, a.display_name AS author_name, c.channel_secret, s.path AS site_path,
       coalesce((SELECT json_agg(json_build_object('transaction_id', tb.transaction_id, 'booking_id', tb.booking_id, 'total', tb.total)) FROM transaction_bookings tb WHERE tb.transaction_id = u.id), '[]'::json) AS shares
  FROM updated u JOIN users a ON a.id = u.author_id JOIN channels c ON c.id = u.channel_id JOIN sites s ON s.id = u.site_id;
