-- The lists at a large company's size (docs/performance.md "Query plans at a company's size":
-- 300,000 bookings and 1,000,000 transactions on one site). Every index here but the last
-- replaces one of the same table with the same key columns, so the writes keep their count of
-- index entries.

-- Ties of every sort are broken by id (src/http/pagination.ts orderBySql). An index whose key
-- ends with the sort column gives the rows in that column's order only: a page sorted by
-- created, date or surname read every row of the site and sorted them (1.0 to 1.8 s for the last
-- pages), or walked the index with an incremental sort per timestamp. With id in the key the
-- index gives the list's whole order, and a page's ids come from an index-only scan.
CREATE INDEX transactions_site_created_id_idx ON transactions (site_id, created_at, id);
DROP INDEX transactions_site_created_idx;
CREATE INDEX bookings_site_created_id_idx ON bookings (site_id, created_at, id) WHERE deleted_at IS NULL;
DROP INDEX bookings_site_created_idx;
CREATE INDEX bookings_site_date_end_id_idx ON bookings (site_id, date_end, id) WHERE deleted_at IS NULL;
DROP INDEX bookings_site_date_end_idx;

-- Text sorts by code point (COLLATE "C", migration 050). These indexes were in the database's
-- collation, so orderby=surname and orderby=reference sorted the whole site (about 1 s); the
-- surname= and reference= filters now compare in "C" too (equality is the same in any
-- deterministic collation, and a database's default collation is always deterministic).
CREATE INDEX bookings_site_surname_code_point_idx ON bookings (site_id, (surname COLLATE "C"), id) WHERE deleted_at IS NULL;
DROP INDEX bookings_site_surname_idx;
CREATE INDEX bookings_site_reference_code_point_idx ON bookings (site_id, (reference COLLATE "C"), id) WHERE deleted_at IS NULL;
DROP INDEX bookings_site_reference_idx;

-- The planner takes no statistics from a partial index's expressions, so it guessed that one
-- payee_email= matched 0.5% of the rows and walked the whole site in id order to find five
-- (1.0 s). Statistics of the expression itself (no cost to writes, built by ANALYZE) let it use
-- transactions_site_payee_email_idx; the same for the bookings' email= filter.
CREATE STATISTICS transactions_payee_email_stats ON (lower(payee_email COLLATE "C")) FROM transactions;
CREATE STATISTICS bookings_email_stats ON (lower(email COLLATE "C")) FROM bookings;

-- last_four_digits= (a payment found by the card's last four digits, the support desk's
-- question) read every transaction of the site (3.1 s). One more index entry per transaction
-- written: its cost on the payment path is in docs/performance.md.
CREATE INDEX transactions_site_last_four_idx ON transactions (site_id, last_four) WHERE last_four IS NOT NULL;
