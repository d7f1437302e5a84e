-- Every instance caches API-key rows (src/auth/api-key-auth.ts). A change that can make a cached row
-- wrong is announced on the channel `sift_auth`, whoever makes it (the API, the settings page, the
-- CLI, plain SQL), so each instance drops the stale entry at once instead of at the end of its cache
-- life: the payload is a key's prefix, or `*` when a user changed (disabled, renamed, deleted), which
-- drops every cached key. Notifications go out when the changing transaction commits. Writes of
-- last_used_at announce nothing.
CREATE FUNCTION sift_notify_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('sift_auth', rtrim(OLD.prefix));
  RETURN NULL;
END
$$;

CREATE FUNCTION sift_notify_user_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('sift_auth', '*');
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed
  AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
        OR OLD.secret_hash IS DISTINCT FROM NEW.secret_hash
        OR OLD.user_id IS DISTINCT FROM NEW.user_id
        OR OLD.prefix IS DISTINCT FROM NEW.prefix)
  EXECUTE FUNCTION sift_notify_key_change();

CREATE TRIGGER api_keys_deleted
  AFTER DELETE ON api_keys FOR EACH ROW
  EXECUTE FUNCTION sift_notify_key_change();

CREATE TRIGGER users_changed
  AFTER UPDATE ON users FOR EACH ROW
  WHEN (OLD.is_active IS DISTINCT FROM NEW.is_active OR OLD.username IS DISTINCT FROM NEW.username)
  EXECUTE FUNCTION sift_notify_user_change();

CREATE TRIGGER users_deleted
  AFTER DELETE ON users FOR EACH ROW
  EXECUTE FUNCTION sift_notify_user_change();
