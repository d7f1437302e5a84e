-- API-key prefixes as text (src/auth/api-key-auth.ts, the admission statement of 0016).
--
-- The admission statement looks up a key the caller has not cached by its prefix, given as text:
-- `k.prefix = prefixes[i]` compared char(8) as text, which the unique index on the char(8) column
-- cannot serve, so every such lookup read the whole table (about a millisecond at a few thousand
-- keys, growing with them). A prefix is always eight hex digits, so text holds the same values, and
-- the index then serves every lookup, whether its parameter is typed text or left to inference.
-- The trigger whose condition reads the column is made again around the change, as it was.

DROP TRIGGER api_keys_changed ON api_keys;

ALTER TABLE api_keys ALTER COLUMN prefix TYPE text;

CREATE TRIGGER api_keys_changed
  AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
        OR OLD.secret_hash IS DISTINCT FROM NEW.secret_hash
        OR OLD.user_id IS DISTINCT FROM NEW.user_id
        OR OLD.prefix IS DISTINCT FROM NEW.prefix)
  EXECUTE FUNCTION sift_notify_key_change();
