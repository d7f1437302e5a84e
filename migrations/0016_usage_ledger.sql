-- The usage ledger (src/limits/ledger.ts): searches reserved at admission, given back through
-- receipts, in the month the database decides.
--
-- admission_receipts (one slot per statement in flight, overwritten, pruned after a day) becomes
-- usage_receipts: one row per admission statement that reserved searches, kept until its process
-- settles it (every request it admitted has been answered: the searches that do not count are
-- given back and the row goes, in one transaction), or, when that process died, until another
-- process gives all of it back (refund_abandoned_usage_receipts). A refund owed is therefore never
-- only in one process's memory: until it is done, the receipt that owes it is in the database.
--
-- Every refund locks the usage rows it changes in one order, (user_id, month) ascending, the
-- order admission locks them in (users ascending, within one month), so refunds and admissions
-- never deadlock. admit_api_requests raises (serialization_failure: the caller retries) instead
-- of deciding on a row that vanished, and decides the month itself, from `decide_at` or the
-- database's clock, reporting it with what each request reserved.

DROP FUNCTION refund_admission_receipt(uuid, integer, bigint);
DROP TABLE admission_receipts;
DROP FUNCTION admit_api_requests(bigint[], bigint[], text[], bytea[], boolean[], boolean[], integer[],
  float8, integer, float8, integer, integer, date, float8, uuid, integer, bigint);

CREATE TABLE usage_receipts (
  process   uuid NOT NULL,
  statement bigint NOT NULL,
  month     date NOT NULL,
  user_ids  bigint[] NOT NULL,
  units     integer[] NOT NULL,
  made_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (process, statement)
);
CREATE INDEX usage_receipts_made_at ON usage_receipts (made_at);

