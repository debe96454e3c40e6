-- Performance (issue 7): indexes behind the list filters of bookings and transactions that had
-- none, each led by site_id (every list is one site's). The plain site indexes
-- (bookings_site_idx, transactions_site_idx) serve the X-Site-Total count as an index-only scan.
-- Kept few on purpose: each index is one more write per insert and per non-HOT update on the
-- payment path.

-- Bookings: `channels`, `date_before` / `date_after` (and orderby=date).
CREATE INDEX bookings_site_channel_idx ON bookings (site_id, channel_id) WHERE deleted_at IS NULL;
CREATE INDEX bookings_site_date_end_idx ON bookings (site_id, date_end) WHERE deleted_at IS NULL;

-- Transactions: `status`, `transaction_types`, `payee_email`, `payee_surname`.
CREATE INDEX transactions_site_status_idx ON transactions (site_id, status);
CREATE INDEX transactions_site_type_idx ON transactions (site_id, type);
CREATE INDEX transactions_site_payee_email_idx ON transactions (site_id, payee_email) WHERE payee_email IS NOT NULL;
CREATE INDEX transactions_site_payee_surname_idx ON transactions (site_id, payee_surname) WHERE payee_surname IS NOT NULL;
