-- The page's own name for its latest recorded attempt (`attempt_id` of POST /hosted/payments,
-- random, chosen by the page for each attempt), kept with last_transaction_id. A page that gave up
-- waiting for an attempt's answer asks for that attempt's outcome by this name: while the attempt
-- is not recorded yet, the session's latest one is an earlier attempt, whose decline the page
-- showed as this attempt's. NULL: an attempt the page did not name (or none yet).
ALTER TABLE hosted_sessions ADD COLUMN last_attempt_id text CHECK (length(last_attempt_id) <= 64);
