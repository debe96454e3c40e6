-- The booking or channel a POST created under an Idempotency-Key, written in the transaction that
-- created it (src/http/idempotency.ts createdForKey). Those routes store their answer after the
-- creation committed; when that write failed (the database lost meanwhile), the key stayed
-- in_flight and every retry was told only 409 "still being processed", with no way to find what
-- was created until the key's purge, so a client retrying with a new key created it twice. A
-- retry now finds the resource and is answered with it as it reads now.
ALTER TABLE idempotency_keys ADD COLUMN resource_id bigint;
