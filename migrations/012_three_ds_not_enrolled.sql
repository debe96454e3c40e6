-- The sandbox (and real acquirers) report a card outside 3-D Secure as not enrolled: it is
-- authorised without authentication, which is neither frictionless nor a challenge.
ALTER TABLE transactions DROP CONSTRAINT transactions_three_ds_status_check;
ALTER TABLE transactions ADD CONSTRAINT transactions_three_ds_status_check
  CHECK (three_ds_status IN ('frictionless', 'challenge', 'authenticated', 'failed', 'not_attempted', 'not_enrolled'));
