-- Payment modal auth strings in use (hosted pages, docs/modal.md "Attempts"). An auth string is
-- valid for 15 minutes and could otherwise open any number of modal sessions, each with its own
-- three card attempts and possibly its own draft booking: a card-testing loop. One row per auth
-- string (only its SHA-256 is stored) bounds, across every session it opens: the sessions, the
-- draft bookings created, and the failed card attempts (failed or still awaiting an outcome; an
-- attempt refused before the bank, or one that succeeded, is given back).
CREATE TABLE modal_auth_uses (
  id             bigserial PRIMARY KEY,
  auth_hash      text NOT NULL UNIQUE,
  channel_id     bigint NOT NULL REFERENCES channels(id),
  sessions       integer NOT NULL DEFAULT 0 CHECK (sessions >= 0),
  draft_bookings integer NOT NULL DEFAULT 0 CHECK (draft_bookings >= 0),
  failures       integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
  -- Outlives the last session the string can open (its 15 minutes plus a session's 30), so no
  -- live session ever loses the shared count; pruned in small batches after that.
  expires_at     timestamptz NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX modal_auth_uses_expiry_idx ON modal_auth_uses (expires_at);

-- The auth string a modal session was opened with (null for the vaulting app and payment
-- request page sessions, which have no auth string).
ALTER TABLE hosted_sessions ADD COLUMN modal_auth_id bigint REFERENCES modal_auth_uses(id) ON DELETE SET NULL;
CREATE INDEX hosted_sessions_modal_auth_idx ON hosted_sessions (modal_auth_id) WHERE modal_auth_id IS NOT NULL;
