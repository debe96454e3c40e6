-- A membership removed takes its API tokens with it. Until now migration 014's trigger only
-- blanked the token's role, so the token failed while the user was away and came back to life,
-- with its old name and expiry, when the user was added to the site again (possibly with another
-- role): a credential the user could neither list nor delete while not a member. An API token is a
-- credential of one user in one site; without the membership there is nothing for it to stand for.
-- The tokens already dormant (role IS NULL: their membership is gone) are deleted here.
DELETE FROM api_tokens t
 WHERE NOT EXISTS (SELECT 1 FROM memberships m WHERE m.site_id = t.site_id AND m.user_id = t.user_id);

CREATE OR REPLACE FUNCTION memberships_api_tokens_principal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND (OLD.site_id, OLD.user_id) IS DISTINCT FROM (NEW.site_id, NEW.user_id)) THEN
    DELETE FROM api_tokens WHERE site_id = OLD.site_id AND user_id = OLD.user_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE api_tokens SET role = NEW.role, read_only = NEW.read_only WHERE site_id = NEW.site_id AND user_id = NEW.user_id;
  END IF;
  RETURN NULL;
END $$;
