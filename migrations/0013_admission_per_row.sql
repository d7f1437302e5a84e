-- admit_api_requests (0010) reads and writes each key's rate row and each user's usage row once per
-- batch instead of once per request.
--
-- A batch often holds many requests of one user (every key of an account spends the same monthly
-- quota) and, with one busy key, many of one key. 0010 locked each row, then read and rewrote it for
-- every request: N reads and N new versions of the same row in one transaction, each update
-- walking the row's growing chain of versions. Here each row is locked and read once, in the same
-- order as before (usage rows by user, then rate rows by key, each ascending, so two instances'
-- batches still never deadlock); the requests are decided in order against that state in memory;
-- and every row that changed is written once, by one statement per table, at the end. The decisions,
-- the rows written and the answers are those of 0010.

CREATE OR REPLACE FUNCTION admit_api_requests(
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
