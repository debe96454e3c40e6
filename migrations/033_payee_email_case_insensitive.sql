-- The transactions list's `payee_email` filter matches as the bookings list's `email` does: exact
-- but case-insensitive (an address's domain has no case, and clients rarely keep the case the
-- payer typed), so the index it reads is on the lower-cased address.
DROP INDEX transactions_site_payee_email_idx;
CREATE INDEX transactions_site_payee_email_idx ON transactions (site_id, lower(payee_email)) WHERE payee_email IS NOT NULL;
