-- The purchase write set one statement per step, in one database transaction: 10 round trips,
-- 1 commit. Compare with purchase-one-statement.sql: the same rows, 9 round trips fewer.
\set b random(1, 200000)
\set k random(1, 2000000000)
SELECT site_id FROM bench_ceiling.purchase_tokens WHERE hash = '9a3226d432e89aee6eddb00a21da5c06b4d4f8d36b53c232a9be136b2cfb25e7';
BEGIN;
SELECT paid, total FROM bench_ceiling.purchase_bookings WHERE id = :b AND site_id = 1 FOR UPDATE;
INSERT INTO bench_ceiling.purchase_idempotency_keys (site_id, key) VALUES (1, :client_id || '-' || :k);
INSERT INTO bench_ceiling.purchase_transactions (site_id, booking_id, amount, status) VALUES (1, :b, 125000, 'complete') RETURNING id \gset
INSERT INTO bench_ceiling.purchase_ledger_entries (transaction_id, account, amount) VALUES (:id, 'card', 125000), (:id, 'booking', -125000);
UPDATE bench_ceiling.purchase_bookings SET paid = paid + 125000, status = CASE WHEN paid + 125000 >= total THEN 'paid' ELSE 'part-paid' END, modified_at = now() WHERE id = :b;
INSERT INTO bench_ceiling.purchase_outbox (transaction_id, kind) VALUES (:id, 'receipt');
UPDATE bench_ceiling.purchase_idempotency_keys SET transaction_id = :id, answer = '{}' WHERE site_id = 1 AND key = :client_id || '-' || :k;
COMMIT;
