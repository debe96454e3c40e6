-- Hosted page sessions (issue 5): the vaulting app, the payment modal frame and the payment
-- request page each get one short-lived session when they are opened. Its bearer token lets the
-- page capture a card and pay, scoped to one site, channel and (for payments) one booking and
-- amount. Only the SHA-256 of the token is stored. See docs/hosted-pages.md.
CREATE TABLE hosted_sessions (
  id                 bigserial PRIMARY KEY,
  token_hash         text NOT NULL UNIQUE,
  kind               text NOT NULL CHECK (kind IN ('vault', 'modal', 'pay')),
  site_id            bigint NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
  channel_id         bigint NOT NULL REFERENCES channels(id),
  -- The user the page acts for: the cardvaultuser of the vaulting app, or the booking's author.
  user_id            bigint REFERENCES users(id),
  booking_id         bigint REFERENCES bookings(id),
  -- The amount and currency the page may charge (null for the zero-value vault).
  amount             bigint CHECK (amount IS NULL OR amount >= 0),
  currency           char(3),
  -- The origin of the page embedding the modal frame (postMessage target, frame-ancestors).
  host_origin        text,
  language           text NOT NULL DEFAULT 'enGB',
  -- Page inputs that shape the payment: session_id, redirect, fail_code, env, verify fields.
  options            jsonb NOT NULL DEFAULT '{}',
  -- Card attempts started (counted before the processor is called, so parallel requests cannot
  -- exceed the limit); an attempt that succeeds ends the session, so every other one failed.
  attempts           integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- Set once a payment or vault succeeded: the session then refuses further payments.
  transaction_id     bigint,
  -- The transaction in progress (3DS challenge or unknown outcome), so a reload can resume.
  pending_transaction_id bigint,
  expires_at         timestamptz NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX hosted_sessions_expiry_idx ON hosted_sessions (expires_at);
CREATE INDEX hosted_sessions_booking_idx ON hosted_sessions (booking_id) WHERE booking_id IS NOT NULL;
