-- Performance (issue 7): a counter of changes to what credentials grant. Every change to a row
-- that authentication reads (an API token, a user, a membership, a site) bumps it in the changing
-- transaction. A server process keeps the principals it has authenticated together with the
-- counter read in the same statement, and reuses one only when the statement of the next request
-- reads the same counter (src/http/principals.ts): a revocation, an expiry moved, a membership
-- removed or a password changed is seen by the next statement, exactly as with the look-up itself,
-- in every process. Hot-path writes that grant nothing (api_tokens.last_used_at, users.totp_last_step)
-- are left out of the column lists so they do not empty every process's cache.
CREATE TABLE credential_epoch (
  only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  epoch     bigint NOT NULL
);
INSERT INTO credential_epoch (only_row, epoch) VALUES (true, 1);

-- Statement level: one bump per statement, however many rows it touched. The row lock it takes
-- serialises changes of credentials with each other (rare, administrative), never with requests,
-- which only read the row.
CREATE FUNCTION credential_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE credential_epoch SET epoch = epoch + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER api_tokens_credential_epoch
  AFTER UPDATE OF site_id, user_id, token_hash, expires_at, abilities, site_path, site_name, username, is_platform_admin, role, read_only
     OR DELETE OR TRUNCATE ON api_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION credential_epoch_bump();
CREATE TRIGGER users_credential_epoch
  AFTER UPDATE OF id, username, is_platform_admin, password_hash, password_changed_at OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION credential_epoch_bump();
CREATE TRIGGER memberships_credential_epoch
  AFTER UPDATE OR DELETE OR TRUNCATE ON memberships
  FOR EACH STATEMENT EXECUTE FUNCTION credential_epoch_bump();
CREATE TRIGGER sites_credential_epoch
  AFTER UPDATE OF id, path, name OR DELETE OR TRUNCATE ON sites
  FOR EACH STATEMENT EXECUTE FUNCTION credential_epoch_bump();
