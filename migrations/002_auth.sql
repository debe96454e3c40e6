-- Authentication state beyond 001: refresh tokens (hashes only), failed-login counters and the
-- replay guard of TOTP codes. See docs/auth.md.

-- One row per issued refresh token (a login on one device). Only the SHA-256 of the token is
-- kept. Rows are deleted by DELETE token/refresh and by a password change; they never expire.
-- (users.refresh_token_hash of 001 is not used: a user may be logged in on several devices.)
CREATE TABLE refresh_tokens (
  id            bigserial PRIMARY KEY,
  user_id       bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash    text NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz
);
CREATE INDEX refresh_tokens_user_idx ON refresh_tokens (user_id, id);

-- Failed logins per normalised username, whether or not such a user exists, so a lock-out looks
-- the same for unknown names. (users.failed_logins / locked_until of 001 are not used.)
CREATE TABLE login_failures (
  username_key    text PRIMARY KEY,
  failures        integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
  locked_until    timestamptz,
  last_failed_at  timestamptz NOT NULL
);
CREATE INDEX login_failures_last_failed_idx ON login_failures (last_failed_at);

-- The last accepted TOTP time step: a code is accepted at most once.
ALTER TABLE users ADD COLUMN totp_last_step bigint;
