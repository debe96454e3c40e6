-- 001 sketched refresh-token and lock-out state on users; 002 moved them into their own
-- tables (refresh_tokens: several devices per user; login_failures: counted per username,
-- including names that do not exist, so answers never reveal whether an account exists).
ALTER TABLE users DROP COLUMN refresh_token_hash, DROP COLUMN failed_logins, DROP COLUMN locked_until;
