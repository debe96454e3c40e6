-- A mail request whose rendering meets a passing database error (a statement timeout, a deadlock,
-- a serialization failure, a lost connection, a server short of resources: SQLSTATE classes 40,
-- 57, 08, 53) is left in the queue for the next run instead of being set aside for an operator's
-- `mail retry`: nothing is wrong with it. Such failures are counted here, so a cause that does not
-- pass is not retried without end: at limits.mailRenderTransientFailuresMax the request is set
-- aside with its error as any other (docs/emails.md "Delivery"). Setting it aside resets the count.
ALTER TABLE mail_requests ADD COLUMN transient_failures smallint NOT NULL DEFAULT 0;
