-- Usernames and email filters match regardless of case as `lower(x COLLATE "C")` folds it: A-Z to
-- a-z and nothing else, the same on every installation. lower() folds as the database's collation
-- does, and under a Turkish one (tr-TR) `I` becomes a dotless `ı`: user `admin` could not log in
-- as `ADMIN`, `ADMIN` could be created beside `admin`, and `email=info@...` missed `INFO@...`.
-- Usernames and the part of an address before the @ are ASCII (docs/resources.md), so nothing
-- else changes. The indexes are remade, under their names, on the expressions the queries now use
-- (a migration runs in one transaction: no moment is without the unique one). Should the unique
-- one fail, two usernames differ only in case (made on such a database): rename one first.
DROP INDEX users_username_lower_key;
CREATE UNIQUE INDEX users_username_lower_key ON users (lower(username COLLATE "C"));
DROP INDEX bookings_site_email_idx;
CREATE INDEX bookings_site_email_idx ON bookings (site_id, lower(email COLLATE "C")) WHERE deleted_at IS NULL;
DROP INDEX transactions_site_payee_email_idx;
CREATE INDEX transactions_site_payee_email_idx ON transactions (site_id, lower(payee_email COLLATE "C")) WHERE payee_email IS NOT NULL;
