-- Usernames are unique regardless of case (docs/cli.md), and a login finds its user whatever the
-- case it was typed in, as the lock-out already counted the lower-cased name: a user created as
-- `ada` logging in as `Ada` got 401 and a counted failure. The index makes that look-up an index
-- look-up and the uniqueness hold under concurrent `user create`s, which the check before the
-- insert alone did not. Names differing only in case could be made before it only by two creations
-- at once or by SQL; they are named here so an operator renames one (UPDATE users SET username
-- = ... WHERE id = ...) rather than the upgrade failing on a bare unique violation.
DO $$
DECLARE
  clashes text;
BEGIN
  SELECT string_agg(names, '; ') INTO clashes
    FROM (SELECT string_agg(format('%s (id %s)', username, id), ', ' ORDER BY id) AS names
            FROM users GROUP BY lower(username) HAVING count(*) > 1) AS clash;
  IF clashes IS NOT NULL THEN
    RAISE EXCEPTION 'usernames differing only in case: %; rename all but one of each before upgrading', clashes;
  END IF;
END
$$;
CREATE UNIQUE INDEX users_username_lower_key ON users (lower(username));
