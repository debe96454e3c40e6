-- The ceiling server's POST /purchase ("bare two-phase purchase") without HTTP: the attempt and
-- the settlement, one statement and one commit each (2 round trips).
\set b random(1, 200000)
\set k random(1, 2000000000)
WITH auth AS (SELECT site_id FROM bench_ceiling.purchase_tokens WHERE hash = '9a3226d432e89aee6eddb00a21da5c06b4d4f8d36b53c232a9be136b2cfb25e7'),
  booking AS (SELECT b.id, b.site_id FROM bench_ceiling.purchase_bookings b JOIN auth ON auth.site_id = b.site_id WHERE b.id = :b FOR UPDATE OF b),
  inserted AS (INSERT INTO bench_ceiling.purchase_transactions (site_id, booking_id, amount, status) SELECT site_id, id, 125000, 'incomplete' FROM booking RETURNING id, site_id),
  claimed AS (INSERT INTO bench_ceiling.purchase_idempotency_keys (site_id, key, transaction_id) SELECT site_id, :client_id || '-' || :k, id FROM inserted)
SELECT id FROM inserted \gset
WITH settled AS (UPDATE bench_ceiling.purchase_transactions SET status = 'complete' WHERE id = :id AND status = 'incomplete' RETURNING id, site_id, booking_id, amount),
  entries AS (INSERT INTO bench_ceiling.purchase_ledger_entries (transaction_id, account, amount) SELECT s.id, e.account, e.sign * s.amount FROM settled s CROSS JOIN (VALUES ('card', 1), ('booking', -1)) e (account, sign)),
  paid AS (UPDATE bench_ceiling.purchase_bookings b SET paid = b.paid + s.amount, status = CASE WHEN b.paid + s.amount >= b.total THEN 'paid' ELSE 'part-paid' END, modified_at = now() FROM settled s WHERE b.id = s.booking_id),
  queued AS (INSERT INTO bench_ceiling.purchase_outbox (transaction_id, kind) SELECT id, 'receipt' FROM settled),
  answered AS (UPDATE bench_ceiling.purchase_idempotency_keys k SET answer = '{}' FROM settled s WHERE k.site_id = s.site_id AND k.key = :client_id || '-' || :k)
SELECT id FROM settled;
