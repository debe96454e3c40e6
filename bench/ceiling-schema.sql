-- The ceiling server's tables (bench/ceiling-server.ts), also used by the pgbench scripts in
-- bench/pgbench (docs/performance-history.md "The floor of a purchase"). Recreated at every start.
DROP SCHEMA IF EXISTS bench_ceiling CASCADE;
CREATE SCHEMA bench_ceiling;

-- POST /tx, the "bare 3-statement tx": lock an account, insert an entry, update the account.
CREATE TABLE bench_ceiling.accounts (id bigint PRIMARY KEY, balance bigint NOT NULL DEFAULT 0, modified_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE bench_ceiling.entries (id bigserial PRIMARY KEY, account_id bigint NOT NULL REFERENCES bench_ceiling.accounts (id), amount bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO bench_ceiling.accounts (id) SELECT generate_series(1, 200000);

-- POST /purchase, the "bare two-phase purchase": the smallest tables that hold what issue 7 lists
-- for a purchase (the API token, the booking, the transaction row, its ledger entries, the outbox
-- row, the Idempotency-Key with its answer). No constraint or index beyond the keys.
CREATE TABLE bench_ceiling.purchase_tokens (hash text PRIMARY KEY, site_id bigint NOT NULL);
INSERT INTO bench_ceiling.purchase_tokens VALUES (encode(sha256('bench-ceiling'), 'hex'), 1);
CREATE TABLE bench_ceiling.purchase_bookings (id bigint PRIMARY KEY, site_id bigint NOT NULL, total bigint NOT NULL, paid bigint NOT NULL DEFAULT 0, status text NOT NULL DEFAULT 'unpaid', modified_at timestamptz NOT NULL DEFAULT now());
INSERT INTO bench_ceiling.purchase_bookings (id, site_id, total) SELECT generate_series(1, 200000), 1, 125000;
CREATE TABLE bench_ceiling.purchase_transactions (id bigserial PRIMARY KEY, site_id bigint NOT NULL, booking_id bigint NOT NULL REFERENCES bench_ceiling.purchase_bookings (id), amount bigint NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE bench_ceiling.purchase_ledger_entries (id bigserial PRIMARY KEY, transaction_id bigint NOT NULL REFERENCES bench_ceiling.purchase_transactions (id), account text NOT NULL, amount bigint NOT NULL);
CREATE TABLE bench_ceiling.purchase_outbox (id bigserial PRIMARY KEY, transaction_id bigint NOT NULL REFERENCES bench_ceiling.purchase_transactions (id), kind text NOT NULL);
CREATE TABLE bench_ceiling.purchase_idempotency_keys (site_id bigint NOT NULL, key text NOT NULL, transaction_id bigint, answer text, PRIMARY KEY (site_id, key));
ANALYZE bench_ceiling.accounts;
ANALYZE bench_ceiling.purchase_tokens;
ANALYZE bench_ceiling.purchase_bookings;
