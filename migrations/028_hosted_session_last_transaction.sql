-- A hosted page session remembers its own latest attempt, whatever its outcome, so the page can
-- read back what it paid (GET /hosted/payments/current) without looking at the booking's
-- transactions: those include payments other people made through the API or other pages, and
-- whoever holds a payment link must not read them (their payer, card and vault token).
ALTER TABLE hosted_sessions ADD COLUMN last_transaction_id bigint;
