-- A refresh token is bound to the password it was issued for: the login's `password_changed_at`,
-- read with the hash it checked, is kept with the token, and the token works only while the user's
-- is the same (src/domain/users/refresh-tokens.ts). A password change (or 2FA confirmation) deletes
-- the user's tokens, but a login that had checked the old password and inserted its token just
-- after that delete kept a refresh token for the old password, without expiry. Tokens issued
-- before this migration are bound to the state they live in now.
ALTER TABLE refresh_tokens ADD COLUMN password_changed_at timestamptz;
UPDATE refresh_tokens r SET password_changed_at = u.password_changed_at FROM users u WHERE u.id = r.user_id;
ALTER TABLE refresh_tokens ALTER COLUMN password_changed_at SET NOT NULL;
