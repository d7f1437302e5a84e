-- One admission decision for API requests: the key, the burst and sustained rate limits, and the
-- monthly search quota, decided together by the database (src/limits/admission.ts calls it once per
-- turn of an instance's event loop, for every request of that turn). Replaces the leases of 0009.
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

DROP FUNCTION rate_limit_admit(bigint, integer, float8, integer, float8, integer, integer, float8, integer, float8);
DROP FUNCTION rate_limit_admit(bigint, integer, float8, integer, float8, integer);
DROP TABLE rate_limits;

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
  auth text,                 -- 'ok', 'invalid' (unknown, revoked or wrong secret) or 'disabled'
  key_id bigint, user_id bigint,
  username text, secret_hash bytea, user_active boolean, -- a key looked up by its prefix: its row
  admitted boolean,
  refused_by text,           -- 'rate' or 'quota' when refused
  burst_remaining integer, burst_reset_seconds float8,
  sustained_remaining integer, sustained_reset_seconds float8,
  burst_wait_seconds float8,  -- refused by a full window: when it has a free slot (0 while it has one)
  sustained_wait_seconds float8,
  searches_this_month bigint  -- the user's searches this month after this request, when metered
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
  locked_id bigint;
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

  -- Lock (making where missing) the usage rows of metered requests, then the rate rows.
  FOR locked_id IN
    SELECT DISTINCT resolved_user[i] FROM generate_subscripts(key_ids, 1) i
     WHERE resolved_auth[i] = 'ok' AND metered[i] AND (units[i] > 0 OR monthly_quota > 0)
     ORDER BY 1
  LOOP
    PERFORM 1 FROM usage_monthly u WHERE u.user_id = locked_id AND u.month = usage_month FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO usage_monthly (user_id, month) VALUES (locked_id, usage_month) ON CONFLICT DO NOTHING;
      PERFORM 1 FROM usage_monthly u WHERE u.user_id = locked_id AND u.month = usage_month FOR UPDATE;
    END IF;
  END LOOP;
  FOR locked_id IN
    SELECT DISTINCT resolved_key[i] FROM generate_subscripts(key_ids, 1) i
     WHERE resolved_auth[i] = 'ok' AND limited[i]
     ORDER BY 1
  LOOP
    PERFORM 1 FROM rate_limits r WHERE r.key_id = locked_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      INSERT INTO rate_limits (key_id) VALUES (locked_id) ON CONFLICT DO NOTHING;
      PERFORM 1 FROM rate_limits r WHERE r.key_id = locked_id FOR NO KEY UPDATE;
    END IF;
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

    SELECT burst_seconds, burst_capacity, rate_window_step(burst_seconds), r.burst_admitted, r.burst_open_at,
           r.burst_open_count, r.burst_oldest_closed_at, NULL, NULL, false, false,
           sustained_seconds, sustained_capacity, rate_window_step(sustained_seconds), r.sustained_admitted,
           r.sustained_open_at, r.sustained_open_count, r.sustained_oldest_closed_at, NULL, NULL, false, false
      INTO burst.seconds, burst.capacity, burst.step, burst.admitted, burst.open_at,
           burst.open_count, burst.oldest_closed_at, burst.closed_at, burst.closed_count, burst.closed_loaded, burst.closed_changed,
           sustained.seconds, sustained.capacity, sustained.step, sustained.admitted,
           sustained.open_at, sustained.open_count, sustained.oldest_closed_at, sustained.closed_at, sustained.closed_count,
           sustained.closed_loaded, sustained.closed_changed
      FROM rate_limits r WHERE r.key_id = resolved_key[i];
    -- Never before the newest admission recorded, so buckets stay in order whatever the clocks did.
    decided_at := greatest(now_s, coalesce(burst.open_at, now_s), coalesce(sustained.open_at, now_s));
    IF rate_window_needs_closed(burst, decided_at) THEN
      SELECT r.burst_closed_at, r.burst_closed_count INTO burst.closed_at, burst.closed_count
        FROM rate_limits r WHERE r.key_id = resolved_key[i];
      burst.closed_loaded := true;
    END IF;
    IF rate_window_needs_closed(sustained, decided_at) THEN
      SELECT r.sustained_closed_at, r.sustained_closed_count INTO sustained.closed_at, sustained.closed_count
        FROM rate_limits r WHERE r.key_id = resolved_key[i];
      sustained.closed_loaded := true;
    END IF;
    burst := rate_window_expire(burst, decided_at);
    sustained := rate_window_expire(sustained, decided_at);

    room := burst.admitted < burst.capacity AND sustained.admitted < sustained.capacity;
    quota_left := true;
    IF room AND metered[i] AND monthly_quota > 0 THEN
      SELECT u.searches INTO used FROM usage_monthly u WHERE u.user_id = resolved_user[i] AND u.month = usage_month;
      -- A request reserves its units, and even one that reserves none (it will be answered 400) needs one left.
      quota_left := coalesce(used, 0) + greatest(units[i], 1) <= monthly_quota;
    END IF;

    IF room AND quota_left THEN
      admitted := true;
      burst := rate_window_record(burst, decided_at);
      sustained := rate_window_record(sustained, decided_at);
      IF metered[i] AND (units[i] > 0 OR monthly_quota > 0) THEN
        UPDATE usage_monthly u SET searches = u.searches + units[i]
         WHERE u.user_id = resolved_user[i] AND u.month = usage_month
        RETURNING u.searches INTO searches_this_month;
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
      searches_this_month := coalesce(used, 0);
    END IF;

    IF admitted OR burst.closed_changed OR sustained.closed_changed THEN
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
       WHERE r.key_id = resolved_key[i];
    END IF;

    burst_remaining := greatest(0, burst.capacity - burst.admitted);
    sustained_remaining := greatest(0, sustained.capacity - sustained.admitted);
    burst_reset_seconds := rate_window_reset_seconds(burst, decided_at);
    sustained_reset_seconds := rate_window_reset_seconds(sustained, decided_at);
    RETURN NEXT;
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
