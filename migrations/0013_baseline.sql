-- Baseline: the schema that 0001-0013 left, in one file. They were squashed before the first
-- release; from here on, one migration per concept (migrations/README.md).
--
-- A database that those files migrated is recognised as at this baseline (src/db/migrate.ts): its
-- schema_migrations must hold exactly the files listed below, with these checksums (SHA-256 of their
-- text); they are then replaced by this file's row and nothing here is run.
-- replaces 0001_accounts.sql bdaf68f4e05e0cdd85302b89d9e099bb697c637681b31f76c61bd10adeea0705
-- replaces 0002_accounts_login_throttle.sql 0d430aec250aed042e6e7b0ac35d44149815b99c1378cbfebf74856e2ef9ee41
-- replaces 0003_health.sql ff408d52c1a704d2ac09844f99502eeac775c4638a9aab3de3b26d30f090bcf7
-- replaces 0004_limits.sql f59a77bb74169e63d1444bbfeb4e8e22d1cb532ed9bdf7a2a5e2dbc2c30c56e8
-- replaces 0005_currency_rates.sql f190c89919617e71bfd662702ffcdd0964eb124478d319810fa3d816aa0ba52c
-- replaces 0006_rate_buckets.sql bcb6743b8cd8a8314a473585db401d3d4cb0d4d632f9dfd092660eadf0c15e45
-- replaces 0007_alert_outbox.sql 4d350c4a554405a28dace21fa93c19537560bf782d2d078c4e646e5a985be345
-- replaces 0008_auth_notify.sql df44858e2efa43c9f1b9e7bc1bc0fa840bbbb4d05a5ce618c5e605bb5db321ce
-- replaces 0009_rate_leases.sql 03bc26d0736cce394c491650b05315e0450dc2b690a43ca1da93a764435d4f8d
-- replaces 0010_api_admission.sql f6f63c3a1ab97b08a002bfbf3a5095cf8a991983caf6383317dc18b8b446e8ea
-- replaces 0011_sign_in_attempts.sql 6b4762b251c1f3dd2d422ca230c5348dd26051b27e0a179dc78c0835dc7aefa3
-- replaces 0012_upstream_pacing.sql 37e4bd28702c0f57ba375e441fd4e94ca62375543634ae36f599768d00129474
-- replaces 0013_admission_per_row.sql 8160d2b41845c6346521fbc68a3a717e930b33ffb94d49d5e01932f6a98d8ce8

-- Accounts ----------------------------------------------------------------------------------

-- Users of this instance, their API keys, and web sign-in sessions.
CREATE TABLE users (
  id            bigserial PRIMARY KEY,
  username      text NOT NULL,
  password_hash text NOT NULL DEFAULT '',
  is_active     boolean NOT NULL DEFAULT true,
  is_staff      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_login_at timestamptz
);
CREATE UNIQUE INDEX users_username_lower ON users (lower(username));

CREATE TABLE api_keys (
  id           bigserial PRIMARY KEY,
  user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  prefix       char(8) NOT NULL UNIQUE,
  secret_hash  bytea NOT NULL,
  name         text NOT NULL DEFAULT 'API key',
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at DESC);

