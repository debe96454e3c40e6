-- A mail request whose rendering fails (a bug, a row the templates cannot handle) is set aside with
-- its error instead of being taken again by every run: the delivery job renders its batch in one
-- database transaction, so one such request would otherwise roll the batch back each time and hold
-- every later mail up (docs/emails.md "Delivery"). Clearing last_error puts it back in the queue.
ALTER TABLE mail_requests ADD COLUMN last_error text;
