-- The delivery job claims the oldest requests still queued (`last_error IS NULL … ORDER BY id
-- LIMIT n`). Set-aside requests stay in the same table until an operator puts them back, and with
-- only the primary key PostgreSQL found the queued ones by reading every row and sorting them:
-- once the statistics said few requests were queued, each claim read the whole table, set-aside
-- rows included (measured in the bench: 55,000 set-aside rows read by each of 1,067 claims,
-- docs/performance.md session 17). This index holds only the queued requests, in claim order, so a
-- claim reads its batch whatever lies set aside, as email_outbox_due_idx does for due mail.
CREATE INDEX mail_requests_queue_idx ON mail_requests (id) WHERE last_error IS NULL;
