-- A card attempt of the session has been started (startAttempt) and not yet recorded or given
-- back: a second attempt of the same session is refused until then. Without it two submits of
-- one page at the same moment both passed startAttempt (pending_transaction_id is only set once
-- the first attempt's transaction exists) and charged the session's amount twice; the booking's
-- over-funding check stops that only when the amount is all that is left to pay.
ALTER TABLE hosted_sessions ADD COLUMN attempt_in_flight boolean NOT NULL DEFAULT false;
