-- Performance (issue 7): an API token row carries its principal (site path and name, username,
-- platform admin flag, membership role and read-only flag), kept equal to the sites, users and
-- memberships rows by the triggers below, in the same transaction as any change to them: API
-- token authentication reads one row of one table instead of joining four (each join and scan is
-- executor start-up and run time of every authenticated request). Not a cache: a membership
-- removed, a role changed or a site renamed is seen by the next request, exactly as with the joins.
-- role IS NULL: the token's user has no membership in the token's site (authentication fails).
ALTER TABLE api_tokens
  ADD COLUMN site_path text,
  ADD COLUMN site_name text,
  ADD COLUMN username text,
  ADD COLUMN is_platform_admin boolean,
  ADD COLUMN role text,
  ADD COLUMN read_only boolean;

UPDATE api_tokens t
   SET site_path = s.path, site_name = s.name, username = u.username, is_platform_admin = u.is_platform_admin,
       role = (SELECT m.role FROM memberships m WHERE m.site_id = t.site_id AND m.user_id = t.user_id),
       read_only = (SELECT m.read_only FROM memberships m WHERE m.site_id = t.site_id AND m.user_id = t.user_id)
  FROM sites s, users u
 WHERE s.id = t.site_id AND u.id = t.user_id;

ALTER TABLE api_tokens
  ALTER COLUMN site_path SET NOT NULL,
  ALTER COLUMN site_name SET NOT NULL,
  ALTER COLUMN username SET NOT NULL,
  ALTER COLUMN is_platform_admin SET NOT NULL;

-- A new token (or one moved to another site or user) copies its principal. FOR SHARE: a
-- concurrent change of the site, user or membership waits for this transaction, then its own
-- trigger (a fresh statement, so a fresh snapshot) sees and updates the new token.
CREATE FUNCTION api_tokens_principal_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT s.path, s.name INTO NEW.site_path, NEW.site_name FROM sites s WHERE s.id = NEW.site_id FOR SHARE;
  SELECT u.username, u.is_platform_admin INTO NEW.username, NEW.is_platform_admin FROM users u WHERE u.id = NEW.user_id FOR SHARE;
  SELECT m.role, m.read_only INTO NEW.role, NEW.read_only FROM memberships m WHERE m.site_id = NEW.site_id AND m.user_id = NEW.user_id FOR SHARE;
  RETURN NEW;
END $$;
CREATE TRIGGER api_tokens_principal_fill BEFORE INSERT OR UPDATE OF site_id, user_id ON api_tokens
  FOR EACH ROW EXECUTE FUNCTION api_tokens_principal_fill();

CREATE FUNCTION sites_api_tokens_principal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE api_tokens SET site_path = NEW.path, site_name = NEW.name WHERE site_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER sites_api_tokens_principal AFTER UPDATE OF path, name ON sites
  FOR EACH ROW WHEN (OLD.path IS DISTINCT FROM NEW.path OR OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION sites_api_tokens_principal();

CREATE FUNCTION users_api_tokens_principal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE api_tokens SET username = NEW.username, is_platform_admin = NEW.is_platform_admin WHERE user_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER users_api_tokens_principal AFTER UPDATE OF username, is_platform_admin ON users
  FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username OR OLD.is_platform_admin IS DISTINCT FROM NEW.is_platform_admin)
  EXECUTE FUNCTION users_api_tokens_principal();

CREATE FUNCTION memberships_api_tokens_principal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE api_tokens SET role = NULL, read_only = NULL WHERE site_id = OLD.site_id AND user_id = OLD.user_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE api_tokens SET role = NEW.role, read_only = NEW.read_only WHERE site_id = NEW.site_id AND user_id = NEW.user_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER memberships_api_tokens_principal AFTER INSERT OR UPDATE OR DELETE ON memberships
  FOR EACH ROW EXECUTE FUNCTION memberships_api_tokens_principal();
