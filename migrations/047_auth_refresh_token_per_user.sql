-- One refresh token per user (spec, "Authentication" 4): every login answers with the same one
-- until DELETE token/refresh rotates it (or the password changes), as the spec's "a new refresh
-- token is then issued at the next authentication" says; before, each login issued another and
-- the 21st login dropped one an integration had kept. The login re-signs it from `token_id` (its
-- `jti`) and `created_at` (its `iat`) with JWT_SECRET: the table still holds no token, and without
-- the secret its columns sign nothing (src/domain/users/refresh-tokens.ts). Rows issued before
-- have no token_id: they keep working until rotated, and no login returns them again.
ALTER TABLE refresh_tokens ADD COLUMN token_id text;
CREATE UNIQUE INDEX refresh_tokens_user_current_key ON refresh_tokens (user_id) WHERE token_id IS NOT NULL;