CREATE TABLE sessions (
  sid        text PRIMARY KEY,
  data       jsonb NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- Sign-in attempts (src/auth/login-throttle.ts), counted BEFORE the password is checked, so that
-- guesses sent in parallel cost as many attempts as guesses sent one after another. Counted per
-- client and per client and username, never per username alone: one client's guesses can slow that
-- client down, never lock anyone else out.
CREATE TABLE sign_in_attempts (
  scope           text NOT NULL CHECK (scope IN ('client', 'client_user')),
  key             text NOT NULL,
  attempts        integer NOT NULL,
  last_attempt_at timestamptz NOT NULL,
  blocked_until   timestamptz,
  PRIMARY KEY (scope, key)
);
CREATE INDEX sign_in_attempts_last ON sign_in_attempts (last_attempt_at);

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

-- Provider health and alerts ----------------------------------------------------------------

-- Health of each upstream provider: the last recorded observation, one row per provider.
CREATE TABLE provider_status (
  provider   text PRIMARY KEY,
  ok         boolean NOT NULL,
  -- where the last recorded observation came from: 'query' (a search) or 'probe' (an active check)
  source     text NOT NULL DEFAULT 'query' CHECK (source IN ('query', 'probe')),
  last_error text NOT NULL DEFAULT '' CHECK (char_length(last_error) <= 300),
  last_ok_at timestamptz,
  checked_at timestamptz NOT NULL DEFAULT now()
);

-- Hourly buckets of outcomes per provider (kept 30 days), for the status page's availability bars.
CREATE TABLE provider_history (
  provider       text NOT NULL,
  hour           timestamptz NOT NULL,
  successes      integer NOT NULL DEFAULT 0,
  failures       integer NOT NULL DEFAULT 0,
  latency_sum_ms bigint NOT NULL DEFAULT 0,
  latency_max_ms integer NOT NULL DEFAULT 0,
  PRIMARY KEY (provider, hour)
);
CREATE INDEX provider_history_hour ON provider_history (hour);

-- Provider state changes waiting for the alert webhooks (ALERT_WEBHOOK_URLS): one row per change and
-- webhook target. A row is written in the same transaction as the provider_status update that decided
-- the change (the writer that locked the row and saw the old state differ from the new), so each change
-- is queued exactly once whichever instance observed it. Any instance sends: it claims due rows with
-- FOR UPDATE SKIP LOCKED (setting a lease in next_attempt_at), posts one message per target (a digest
-- when several changes are due together), and deletes the rows once the target answered 2xx; a failure
-- moves next_attempt_at back by a growing delay.
CREATE TABLE alert_outbox (
  id              bigserial PRIMARY KEY,
  -- SHA-256 (hex) of the webhook URL: the URL is configuration and may hold a secret, never stored here
  target          text NOT NULL,
  provider        text NOT NULL,
  old_ok          boolean NOT NULL,
  new_ok          boolean NOT NULL,
  last_error      text NOT NULL DEFAULT '',
  changed_at      timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  -- deliveries tried so far (a claim counts one)
  attempts        integer NOT NULL DEFAULT 0,
  -- fresh rows: the end of the digest window; claimed: the end of the lease; failed: the next retry
  next_attempt_at timestamptz NOT NULL,
  -- a provider's budget reaching 80 % and 100 % goes out like a state change: one row per webhook
  -- target, written by the instance whose call crossed the share (acquire_provider_call says which
  -- one did: exactly one per share and period)
  budget_percent  integer,
  budget_calls    bigint,
  budget_limit    bigint,
  budget_period   text
);
CREATE INDEX alert_outbox_due ON alert_outbox (target, next_attempt_at);

-- Instant answers -----------------------------------------------------------------------------

-- Exchange rates of the currency instant answer (Frankfurter: ECB reference
-- rates), one row per currency: units of it per 1 US dollar (USD itself is 1).
-- Refreshed from the feed at most once a day (src/search/instant/rates-store.ts);
-- when the feed is down, the stored rates are served marked stale.
CREATE TABLE currency_rates (
  code       text PRIMARY KEY CHECK (code ~ '^[A-Z]{3}$'),
  per_usd    double precision NOT NULL CHECK (per_usd > 0),
  -- the feed's date for this rate
  rate_date  date NOT NULL,
  -- when this instance last fetched it
  fetched_at timestamptz NOT NULL DEFAULT now()
);

-- API admission: rate limits and monthly usage -------------------------------------------------

-- Searches per user per UTC month (month = its first day), reserved at admission.
CREATE TABLE usage_monthly (
  user_id  bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  month    date NOT NULL,
  searches bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, month)
);

