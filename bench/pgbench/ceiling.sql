-- The ceiling server's POST /tx ("bare 3-statement tx") without HTTP: 5 round trips, 1 commit.
\set a random(1, 200000)
BEGIN;
SELECT balance FROM bench_ceiling.accounts WHERE id = :a FOR UPDATE;
INSERT INTO bench_ceiling.entries (account_id, amount) VALUES (:a, 125000) RETURNING id;
UPDATE bench_ceiling.accounts SET balance = balance + 125000, modified_at = now() WHERE id = :a;
COMMIT;