-- Subtracts units[i] from the searches of user_ids[i] in months[i] (never below 0), locking the
-- rows in (user_id, month) order first.
CREATE FUNCTION usage_give_back(user_ids bigint[], months date[], units bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM usage_monthly u
    JOIN unnest(user_ids, months) AS g (user_id, month) ON u.user_id = g.user_id AND u.month = g.month
   ORDER BY u.user_id, u.month
     FOR UPDATE OF u;
  UPDATE usage_monthly u SET searches = greatest(0, u.searches - g.units)
    FROM (SELECT o.user_id, o.month, sum(o.units) AS units
            FROM unnest(user_ids, months, units) AS o (user_id, month, units)
           GROUP BY o.user_id, o.month) AS g
   WHERE u.user_id = g.user_id AND u.month = g.month;
END
$$;

-- Settles receipts of one process: each statement's receipt goes, giving back all it reserved
-- (`whole`: the statement's answer was lost, so its requests were answered 503) or the refunds
-- listed for it (`refund_*`: requests admitted that did not count). A receipt already gone (given
-- back as abandoned) gives nothing back again. Returns the receipts settled.
CREATE FUNCTION settle_usage_receipts(
  p_process uuid, p_statements bigint[], p_whole boolean[],
  p_refund_statements bigint[], p_refund_users bigint[], p_refund_units integer[]
) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  settled integer;
  owed_users bigint[];
  owed_months date[];
  owed_units bigint[];
BEGIN
  WITH gone AS (
    DELETE FROM usage_receipts r USING unnest(p_statements, p_whole) AS s (statement, whole)
     WHERE r.process = p_process AND r.statement = s.statement
    RETURNING r.statement, r.month, r.user_ids, r.units, s.whole
  ), owed AS (
    SELECT g.month, o.user_id, o.units::bigint AS units
      FROM gone g, unnest(g.user_ids, g.units) AS o (user_id, units) WHERE g.whole
    UNION ALL
    SELECT g.month, f.user_id, f.units::bigint
      FROM gone g JOIN unnest(p_refund_statements, p_refund_users, p_refund_units) AS f (statement, user_id, units)
        ON f.statement = g.statement
     WHERE NOT g.whole
  )
  SELECT (SELECT count(*) FROM gone), array_agg(owed.user_id), array_agg(owed.month), array_agg(owed.units)
    INTO settled, owed_users, owed_months, owed_units
    FROM owed;
  IF owed_users IS NOT NULL THEN
    PERFORM usage_give_back(owed_users, owed_months, owed_units);
  END IF;
  RETURN settled;
END
$$;

-- Gives back all that the receipts made more than `older_than` ago reserved: their process died
-- (or lost the database for that long) before it settled them. Receipts another transaction holds
-- are left to it. Returns the receipts given back.
CREATE FUNCTION refund_abandoned_usage_receipts(older_than interval) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  refunded integer;
  owed_users bigint[];
  owed_months date[];
  owed_units bigint[];
BEGIN
  WITH gone AS (
    DELETE FROM usage_receipts r
     WHERE (r.process, r.statement) IN (
       SELECT a.process, a.statement FROM usage_receipts a
        WHERE a.made_at < now() - older_than
        ORDER BY a.process, a.statement
          FOR UPDATE SKIP LOCKED)
    RETURNING r.month, r.user_ids, r.units
  ), owed AS (
    SELECT g.month, o.user_id, o.units::bigint AS units
      FROM gone g, unnest(g.user_ids, g.units) AS o (user_id, units)
  )
  SELECT (SELECT count(*) FROM gone), array_agg(owed.user_id), array_agg(owed.month), array_agg(owed.units)
    INTO refunded, owed_users, owed_months, owed_units
    FROM owed;
  IF owed_users IS NOT NULL THEN
    PERFORM usage_give_back(owed_users, owed_months, owed_units);
  END IF;
  RETURN refunded;
END
$$;

-- Decides a batch of API requests as 0013_baseline.sql says, with three changes: the month is the
-- one of the decision (`decide_at`, or the database's clock), reported as `usage_month` with the
-- searches each request reserved (`reserved`); the receipt is a row of usage_receipts; and a row
-- missing after it was made raises instead of being decided on.
CREATE FUNCTION admit_api_requests(
  key_ids bigint[], user_ids bigint[], prefixes text[], secret_hashes bytea[],
  limited boolean[], metered boolean[], units integer[],
  burst_seconds float8, burst_capacity integer,
  sustained_seconds float8, sustained_capacity integer,
  monthly_quota integer, decide_at float8,
  receipt_process uuid, receipt_statement bigint
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
  searches_this_month bigint,
  reserved integer,
  usage_month date
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  n integer := cardinality(key_ids);
  now_s float8 := coalesce(decide_at, extract(epoch FROM clock_timestamp()));
  month_of_decision date := date_trunc('month', to_timestamp(now_s) AT TIME ZONE 'UTC')::date;
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
     WHERE u.user_id = usage_users[p] AND u.month = month_of_decision FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO usage_monthly (user_id, month) VALUES (usage_users[p], month_of_decision) ON CONFLICT DO NOTHING;
      SELECT u.searches INTO used FROM usage_monthly u
       WHERE u.user_id = usage_users[p] AND u.month = month_of_decision FOR UPDATE;
      IF NOT FOUND THEN
        -- Deleted again by another transaction between the insert and the read: deciding on a
        -- missing row would refuse the request for a quota it has not used. The caller retries.
        RAISE EXCEPTION 'the usage row of user % vanished while it was being locked', usage_users[p]
          USING ERRCODE = 'serialization_failure';
      END IF;
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
      IF attempt = 2 THEN
        -- As for the usage rows: never decide on a row that is not there (nor on the previous key's).
        RAISE EXCEPTION 'the rate row of key % vanished while it was being locked', rate_keys[p]
          USING ERRCODE = 'serialization_failure';
      END IF;
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
    reserved := 0;
    usage_month := month_of_decision;
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
          reserved := units[i];
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
     WHERE m.user_id = usage_users[p] AND m.month = month_of_decision;
  END LOOP;

  IF receipt_process IS NOT NULL AND cardinality(reserved_users) > 0 THEN
    INSERT INTO usage_receipts (process, statement, month, user_ids, units)
    VALUES (receipt_process, receipt_statement, month_of_decision, reserved_users, reserved_units);
  END IF;
END
$$;
