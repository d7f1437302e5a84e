-- Sign-in attempts (src/auth/login-throttle.ts), counted BEFORE the password is checked, so that
-- guesses sent in parallel cost as many attempts as guesses sent one after another. Counted per
-- client and per client and username, never per username alone: one client's guesses can slow that
-- client down, never lock anyone else out. Replaces login_failures, which counted failures after
-- the check (and per username across clients).
CREATE TABLE sign_in_attempts (
  scope           text NOT NULL CHECK (scope IN ('client', 'client_user')),
  key             text NOT NULL,
  attempts        integer NOT NULL,
  last_attempt_at timestamptz NOT NULL,
  blocked_until   timestamptz,
  PRIMARY KEY (scope, key)
);
CREATE INDEX sign_in_attempts_last ON sign_in_attempts (last_attempt_at);

DROP TABLE login_failures;

-- Takes one attempt for the client and one for the client and username, or none while either is
-- blocked: returns the seconds to wait (0: taken). A count starts afresh p_window after its last
-- attempt. From a scope's threshold on, each attempt taken blocks that scope for a delay starting at
-- p_first_delay seconds and doubling up to p_max_delay. One client's attempts queue on a lock of
-- their own (both rows are that client's), so each sees the ones taken before it.
CREATE FUNCTION sign_in_attempt_take(
  p_client text, p_client_user text,
  p_client_threshold integer, p_client_user_threshold integer,
  p_first_delay float8, p_max_delay float8, p_window float8, p_now timestamptz
) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  wait integer;
BEGIN
  PERFORM pg_advisory_xact_lock(1397314121, hashtext(p_client));

  SELECT coalesce(max(ceil(extract(epoch FROM blocked_until - p_now))), 0)::integer INTO wait
    FROM sign_in_attempts
   WHERE ((scope = 'client' AND key = p_client) OR (scope = 'client_user' AND key = p_client_user))
     AND blocked_until > p_now;
  IF wait > 0 THEN
    RETURN wait;
  END IF;

  INSERT INTO sign_in_attempts AS a (scope, key, attempts, last_attempt_at)
  VALUES ('client', p_client, 1, p_now), ('client_user', p_client_user, 1, p_now)
  ON CONFLICT (scope, key) DO UPDATE SET
    attempts = CASE WHEN a.last_attempt_at <= p_now - make_interval(secs => p_window) THEN 1
                    ELSE a.attempts + 1 END,
    last_attempt_at = greatest(a.last_attempt_at, p_now);

  UPDATE sign_in_attempts AS a
     SET blocked_until = p_now + make_interval(secs =>
           least(p_max_delay, p_first_delay * 2 ^ least(a.attempts - t.threshold, 16)))
    FROM (VALUES ('client', p_client, p_client_threshold),
                 ('client_user', p_client_user, p_client_user_threshold)) AS t (scope, key, threshold)
   WHERE a.scope = t.scope AND a.key = t.key AND a.attempts >= t.threshold;
  RETURN 0;
END $$;

-- A sign-in that succeeded: its username's count for the client is cleared, and its attempt is
-- given back to the client's count (so that only failures add up there, as sign-ins of many users
-- behind one address must not block it), with the block that attempt may have set.
CREATE FUNCTION sign_in_attempt_succeeded(
  p_client text, p_client_user text, p_client_threshold integer
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(1397314121, hashtext(p_client));
  DELETE FROM sign_in_attempts WHERE scope = 'client_user' AND key = p_client_user;
  UPDATE sign_in_attempts
     SET attempts = greatest(attempts - 1, 0),
         blocked_until = CASE WHEN attempts - 1 < p_client_threshold THEN NULL ELSE blocked_until END
   WHERE scope = 'client' AND key = p_client;
END $$;