-- One admission decision for API requests: the key, the burst and sustained rate limits, and the
-- monthly search quota, decided together by the database (src/limits/admission.ts calls it once per
-- turn of an instance's event loop, for every request of that turn).
--
-- Rate windows are bucketed sliding windows. A window of `seconds` is cut into buckets of one step
-- (seconds / 1440, at least one second). Each bucket keeps how many requests it admitted and the
-- time of its latest admission; a bucket leaves the window when its latest admission does. So the
-- count is never below the exact sliding count: never more than `capacity` admissions in any
-- interval of the window's length, and a slot comes back at most one step late.
--
-- Per key and window, the newest bucket (`*_open_at`, `*_open_count`) and the window's total
-- (`*_admitted`) are plain columns; the older buckets are two arrays (`*_closed_at`,
-- `*_closed_count`) read and rewritten only when a bucket closes or expires, or to tell a refused
-- request how long to wait. For a day-long window the arrays hold up to 1440 entries: leaving them
-- untouched keeps a request's cost the same with an empty window and a full one.
--
-- The monthly quota is reserved at admission: an admitted request that counts searches adds them
-- to usage_monthly in the same transaction, so no two processes can spend the same unit. A search
-- that then fails gives its units back (src/limits/usage.ts).

CREATE UNLOGGED TABLE rate_limits (
  key_id                     bigint PRIMARY KEY,
  burst_admitted             integer NOT NULL DEFAULT 0,
  burst_open_at              float8,
  burst_open_count           integer NOT NULL DEFAULT 0,
  burst_oldest_closed_at     float8,
  burst_closed_at            float8[] NOT NULL DEFAULT '{}',
  burst_closed_count         integer[] NOT NULL DEFAULT '{}',
  sustained_admitted         integer NOT NULL DEFAULT 0,
  sustained_open_at          float8,
  sustained_open_count       integer NOT NULL DEFAULT 0,
  sustained_oldest_closed_at float8,
  sustained_closed_at        float8[] NOT NULL DEFAULT '{}',
  sustained_closed_count     integer[] NOT NULL DEFAULT '{}',
  touched_at                 timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50);
-- UNLOGGED: no WAL for this hot table; after a crash of the database it is empty, which forgives
-- the current windows. Room left on each page keeps most updates on their page (HOT).

-- What a statement reserved, under a receipt its caller names: a process keeps a few numbered slots
-- (one per statement in flight), and each statement that reserves searches overwrites its slot's
-- row. A caller that lost a statement's answer (the connection broke, the client-side bound passed)
-- keeps that slot out of use, looks the receipt up once the statement cannot be running any more,
-- and gives back what was reserved for requests it answered 503.
CREATE UNLOGGED TABLE admission_receipts (
  process    uuid NOT NULL,
  slot       integer NOT NULL,
  statement  bigint NOT NULL,
  month      date NOT NULL,
  user_ids   bigint[] NOT NULL,
  units      integer[] NOT NULL,
  made_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (process, slot)
) WITH (fillfactor = 50);

-- One window of one key while a decision is made. Times are seconds since the epoch.
CREATE TYPE rate_window AS (
  seconds          float8,
  capacity         integer,
  step             float8,
  admitted         integer,
  open_at          float8,
  open_count       integer,
  oldest_closed_at float8,
  closed_at        float8[],
  closed_count     integer[],
  closed_loaded    boolean,
  closed_changed   boolean
);

-- Whether deciding at `at_time` needs the window's closed buckets: one of them leaves the window, the
-- open bucket would close, or the window is full (the wait is found among them).
CREATE FUNCTION rate_window_needs_closed(w rate_window, at_time float8) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT (w.oldest_closed_at IS NOT NULL AND w.oldest_closed_at + w.seconds <= at_time)
      OR (w.open_count > 0 AND floor(w.open_at / w.step) <> floor(at_time / w.step))
      OR w.admitted >= w.capacity
$$;

-- Drops what has left the window by `at_time`.
CREATE FUNCTION rate_window_expire(w rate_window, at_time float8) RETURNS rate_window
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  expired integer := 0;
BEGIN
  IF w.oldest_closed_at IS NOT NULL AND w.oldest_closed_at + w.seconds <= at_time THEN
    WHILE expired < cardinality(w.closed_at) AND w.closed_at[expired + 1] + w.seconds <= at_time LOOP
      w.admitted := w.admitted - w.closed_count[expired + 1];
      expired := expired + 1;
    END LOOP;
    w.closed_at := w.closed_at[expired + 1:];
    w.closed_count := w.closed_count[expired + 1:];
    w.oldest_closed_at := w.closed_at[1];
    w.closed_changed := true;
  END IF;
  IF w.open_count > 0 AND w.open_at + w.seconds <= at_time THEN
    w.admitted := w.admitted - w.open_count;
    w.open_count := 0;
    w.open_at := NULL;
  END IF;
  RETURN w;
END
$$;

-- Records one admission at `at_time`: into the open bucket, or into a new one when `at_time` is past its step.
CREATE FUNCTION rate_window_record(w rate_window, at_time float8) RETURNS rate_window
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF w.open_count > 0 AND floor(w.open_at / w.step) <> floor(at_time / w.step) THEN
    w.closed_at := w.closed_at || w.open_at;
    w.closed_count := w.closed_count || w.open_count;
    w.oldest_closed_at := coalesce(w.oldest_closed_at, w.open_at);
    w.closed_changed := true;
    w.open_count := 0;
  END IF;
  w.open_at := at_time;
  w.open_count := w.open_count + 1;
  w.admitted := w.admitted + 1;
  RETURN w;
END
$$;

-- Seconds from `at_time` until the window's oldest admission leaves it (when `remaining` next grows).
CREATE FUNCTION rate_window_reset_seconds(w rate_window, at_time float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN w.admitted > 0 THEN coalesce(w.oldest_closed_at, w.open_at) + w.seconds - at_time ELSE 0 END
$$;

-- Seconds from `at_time` until a full window has a free slot (0 when it has one already).
CREATE FUNCTION rate_window_wait_seconds(w rate_window, at_time float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  freed integer := 0;
BEGIN
  IF w.admitted < w.capacity THEN
    RETURN 0;
  END IF;
  FOR i IN 1 .. coalesce(cardinality(w.closed_at), 0) LOOP
    freed := freed + w.closed_count[i];
    IF w.admitted - freed < w.capacity THEN
      RETURN w.closed_at[i] + w.seconds - at_time;
    END IF;
  END LOOP;
  RETURN w.open_at + w.seconds - at_time;
END
$$;

CREATE FUNCTION rate_window_step(seconds float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$ SELECT greatest(1, ceil(seconds / 1440)) $$;

-- Decides a batch of API requests, in the order given, and reports one row per request.
--
-- Each request names its key one of two ways: by `key_ids`/`user_ids` (an instance that has the key
-- cached and checked the secret itself), or by `prefixes`/`secret_hashes` (a key not cached: it is
-- looked up and its secret's SHA-256 compared here, so a cache miss costs no extra round trip).
-- `limited`: the request counts against the rate limits. `metered`: its endpoint counts searches,
-- so the monthly quota applies; `units`: the searches it reserves (0 for a request that will be
-- answered 400: it still needs a unit left). `decide_at`: the time to decide at (seconds since the epoch),
-- or null for the database's clock, which every instance shares. `receipt_*`: where the searches
-- reserved are recorded in admission_receipts (a null process: not recorded).
--
-- Row locks are taken up front in one order for every caller (usage rows by user, then rate rows
-- by key, each ascending), so two instances' batches never deadlock.
CREATE FUNCTION admit_api_requests(
  key_ids bigint[], user_ids bigint[], prefixes text[], secret_hashes bytea[],
  limited boolean[], metered boolean[], units integer[],
  burst_seconds float8, burst_capacity integer,
  sustained_seconds float8, sustained_capacity integer,
  monthly_quota integer, usage_month date, decide_at float8,
  receipt_process uuid, receipt_slot integer, receipt_statement bigint
) RETURNS TABLE (
  auth text,
  key_id bigint, user_id bigint,
  username text, secret_hash bytea, user_active boolean,
  admitted boolean,
  refused_by text,
  burst_remaining integer, burst_reset_seconds float8,
  sustained_remaining integer, sustained_reset_seconds float8,
  burst_wait_seconds float8,
  sustained_wait_seconds float8,
  searches_this_month bigint
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  n integer := cardinality(key_ids);
  now_s float8 := coalesce(decide_at, extract(epoch FROM clock_timestamp()));
  resolved_key bigint[] := key_ids;
  resolved_user bigint[] := user_ids;
  resolved_name text[] := array_fill(NULL::text, ARRAY[n]);
  resolved_hash bytea[] := array_fill(NULL::bytea, ARRAY[n]);
  resolved_auth text[] := array_fill('ok'::text, ARRAY[n]);
  resolved_active boolean[] := array_fill(NULL::boolean, ARRAY[n]);
  found_key record;
  -- The usage rows this batch reserves in: their users (ascending), searches so far, and whether
  -- this batch changed them.
  usage_users bigint[];
  usage_searches bigint[] := '{}';
  usage_changed boolean[] := '{}';
  -- The rate rows of this batch's limited requests, likewise, with each key's two windows.
  rate_keys bigint[];
  rate_burst rate_window[] := '{}';
  rate_sustained rate_window[] := '{}';
  rate_changed boolean[] := '{}';
  p integer;
  user_place integer;
  burst rate_window;
  sustained rate_window;
  decided_at float8;
  room boolean;
  used bigint;
  quota_left boolean;
  reserved_users bigint[] := '{}';
  reserved_units integer[] := '{}';
BEGIN
  -- Usage and rate rows are written in this transaction; its commit need not wait for the WAL to
  -- reach the disk (a crash of the database itself may forget the last instants of usage).
  PERFORM set_config('synchronous_commit', 'off', true);

  -- Keys not cached by the caller: look each up and check its secret.
  FOR i IN 1 .. n LOOP
    CONTINUE WHEN prefixes[i] IS NULL;
    SELECT k.id, k.user_id, u.username, k.secret_hash, k.revoked_at IS NOT NULL AS revoked, u.is_active
      INTO found_key
      FROM api_keys k JOIN users u ON u.id = k.user_id
     WHERE k.prefix = prefixes[i];
    IF NOT FOUND OR found_key.revoked THEN
      resolved_auth[i] := 'invalid';
    ELSE
      -- The row goes back even for a wrong secret: the caller caches it and checks the next ones itself.
      -- Comparing digests leaks nothing of the secret through timing.
      resolved_key[i] := found_key.id;
      resolved_user[i] := found_key.user_id;
      resolved_name[i] := found_key.username;
      resolved_hash[i] := found_key.secret_hash;
      resolved_active[i] := found_key.is_active;
      resolved_auth[i] := CASE
        WHEN found_key.secret_hash <> secret_hashes[i] THEN 'invalid'
        WHEN NOT found_key.is_active THEN 'disabled'
        ELSE 'ok' END;
    END IF;
  END LOOP;

  -- The rows to lock, ascending.
  usage_users := ARRAY(
    SELECT DISTINCT resolved_user[i] FROM generate_subscripts(key_ids, 1) i
     WHERE resolved_auth[i] = 'ok' AND metered[i] AND (units[i] > 0 OR monthly_quota > 0)
     ORDER BY 1);
  rate_keys := ARRAY(
    SELECT DISTINCT resolved_key[i] FROM generate_subscripts(key_ids, 1) i
     WHERE resolved_auth[i] = 'ok' AND limited[i]
     ORDER BY 1);

  -- Lock (making where missing) and read the usage rows, then the rate rows.
  FOR p IN 1 .. coalesce(cardinality(usage_users), 0) LOOP
    SELECT u.searches INTO used FROM usage_monthly u
     WHERE u.user_id = usage_users[p] AND u.month = usage_month FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO usage_monthly (user_id, month) VALUES (usage_users[p], usage_month) ON CONFLICT DO NOTHING;
      SELECT u.searches INTO used FROM usage_monthly u
       WHERE u.user_id = usage_users[p] AND u.month = usage_month FOR UPDATE;
    END IF;
    usage_searches[p] := used;
    usage_changed[p] := false;
  END LOOP;
  FOR p IN 1 .. coalesce(cardinality(rate_keys), 0) LOOP
    FOR attempt IN 1 .. 2 LOOP
      SELECT burst_seconds, burst_capacity, rate_window_step(burst_seconds), r.burst_admitted, r.burst_open_at,
             r.burst_open_count, r.burst_oldest_closed_at, NULL, NULL, false, false,
             sustained_seconds, sustained_capacity, rate_window_step(sustained_seconds), r.sustained_admitted,
             r.sustained_open_at, r.sustained_open_count, r.sustained_oldest_closed_at, NULL, NULL, false, false
        INTO burst.seconds, burst.capacity, burst.step, burst.admitted, burst.open_at,
             burst.open_count, burst.oldest_closed_at, burst.closed_at, burst.closed_count, burst.closed_loaded,
             burst.closed_changed,
             sustained.seconds, sustained.capacity, sustained.step, sustained.admitted,
             sustained.open_at, sustained.open_count, sustained.oldest_closed_at, sustained.closed_at,
             sustained.closed_count, sustained.closed_loaded, sustained.closed_changed
        FROM rate_limits r WHERE r.key_id = rate_keys[p] FOR NO KEY UPDATE;
      EXIT WHEN FOUND;
      INSERT INTO rate_limits (key_id) VALUES (rate_keys[p]) ON CONFLICT DO NOTHING;
    END LOOP;
    rate_burst[p] := burst;
    rate_sustained[p] := sustained;
    rate_changed[p] := false;
  END LOOP;

  FOR i IN 1 .. n LOOP
    auth := resolved_auth[i];
    key_id := resolved_key[i];
    user_id := resolved_user[i];
    username := resolved_name[i];
    secret_hash := resolved_hash[i];
    user_active := resolved_active[i];
    admitted := false;
    refused_by := NULL;
    burst_remaining := NULL; burst_reset_seconds := NULL;
    sustained_remaining := NULL; sustained_reset_seconds := NULL;
    burst_wait_seconds := NULL; sustained_wait_seconds := NULL; searches_this_month := NULL;
    IF auth <> 'ok' THEN
      RETURN NEXT;
      CONTINUE;
    END IF;
    IF NOT limited[i] THEN
      admitted := true;
      RETURN NEXT;
      CONTINUE;
    END IF;

    p := array_position(rate_keys, resolved_key[i]);
    user_place := array_position(usage_users, resolved_user[i]);
    burst := rate_burst[p];
    sustained := rate_sustained[p];
    -- Never before the newest admission recorded, so buckets stay in order whatever the clocks did.
    decided_at := greatest(now_s, coalesce(burst.open_at, now_s), coalesce(sustained.open_at, now_s));
    -- The closed buckets are read from the row once, the first time a request needs them; from then
    -- on the batch keeps them in memory with the rest of the window.
    IF NOT burst.closed_loaded AND rate_window_needs_closed(burst, decided_at) THEN
      SELECT r.burst_closed_at, r.burst_closed_count INTO burst.closed_at, burst.closed_count
        FROM rate_limits r WHERE r.key_id = rate_keys[p];
      burst.closed_loaded := true;
    END IF;
    IF NOT sustained.closed_loaded AND rate_window_needs_closed(sustained, decided_at) THEN
      SELECT r.sustained_closed_at, r.sustained_closed_count INTO sustained.closed_at, sustained.closed_count
        FROM rate_limits r WHERE r.key_id = rate_keys[p];
      sustained.closed_loaded := true;
    END IF;
    burst := rate_window_expire(burst, decided_at);
    sustained := rate_window_expire(sustained, decided_at);

    room := burst.admitted < burst.capacity AND sustained.admitted < sustained.capacity;
    quota_left := true;
    used := CASE WHEN user_place IS NULL THEN 0 ELSE usage_searches[user_place] END;
    IF room AND metered[i] AND monthly_quota > 0 THEN
      -- A request reserves its units, and even one that reserves none (it will be answered 400) needs one left.
      quota_left := used + greatest(units[i], 1) <= monthly_quota;
    END IF;

    IF room AND quota_left THEN
      admitted := true;
      burst := rate_window_record(burst, decided_at);
      sustained := rate_window_record(sustained, decided_at);
      IF metered[i] AND (units[i] > 0 OR monthly_quota > 0) THEN
        usage_searches[user_place] := used + units[i];
        usage_changed[user_place] := true;
        searches_this_month := used + units[i];
        IF units[i] > 0 THEN
          reserved_users := reserved_users || resolved_user[i];
          reserved_units := reserved_units || units[i];
        END IF;
      END IF;
    ELSIF NOT room THEN
      refused_by := 'rate';
      burst_wait_seconds := rate_window_wait_seconds(burst, decided_at);
      sustained_wait_seconds := rate_window_wait_seconds(sustained, decided_at);
    ELSE
      refused_by := 'quota';
      searches_this_month := used;
    END IF;

    rate_burst[p] := burst;
    rate_sustained[p] := sustained;
    IF admitted OR burst.closed_changed OR sustained.closed_changed THEN
      rate_changed[p] := true;
    END IF;

    burst_remaining := greatest(0, burst.capacity - burst.admitted);
    sustained_remaining := greatest(0, sustained.capacity - sustained.admitted);
    burst_reset_seconds := rate_window_reset_seconds(burst, decided_at);
    sustained_reset_seconds := rate_window_reset_seconds(sustained, decided_at);
    RETURN NEXT;
  END LOOP;

  -- Each changed row written once.
  FOR p IN 1 .. coalesce(cardinality(rate_keys), 0) LOOP
    CONTINUE WHEN NOT rate_changed[p];
    burst := rate_burst[p];
    sustained := rate_sustained[p];
    UPDATE rate_limits r SET
      burst_admitted = burst.admitted, burst_open_at = burst.open_at, burst_open_count = burst.open_count,
      burst_oldest_closed_at = burst.oldest_closed_at,
      -- An array that did not change is set to itself: its stored value is kept as it is.
      burst_closed_at = CASE WHEN burst.closed_changed THEN burst.closed_at ELSE r.burst_closed_at END,
      burst_closed_count = CASE WHEN burst.closed_changed THEN burst.closed_count ELSE r.burst_closed_count END,
      sustained_admitted = sustained.admitted, sustained_open_at = sustained.open_at,
      sustained_open_count = sustained.open_count, sustained_oldest_closed_at = sustained.oldest_closed_at,
      sustained_closed_at = CASE WHEN sustained.closed_changed THEN sustained.closed_at ELSE r.sustained_closed_at END,
      sustained_closed_count = CASE WHEN sustained.closed_changed THEN sustained.closed_count ELSE r.sustained_closed_count END,
      touched_at = clock_timestamp()
     WHERE r.key_id = rate_keys[p];
  END LOOP;
  FOR p IN 1 .. coalesce(cardinality(usage_users), 0) LOOP
    CONTINUE WHEN NOT usage_changed[p];
    UPDATE usage_monthly m SET searches = usage_searches[p]
     WHERE m.user_id = usage_users[p] AND m.month = usage_month;
  END LOOP;

  IF receipt_process IS NOT NULL AND cardinality(reserved_users) > 0 THEN
    INSERT INTO admission_receipts AS r (process, slot, statement, month, user_ids, units)
    VALUES (receipt_process, receipt_slot, receipt_statement, usage_month, reserved_users, reserved_units)
    ON CONFLICT (process, slot) DO UPDATE SET
      statement = EXCLUDED.statement, month = EXCLUDED.month, user_ids = EXCLUDED.user_ids,
      units = EXCLUDED.units, made_at = now();
  END IF;
END
$$;

-- Gives back what the statement of a lost answer reserved, once: the receipt goes with it.
CREATE FUNCTION refund_admission_receipt(lost_process uuid, lost_slot integer, lost_statement bigint)
RETURNS integer
LANGUAGE sql AS $$
  WITH receipt AS (
    DELETE FROM admission_receipts r
     WHERE r.process = lost_process AND r.slot = lost_slot AND r.statement = lost_statement
    RETURNING r.month, r.user_ids, r.units
  ), per_user AS (
    SELECT receipt.month, r.user_id, sum(r.units)::bigint AS units
      FROM receipt, unnest(receipt.user_ids, receipt.units) AS r (user_id, units)
     GROUP BY receipt.month, r.user_id
  ), refunded AS (
    UPDATE usage_monthly u SET searches = greatest(0, u.searches - p.units)
      FROM per_user p
     WHERE u.user_id = p.user_id AND u.month = p.month
    RETURNING 1
  )
  SELECT count(*)::integer FROM refunded
$$;

-- Upstream pacing, budgets and the shared response cache ------------------------------------

-- Upstream pacing and budgets, shared by every worker and instance on this database
-- (src/providers/pacing/). Each paced call takes its slot in one statement, acquire_provider_call,
-- which locks the provider's row: a rate is kept by spacing calls evenly (the next free slot moves
-- on by one interval per call, as GCRA does), concurrency by leases that expire if their holder dies,
-- a budget by a counter per calendar period (UTC). All times are the database's clock (ms since the
-- epoch), so instances with skewed clocks still agree. What the upstream reports on its answers
-- (X-RateLimit-*) is stored by report_provider_call and paces every instance.

CREATE TABLE provider_pacing (
  provider         text PRIMARY KEY,
  -- the earliest start of the next call (ms); -infinity: now
  next_slot        float8 NOT NULL DEFAULT '-infinity',
  -- no call before this (ms): the upstream reported its short window spent until then
  hold_until       float8 NOT NULL DEFAULT '-infinity',
  -- when the upstream last reported its limits (ms); NULL: never. With reported_interval NULL it
  -- reported no short-window limit at all.
  reported_at      float8,
  reported_interval float8,
  -- the upstream's own count for its long window (a month, a day)
  period_limit     bigint,
  period_remaining bigint,
  period_reset_at  float8
);

CREATE UNLOGGED TABLE provider_call_leases (
  id         bigserial PRIMARY KEY,
  provider   text NOT NULL,
  expires_at float8 NOT NULL
);
CREATE INDEX provider_call_leases_provider ON provider_call_leases (provider, expires_at);

CREATE TABLE provider_budget_usage (
  provider     text NOT NULL,
  period       text NOT NULL CHECK (period IN ('month', 'day')),
  period_start timestamptz NOT NULL,
  calls        bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (provider, period, period_start)
);

CREATE FUNCTION pacing_now() RETURNS float8 LANGUAGE sql VOLATILE AS
  $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 $$;

-- outcome: ok (wait_ms until the slot, lease when concurrency is limited, calls this period when
-- budgeted, crossed 80 or 100 when this call reached that share of the budget), busy (no
-- concurrency slot now; retry_ms: when one may free up), rate_limited (no slot within
-- p_max_wait_ms; retry_ms: until the next one), budget_exhausted (retry_ms: until the period ends
-- or the upstream's count resets).
CREATE FUNCTION acquire_provider_call(
  p_provider         text,
  p_interval_ms      float8,
  p_explicit_rate    boolean,
  p_provisional_ms   float8,
  p_concurrency      integer,
  p_hold_ms          float8,
  p_period           text,
  p_budget           bigint,
  p_max_wait_ms      float8
) RETURNS TABLE (outcome text, wait_ms float8, lease bigint, calls bigint, crossed integer, retry_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
  t        float8 := pacing_now();
  r        provider_pacing;
  spacing  float8;
  slot     float8;
  start_at timestamptz;
  used     bigint;
  n        integer;
  lease_id bigint;
  share    integer := 0;
BEGIN
  INSERT INTO provider_pacing (provider) VALUES (p_provider) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM provider_pacing p WHERE p.provider = p_provider FOR UPDATE;

  IF r.period_remaining IS NOT NULL AND r.period_remaining <= 0 AND r.period_reset_at > t THEN
    RETURN QUERY SELECT 'budget_exhausted', 0::float8, NULL::bigint, NULL::bigint, 0, r.period_reset_at - t;
    RETURN;
  END IF;

  IF p_budget IS NOT NULL THEN
    start_at := date_trunc(p_period, clock_timestamp(), 'UTC');
    SELECT u.calls INTO used FROM provider_budget_usage u
     WHERE u.provider = p_provider AND u.period = p_period AND u.period_start = start_at;
    IF coalesce(used, 0) >= p_budget THEN
      RETURN QUERY SELECT 'budget_exhausted', 0::float8, NULL::bigint, used, 0,
        (extract(epoch FROM (start_at + ('1 ' || p_period)::interval) - clock_timestamp()) * 1000)::float8;
      RETURN;
    END IF;
  END IF;

  IF p_concurrency IS NOT NULL THEN
    DELETE FROM provider_call_leases l WHERE l.provider = p_provider AND l.expires_at <= t;
    SELECT count(*), min(l.expires_at) INTO n, slot FROM provider_call_leases l WHERE l.provider = p_provider;
    IF n >= p_concurrency THEN
      RETURN QUERY SELECT 'busy', 0::float8, NULL::bigint, NULL::bigint, 0, greatest(0, slot - t);
      RETURN;
    END IF;
  END IF;

  spacing := CASE
    WHEN r.reported_at IS NULL THEN coalesce(p_interval_ms, p_provisional_ms)
    WHEN p_explicit_rate THEN greatest(p_interval_ms, coalesce(r.reported_interval, 0))
    ELSE coalesce(r.reported_interval, p_interval_ms)
  END;
  slot := greatest(t, r.hold_until, CASE WHEN spacing > 0 THEN r.next_slot ELSE t END);
  IF slot - t > p_max_wait_ms THEN
    RETURN QUERY SELECT 'rate_limited', 0::float8, NULL::bigint, NULL::bigint, 0, slot - t - p_max_wait_ms;
    RETURN;
  END IF;
  IF spacing > 0 THEN
    UPDATE provider_pacing p SET next_slot = slot + spacing WHERE p.provider = p_provider;
  END IF;

  IF p_concurrency IS NOT NULL THEN
    INSERT INTO provider_call_leases (provider, expires_at) VALUES (p_provider, slot + p_hold_ms)
    RETURNING id INTO lease_id;
  END IF;

  IF p_budget IS NOT NULL THEN
    INSERT INTO provider_budget_usage AS u (provider, period, period_start, calls)
    VALUES (p_provider, p_period, start_at, 1)
    ON CONFLICT (provider, period, period_start) DO UPDATE SET calls = u.calls + 1
    RETURNING u.calls INTO used;
    share := CASE WHEN used = p_budget THEN 100 WHEN used = ceil(p_budget * 0.8) THEN 80 ELSE 0 END;
  END IF;

  RETURN QUERY SELECT 'ok', slot - t, lease_id, used, share, 0::float8;
END $$;

-- After a call: frees its lease and stores what the upstream reported. p_reported: a 2xx answer was
-- read for limits (one that reports none stores reported_interval NULL). p_rate_spent_ms: the
-- short window is spent for that long.
CREATE FUNCTION report_provider_call(
  p_provider         text,
  p_lease            bigint,
  p_reported         boolean,
  p_interval_ms      float8,
  p_rate_spent_ms    float8,
  p_period_limit     bigint,
  p_period_remaining bigint,
  p_period_reset_ms  float8
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  t float8 := pacing_now();
BEGIN
  IF p_lease IS NOT NULL THEN
    DELETE FROM provider_call_leases WHERE id = p_lease;
  END IF;
  IF NOT p_reported THEN
    RETURN;
  END IF;
  INSERT INTO provider_pacing (provider) VALUES (p_provider) ON CONFLICT DO NOTHING;
  UPDATE provider_pacing p SET
    reported_at       = CASE WHEN p_reported THEN t ELSE p.reported_at END,
    reported_interval = CASE WHEN p_reported THEN p_interval_ms ELSE p.reported_interval END,
    period_limit      = CASE WHEN p_reported THEN p_period_limit ELSE p.period_limit END,
    period_remaining  = CASE WHEN p_reported THEN p_period_remaining ELSE p.period_remaining END,
    period_reset_at   = CASE WHEN p_reported THEN t + p_period_reset_ms ELSE p.period_reset_at END,
    hold_until        = greatest(p.hold_until, t + coalesce(p_rate_spent_ms, '-infinity'))
  WHERE p.provider = p_provider;
END $$;

-- The response cache every worker and instance shares (src/providers/shared-cache.ts): parsed
-- answers as JSON text under the SHA-256 of the runner's cache key (which never holds a secret),
-- each with its provider's TTL; bounded by SHARED_CACHE_MAX_MB, pruned by any instance. An entry
-- belongs to the process that fetched it and goes when that process stops (`owner`): a restarted
-- deployment starts cold, as it did with per-process caches; one that crashed leaves its entries
-- to their TTL.
-- upstream_flights: who is fetching a key right now, so that identical calls in flight at the same
-- time on different processes are made once (a flight expires if its holder dies).
CREATE UNLOGGED TABLE upstream_cache (
  key        bytea PRIMARY KEY,
  owner      text NOT NULL,
  provider   text NOT NULL,
  value      text NOT NULL,
  bytes      integer NOT NULL,
  expires_at float8 NOT NULL
);
CREATE INDEX upstream_cache_expires ON upstream_cache (expires_at);
CREATE INDEX upstream_cache_owner ON upstream_cache (owner);

CREATE UNLOGGED TABLE upstream_flights (
  key        bytea PRIMARY KEY,
  owner      text NOT NULL,
  expires_at float8 NOT NULL
);

-- One row per distinct key: 'hit' with the value, 'claimed' (this caller fetches it; its flight is
-- taken), or 'wait' (another caller's flight is live).
CREATE FUNCTION upstream_cache_lookup(p_owner text, p_keys bytea[], p_flight_ms float8[])
RETURNS TABLE (key bytea, value text, state text)
LANGUAGE sql AS $$
  WITH t AS (SELECT pacing_now() AS now_ms),
  k AS (SELECT DISTINCT ON (u.key) u.key, u.flight FROM unnest(p_keys, p_flight_ms) AS u(key, flight)),
  hit AS (
    SELECT c.key, c.value FROM upstream_cache c JOIN k ON k.key = c.key, t WHERE c.expires_at > t.now_ms
  ),
  claim AS (
    INSERT INTO upstream_flights AS f (key, owner, expires_at)
    SELECT k.key, p_owner, t.now_ms + k.flight FROM k, t WHERE NOT EXISTS (SELECT 1 FROM hit WHERE hit.key = k.key)
    ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
      WHERE f.expires_at <= pacing_now()
    RETURNING f.key
  )
  SELECT k.key, hit.value,
         CASE WHEN hit.key IS NOT NULL THEN 'hit' WHEN claim.key IS NOT NULL THEN 'claimed' ELSE 'wait' END
    FROM k LEFT JOIN hit ON hit.key = k.key LEFT JOIN claim ON claim.key = k.key
$$;

-- Stores answers (each with its TTL, ms) and ends their flights, and ends the flights of failed calls.
CREATE FUNCTION upstream_cache_store(
  p_owner text, p_keys bytea[], p_providers text[], p_values text[], p_ttls float8[], p_released bytea[]
) RETURNS void LANGUAGE sql AS $$
  INSERT INTO upstream_cache AS c (key, owner, provider, value, bytes, expires_at)
  SELECT DISTINCT ON (u.key) u.key, p_owner, u.provider, u.value, octet_length(u.value), pacing_now() + u.ttl
    FROM unnest(p_keys, p_providers, p_values, p_ttls) AS u(key, provider, value, ttl)
  ON CONFLICT (key) DO UPDATE
    SET owner = EXCLUDED.owner, provider = EXCLUDED.provider, value = EXCLUDED.value, bytes = EXCLUDED.bytes,
        expires_at = EXCLUDED.expires_at;
  DELETE FROM upstream_flights WHERE key = ANY (p_keys || p_released);
$$;

-- Expired entries and flights go; then, past p_max_bytes, the entries nearest expiry.
CREATE FUNCTION upstream_cache_prune(p_max_bytes bigint) RETURNS void LANGUAGE sql AS $$
  DELETE FROM upstream_cache WHERE expires_at <= pacing_now();
  DELETE FROM upstream_flights WHERE expires_at <= pacing_now();
  DELETE FROM upstream_cache c USING (
    SELECT key, sum(bytes) OVER (ORDER BY expires_at DESC, key) AS kept FROM upstream_cache
  ) s
  WHERE c.key = s.key AND s.kept > p_max_bytes;
$$;

-- The processes that use the shared cache, each renewing its row while it runs: a process that
-- finds itself alone (one process, one instance) keeps to its own cache and makes no statement.
CREATE UNLOGGED TABLE upstream_cache_members (
  owner       text PRIMARY KEY,
  alive_until float8 NOT NULL
);
