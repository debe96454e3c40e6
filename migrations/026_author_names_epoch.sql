-- Performance (issue 7): GET booking reads the booking without joining its author. A server
-- process remembers authors' names together with the credential epoch (migration 016) read with
-- them, and uses a name only when the request's own statement reads the same epoch
-- (src/domain/users/author-names.ts). For that, a change of a user's display name must bump the
-- epoch too, as a change of the username already does: the next statement in every process sees
-- it. Display names change rarely (an operator's SQL or CLI), so emptying the processes' memories
-- of principals when one does costs nothing that matters.
DROP TRIGGER users_credential_epoch ON users;
CREATE TRIGGER users_credential_epoch
  AFTER UPDATE OF id, username, display_name, is_platform_admin, password_hash, password_changed_at OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION credential_epoch_bump();
