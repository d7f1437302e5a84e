--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: rate_window; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.rate_window AS (
	seconds double precision,
	capacity integer,
	step double precision,
	admitted integer,
	open_at double precision,
	open_count integer,
	oldest_closed_at double precision,
	closed_at double precision[],
	closed_count integer[],
	closed_loaded boolean,
	closed_changed boolean
);

--
-- Name: abandon_provider_call(text, bigint, double precision, double precision, text, timestamp with time zone, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.abandon_provider_call(p_provider text, p_lease bigint, p_slot_ms double precision, p_next_slot double precision, p_period text, p_period_start timestamp with time zone, p_user bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM 1 FROM provider_pacing p WHERE p.provider = p_provider FOR UPDATE;
  IF p_lease IS NOT NULL THEN
    DELETE FROM provider_call_leases WHERE id = p_lease;
    PERFORM pg_notify('sift_pacing', p_provider);
  END IF;
  IF p_next_slot IS NOT NULL THEN
    UPDATE provider_pacing p SET next_slot = p_slot_ms
     WHERE p.provider = p_provider AND p.next_slot = p_next_slot;
  END IF;
  IF p_period_start IS NOT NULL THEN
    UPDATE provider_budget_usage u SET calls = u.calls - 1
     WHERE u.provider = p_provider AND u.period = p_period AND u.period_start = p_period_start AND u.calls > 0;
    IF p_user IS NOT NULL THEN
      UPDATE provider_budget_users b SET calls = b.calls - 1
       WHERE b.provider = p_provider AND b.period = p_period AND b.period_start = p_period_start
         AND b.user_id = p_user AND b.calls > 0;
    END IF;
  END IF;
END $$;

--
-- Name: acquire_provider_call(text, double precision, boolean, double precision, integer, double precision, text, bigint, bigint, bigint, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.acquire_provider_call(p_provider text, p_interval_ms double precision, p_explicit_rate boolean, p_provisional_ms double precision, p_concurrency integer, p_hold_ms double precision, p_period text, p_budget bigint, p_user bigint, p_user_budget bigint, p_max_wait_ms double precision) RETURNS TABLE(outcome text, wait_ms double precision, lease bigint, calls bigint, crossed integer, retry_ms double precision, slot_ms double precision, next_slot double precision, period_start timestamp with time zone, top_user text, top_calls bigint, queued_ms double precision)
    LANGUAGE plpgsql
    AS $$
DECLARE
  t0       float8 := pacing_now();
  t        float8;
  r        provider_pacing;
  spacing  float8;
  slot     float8;
  start_at timestamptz;
  used     bigint;
  mine     bigint;
  n        integer;
  lease_id bigint;
  share    integer := 0;
  next_at  float8;
  top_name text;
  top_n    bigint;
BEGIN
  -- The caller leaves at its slot, timed from this answer: it must not wait for the WAL's flush to
  -- disk (a database crash may forget the last fraction of a second of counted calls).
  PERFORM set_config('synchronous_commit', 'off', true);
  INSERT INTO provider_pacing (provider) VALUES (p_provider) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM provider_pacing p WHERE p.provider = p_provider FOR UPDATE;
  -- Now, once the row is ours: a statement that waited for the lock must not take a past slot.
  t := pacing_now();

  IF r.period_remaining IS NOT NULL AND r.period_remaining <= 0 AND r.period_reset_at > t THEN
    RETURN QUERY SELECT 'budget_exhausted', 0::float8, NULL::bigint, NULL::bigint, 0, r.period_reset_at - t,
      NULL::float8, NULL::float8, NULL::timestamptz, NULL::text, NULL::bigint, 0::float8;
    RETURN;
  END IF;

  IF p_budget IS NOT NULL THEN
    start_at := date_trunc(p_period, clock_timestamp(), 'UTC');
    SELECT u.calls INTO used FROM provider_budget_usage u
     WHERE u.provider = p_provider AND u.period = p_period AND u.period_start = start_at;
    IF coalesce(used, 0) >= p_budget THEN
      RETURN QUERY SELECT 'budget_exhausted', 0::float8, NULL::bigint, used, 0,
        (extract(epoch FROM (start_at + ('1 ' || p_period)::interval) - clock_timestamp()) * 1000)::float8,
        NULL::float8, NULL::float8, NULL::timestamptz, NULL::text, NULL::bigint, 0::float8;
      RETURN;
    END IF;
    IF p_user IS NOT NULL AND p_user_budget IS NOT NULL THEN
      SELECT b.calls INTO mine FROM provider_budget_users b
       WHERE b.provider = p_provider AND b.period = p_period AND b.period_start = start_at AND b.user_id = p_user;
      IF coalesce(mine, 0) >= p_user_budget THEN
        RETURN QUERY SELECT 'user_budget_exhausted', 0::float8, NULL::bigint, mine, 0,
          (extract(epoch FROM (start_at + ('1 ' || p_period)::interval) - clock_timestamp()) * 1000)::float8,
          NULL::float8, NULL::float8, NULL::timestamptz, NULL::text, NULL::bigint, 0::float8;
        RETURN;
      END IF;
    END IF;
  END IF;

  IF p_concurrency IS NOT NULL THEN
    DELETE FROM provider_call_leases l WHERE l.provider = p_provider AND l.expires_at <= t;
    SELECT count(*), min(l.expires_at) INTO n, slot FROM provider_call_leases l WHERE l.provider = p_provider;
    IF n >= p_concurrency THEN
      RETURN QUERY SELECT 'busy', 0::float8, NULL::bigint, NULL::bigint, 0, greatest(0, slot - t),
        NULL::float8, NULL::float8, NULL::timestamptz, NULL::text, NULL::bigint, 0::float8;
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
    RETURN QUERY SELECT 'rate_limited', 0::float8, NULL::bigint, NULL::bigint, 0, slot - t - p_max_wait_ms,
      NULL::float8, NULL::float8, NULL::timestamptz, NULL::text, NULL::bigint, 0::float8;
    RETURN;
  END IF;
  IF spacing > 0 THEN
    next_at := slot + spacing;
    UPDATE provider_pacing p SET next_slot = next_at WHERE p.provider = p_provider;
  END IF;

  IF p_concurrency IS NOT NULL THEN
    INSERT INTO provider_call_leases (provider, expires_at) VALUES (p_provider, slot + p_hold_ms)
    RETURNING id INTO lease_id;
  END IF;

  IF p_budget IS NOT NULL THEN
    INSERT INTO provider_budget_usage AS u (provider, period, period_start, calls)
    VALUES (p_provider, p_period, start_at, 1)
    ON CONFLICT ON CONSTRAINT provider_budget_usage_pkey DO UPDATE SET calls = u.calls + 1
    RETURNING u.calls INTO used;
    IF p_user IS NOT NULL THEN
      INSERT INTO provider_budget_users AS b (provider, period, period_start, user_id, calls)
      VALUES (p_provider, p_period, start_at, p_user, 1)
      ON CONFLICT ON CONSTRAINT provider_budget_users_pkey DO UPDATE SET calls = b.calls + 1;
    END IF;
    share := CASE WHEN used >= p_budget THEN 100 WHEN used >= ceil(p_budget * 0.8) THEN 80 ELSE 0 END;
    UPDATE provider_budget_usage u SET announced = share
     WHERE u.provider = p_provider AND u.period = p_period AND u.period_start = start_at AND u.announced < share;
    IF NOT FOUND THEN
      share := 0;
    END IF;
    IF share > 0 THEN
      SELECT u.username, b.calls INTO top_name, top_n
        FROM provider_budget_users b JOIN users u ON u.id = b.user_id
       WHERE b.provider = p_provider AND b.period = p_period AND b.period_start = start_at
       ORDER BY b.calls DESC, b.user_id LIMIT 1;
    END IF;
  END IF;

  RETURN QUERY SELECT 'ok', slot - t, lease_id, used, share, 0::float8, slot, next_at, start_at, top_name, top_n, t - t0;
END $$;

--
-- Name: admit_api_requests(bigint[], bigint[], text[], bytea[], boolean[], boolean[], integer[], double precision, integer, double precision, integer, integer, double precision, uuid, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.admit_api_requests(key_ids bigint[], user_ids bigint[], prefixes text[], secret_hashes bytea[], limited boolean[], metered boolean[], units integer[], burst_seconds double precision, burst_capacity integer, sustained_seconds double precision, sustained_capacity integer, monthly_quota integer, decide_at double precision, receipt_process uuid, receipt_statement bigint) RETURNS TABLE(auth text, key_id bigint, user_id bigint, username text, secret_hash bytea, user_active boolean, admitted boolean, refused_by text, burst_remaining integer, burst_reset_seconds double precision, sustained_remaining integer, sustained_reset_seconds double precision, burst_wait_seconds double precision, sustained_wait_seconds double precision, searches_this_month bigint, reserved integer, usage_month date)
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: pacing_now(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.pacing_now() RETURNS double precision
    LANGUAGE sql
    AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 $$;

--
-- Name: prune_idle_rate_limits(double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.prune_idle_rate_limits(idle_seconds double precision) RETURNS integer
    LANGUAGE sql
    AS $$
  WITH gone AS (
    DELETE FROM rate_limits r
     WHERE r.key_id IN (
       SELECT i.key_id FROM rate_limits i
        WHERE i.touched_at < clock_timestamp() - make_interval(secs => idle_seconds)
        ORDER BY i.key_id
          FOR UPDATE SKIP LOCKED)
    RETURNING 1
  )
  SELECT count(*)::integer FROM gone
$$;

--
-- Name: rate_window_expire(public.rate_window, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rate_window_expire(w public.rate_window, at_time double precision) RETURNS public.rate_window
    LANGUAGE plpgsql IMMUTABLE
    AS $$
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

--
-- Name: rate_window_needs_closed(public.rate_window, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rate_window_needs_closed(w public.rate_window, at_time double precision) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT (w.oldest_closed_at IS NOT NULL AND w.oldest_closed_at + w.seconds <= at_time)
      OR (w.open_count > 0 AND floor(w.open_at / w.step) <> floor(at_time / w.step))
      OR w.admitted >= w.capacity
$$;

--
-- Name: rate_window_record(public.rate_window, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rate_window_record(w public.rate_window, at_time double precision) RETURNS public.rate_window
    LANGUAGE plpgsql IMMUTABLE
    AS $$
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

--
-- Name: rate_window_reset_seconds(public.rate_window, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rate_window_reset_seconds(w public.rate_window, at_time double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT CASE WHEN w.admitted > 0 THEN coalesce(w.oldest_closed_at, w.open_at) + w.seconds - at_time ELSE 0 END
$$;

--
-- Name: rate_window_step(double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rate_window_step(seconds double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT greatest(1, ceil(seconds / 1440)) $$;

--
-- Name: rate_window_wait_seconds(public.rate_window, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rate_window_wait_seconds(w public.rate_window, at_time double precision) RETURNS double precision
    LANGUAGE plpgsql IMMUTABLE
    AS $$
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

--
-- Name: refund_abandoned_usage_receipts(interval); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.refund_abandoned_usage_receipts(older_than interval) RETURNS integer
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: report_provider_call(text, bigint, boolean, double precision, double precision, bigint, bigint, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.report_provider_call(p_provider text, p_lease bigint, p_reported boolean, p_interval_ms double precision, p_rate_spent_ms double precision, p_period_limit bigint, p_period_remaining bigint, p_period_reset_ms double precision) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
  t float8 := pacing_now();
BEGIN
  IF p_lease IS NULL AND NOT p_reported THEN
    RETURN;
  END IF;
  INSERT INTO provider_pacing (provider) VALUES (p_provider) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM provider_pacing p WHERE p.provider = p_provider FOR UPDATE;
  IF p_lease IS NOT NULL THEN
    DELETE FROM provider_call_leases WHERE id = p_lease;
    PERFORM pg_notify('sift_pacing', p_provider);
  END IF;
  IF NOT p_reported THEN
    RETURN;
  END IF;
  UPDATE provider_pacing p SET
    reported_at       = t,
    reported_interval = p_interval_ms,
    period_limit      = p_period_limit,
    period_remaining  = p_period_remaining,
    period_reset_at   = t + p_period_reset_ms,
    hold_until        = greatest(p.hold_until, t + coalesce(p_rate_spent_ms, '-infinity'))
  WHERE p.provider = p_provider;
END $$;

--
-- Name: reslot_provider_call(text, double precision, double precision, double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.reslot_provider_call(p_provider text, p_slot_ms double precision, p_next_slot double precision, p_max_wait_ms double precision) RETURNS TABLE(wait_ms double precision, slot_ms double precision, next_slot double precision, queued_ms double precision)
    LANGUAGE plpgsql
    AS $$
DECLARE
  t0      float8 := pacing_now();
  t       float8;
  r       provider_pacing;
  spacing float8 := p_next_slot - p_slot_ms;
  slot    float8;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT * INTO r FROM provider_pacing p WHERE p.provider = p_provider FOR UPDATE;
  t := pacing_now();
  IF r.next_slot = p_next_slot THEN
    r.next_slot := p_slot_ms;
  END IF;
  slot := greatest(t, r.hold_until, r.next_slot);
  IF slot - t > p_max_wait_ms THEN
    UPDATE provider_pacing p SET next_slot = r.next_slot WHERE p.provider = p_provider;
    RETURN QUERY SELECT NULL::float8, NULL::float8, NULL::float8, t - t0;
    RETURN;
  END IF;
  UPDATE provider_pacing p SET next_slot = slot + spacing WHERE p.provider = p_provider;
  RETURN QUERY SELECT slot - t, slot, slot + spacing, t - t0;
END $$;

--
-- Name: settle_usage_receipts(uuid, bigint[], boolean[], bigint[], bigint[], integer[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.settle_usage_receipts(p_process uuid, p_statements bigint[], p_whole boolean[], p_refund_statements bigint[], p_refund_users bigint[], p_refund_units integer[]) RETURNS integer
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: sift_notify_key_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.sift_notify_key_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_notify('sift_auth', rtrim(OLD.prefix));
  RETURN NULL;
END
$$;

--
-- Name: sift_notify_user_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.sift_notify_user_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_notify('sift_auth', '*');
  RETURN NULL;
END
$$;

--
-- Name: sign_in_attempt_succeeded(text, text, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.sign_in_attempt_succeeded(p_client text, p_client_user text, p_client_threshold integer) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(1397314121, hashtext(p_client));
  DELETE FROM sign_in_attempts WHERE scope = 'client_user' AND key = p_client_user;
  UPDATE sign_in_attempts
     SET attempts = greatest(attempts - 1, 0),
         blocked_until = CASE WHEN attempts - 1 < p_client_threshold THEN NULL ELSE blocked_until END
   WHERE scope = 'client' AND key = p_client;
END $$;

--
-- Name: sign_in_attempt_take(text, text, integer, integer, double precision, double precision, double precision, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.sign_in_attempt_take(p_client text, p_client_user text, p_client_threshold integer, p_client_user_threshold integer, p_first_delay double precision, p_max_delay double precision, p_window double precision, p_now timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: upstream_cache_leave(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.upstream_cache_leave(p_owner text) RETURNS void
    LANGUAGE sql
    AS $$
  DELETE FROM upstream_cache c USING (
    SELECT key FROM upstream_cache WHERE owner = p_owner ORDER BY key FOR UPDATE
  ) mine WHERE c.key = mine.key;
  SELECT upstream_flights_end(ARRAY(SELECT key FROM upstream_flights WHERE owner = p_owner));
  DELETE FROM upstream_cache_members WHERE owner = p_owner;
$$;

--
-- Name: upstream_cache_lookup(text, bytea[], double precision[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.upstream_cache_lookup(p_owner text, p_keys bytea[], p_flight_ms double precision[]) RETURNS TABLE(key bytea, value text, state text, wait_ms double precision)
    LANGUAGE sql
    AS $$
  WITH t AS (SELECT pacing_now() AS now_ms),
  k AS (
    SELECT DISTINCT ON (u.key) u.key, u.flight FROM unnest(p_keys, p_flight_ms) AS u(key, flight) ORDER BY u.key
  ),
  hit AS (
    SELECT c.key, c.value FROM upstream_cache c JOIN k ON k.key = c.key, t WHERE c.expires_at > t.now_ms
  ),
  claim AS (
    INSERT INTO upstream_flights AS f (key, owner, expires_at)
    SELECT k.key, p_owner, t.now_ms + k.flight FROM k, t
     WHERE NOT EXISTS (SELECT 1 FROM hit WHERE hit.key = k.key)
     ORDER BY k.key
    ON CONFLICT (key) DO UPDATE SET
      owner      = CASE WHEN f.expires_at <= (SELECT now_ms FROM t) THEN EXCLUDED.owner ELSE f.owner END,
      waited     = f.expires_at > (SELECT now_ms FROM t),
      expires_at = CASE WHEN f.expires_at <= (SELECT now_ms FROM t) THEN EXCLUDED.expires_at ELSE f.expires_at END
    RETURNING f.key, f.waited, f.expires_at
  )
  SELECT k.key, hit.value,
         CASE WHEN hit.key IS NOT NULL THEN 'hit' WHEN claim.waited THEN 'wait' ELSE 'claimed' END,
         CASE WHEN claim.waited THEN greatest(0, claim.expires_at - t.now_ms) END
    FROM k CROSS JOIN t LEFT JOIN hit ON hit.key = k.key LEFT JOIN claim ON claim.key = k.key
$$;

--
-- Name: upstream_cache_prune(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.upstream_cache_prune(p_max_bytes bigint) RETURNS void
    LANGUAGE sql
    AS $$
  DELETE FROM upstream_cache c USING (
    SELECT key FROM upstream_cache WHERE expires_at <= pacing_now() ORDER BY key FOR UPDATE SKIP LOCKED
  ) old WHERE c.key = old.key;
  DELETE FROM upstream_flights f USING (
    SELECT key FROM upstream_flights WHERE expires_at <= pacing_now() ORDER BY key FOR UPDATE SKIP LOCKED
  ) old WHERE f.key = old.key;
  DELETE FROM upstream_cache c USING (
    SELECT s.key FROM (
      SELECT key, sum(bytes) OVER (ORDER BY expires_at DESC, key) AS kept FROM upstream_cache
    ) s WHERE s.kept > p_max_bytes ORDER BY s.key
  ) over, LATERAL (SELECT 1 FROM upstream_cache l WHERE l.key = over.key FOR UPDATE SKIP LOCKED) held
  WHERE c.key = over.key;
$$;

--
-- Name: upstream_cache_store(text, bytea[], text[], text[], double precision[], bytea[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.upstream_cache_store(p_owner text, p_keys bytea[], p_providers text[], p_values text[], p_ttls double precision[], p_released bytea[]) RETURNS void
    LANGUAGE sql
    AS $$
  INSERT INTO upstream_cache AS c (key, owner, provider, value, bytes, expires_at)
  SELECT DISTINCT ON (u.key) u.key, p_owner, u.provider, u.value, octet_length(u.value), pacing_now() + u.ttl
    FROM unnest(p_keys, p_providers, p_values, p_ttls) AS u(key, provider, value, ttl)
   ORDER BY u.key
  ON CONFLICT (key) DO UPDATE
    SET owner = EXCLUDED.owner, provider = EXCLUDED.provider, value = EXCLUDED.value, bytes = EXCLUDED.bytes,
        expires_at = EXCLUDED.expires_at;
  SELECT upstream_flights_end(p_keys || p_released);
$$;

--
-- Name: upstream_flights_end(bytea[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.upstream_flights_end(p_keys bytea[]) RETURNS void
    LANGUAGE sql
    AS $$
  WITH locked AS (
    SELECT f.key FROM upstream_flights f WHERE f.key = ANY (p_keys) ORDER BY f.key FOR UPDATE
  ),
  gone AS (
    DELETE FROM upstream_flights f USING locked WHERE f.key = locked.key RETURNING f.key, f.waited
  )
  SELECT count(pg_notify('sift_upstream_cache', encode(gone.key, 'hex'))) FROM gone WHERE gone.waited;
$$;

--
-- Name: usage_give_back(bigint[], date[], bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.usage_give_back(user_ids bigint[], months date[], units bigint[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: usage_reserve_more(bigint, date, bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.usage_reserve_more(p_user_id bigint, p_month date, p_units bigint, p_quota bigint) RETURNS boolean
    LANGUAGE sql
    AS $$
  WITH added AS (
    INSERT INTO usage_monthly AS u (user_id, month, searches)
    SELECT p_user_id, p_month, p_units WHERE p_quota = 0 OR p_units <= p_quota
    ON CONFLICT (user_id, month) DO UPDATE SET searches = u.searches + EXCLUDED.searches
      WHERE p_quota = 0 OR u.searches + EXCLUDED.searches <= p_quota
    RETURNING 1
  )
  SELECT EXISTS (SELECT 1 FROM added)
$$;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: alert_outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alert_outbox (
    id bigint NOT NULL,
    target text NOT NULL,
    provider text NOT NULL,
    old_ok boolean NOT NULL,
    new_ok boolean NOT NULL,
    last_error text DEFAULT ''::text NOT NULL,
    changed_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    budget_percent integer,
    budget_calls bigint,
    budget_limit bigint,
    budget_period text,
    budget_top_user text,
    budget_top_calls bigint
);

--
-- Name: alert_outbox_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.alert_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: alert_outbox_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.alert_outbox_id_seq OWNED BY public.alert_outbox.id;

--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id bigint NOT NULL,
    user_id bigint NOT NULL,
    prefix text NOT NULL,
    secret_hash bytea NOT NULL,
    name text DEFAULT 'API key'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone
);

--
-- Name: api_keys_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.api_keys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: api_keys_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.api_keys_id_seq OWNED BY public.api_keys.id;

--
-- Name: currency_rates; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.currency_rates (
    code text NOT NULL,
    per_usd double precision NOT NULL,
    rate_date date NOT NULL,
    fetched_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT currency_rates_code_check CHECK ((code ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT currency_rates_per_usd_check CHECK ((per_usd > (0)::double precision))
);

--
-- Name: provider_budget_usage; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_budget_usage (
    provider text NOT NULL,
    period text NOT NULL,
    period_start timestamp with time zone NOT NULL,
    calls bigint DEFAULT 0 NOT NULL,
    announced integer DEFAULT 0 NOT NULL,
    CONSTRAINT provider_budget_usage_period_check CHECK ((period = ANY (ARRAY['month'::text, 'day'::text])))
);

--
-- Name: provider_budget_users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_budget_users (
    provider text NOT NULL,
    period text NOT NULL,
    period_start timestamp with time zone NOT NULL,
    user_id bigint NOT NULL,
    calls bigint DEFAULT 0 NOT NULL,
    CONSTRAINT provider_budget_users_period_check CHECK ((period = ANY (ARRAY['month'::text, 'day'::text])))
);

--
-- Name: provider_call_leases; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.provider_call_leases (
    id bigint NOT NULL,
    provider text NOT NULL,
    expires_at double precision NOT NULL
);

--
-- Name: provider_call_leases_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE UNLOGGED SEQUENCE public.provider_call_leases_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: provider_call_leases_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.provider_call_leases_id_seq OWNED BY public.provider_call_leases.id;

--
-- Name: provider_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_history (
    provider text NOT NULL,
    hour timestamp with time zone NOT NULL,
    successes integer DEFAULT 0 NOT NULL,
    failures integer DEFAULT 0 NOT NULL,
    latency_sum_ms bigint DEFAULT 0 NOT NULL,
    latency_max_ms integer DEFAULT 0 NOT NULL
);

--
-- Name: provider_pacing; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_pacing (
    provider text NOT NULL,
    next_slot double precision DEFAULT '-Infinity'::double precision NOT NULL,
    hold_until double precision DEFAULT '-Infinity'::double precision NOT NULL,
    reported_at double precision,
    reported_interval double precision,
    period_limit bigint,
    period_remaining bigint,
    period_reset_at double precision
);

--
-- Name: provider_status; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_status (
    provider text NOT NULL,
    ok boolean NOT NULL,
    source text DEFAULT 'query'::text NOT NULL,
    last_error text DEFAULT ''::text NOT NULL,
    last_ok_at timestamp with time zone,
    checked_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT provider_status_last_error_check CHECK ((char_length(last_error) <= 300)),
    CONSTRAINT provider_status_source_check CHECK ((source = ANY (ARRAY['query'::text, 'probe'::text])))
);

--
-- Name: rate_limits; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.rate_limits (
    key_id bigint NOT NULL,
    burst_admitted integer DEFAULT 0 NOT NULL,
    burst_open_at double precision,
    burst_open_count integer DEFAULT 0 NOT NULL,
    burst_oldest_closed_at double precision,
    burst_closed_at double precision[] DEFAULT '{}'::double precision[] NOT NULL,
    burst_closed_count integer[] DEFAULT '{}'::integer[] NOT NULL,
    sustained_admitted integer DEFAULT 0 NOT NULL,
    sustained_open_at double precision,
    sustained_open_count integer DEFAULT 0 NOT NULL,
    sustained_oldest_closed_at double precision,
    sustained_closed_at double precision[] DEFAULT '{}'::double precision[] NOT NULL,
    sustained_closed_count integer[] DEFAULT '{}'::integer[] NOT NULL,
    touched_at timestamp with time zone DEFAULT now() NOT NULL
)
WITH (fillfactor='50');

--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    sid text NOT NULL,
    data jsonb NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

--
-- Name: sign_in_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sign_in_attempts (
    scope text NOT NULL,
    key text NOT NULL,
    attempts integer NOT NULL,
    last_attempt_at timestamp with time zone NOT NULL,
    blocked_until timestamp with time zone,
    CONSTRAINT sign_in_attempts_scope_check CHECK ((scope = ANY (ARRAY['client'::text, 'client_user'::text])))
);

--
-- Name: upstream_cache; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.upstream_cache (
    key bytea NOT NULL,
    owner text NOT NULL,
    provider text NOT NULL,
    value text NOT NULL,
    bytes integer NOT NULL,
    expires_at double precision NOT NULL
);

--
-- Name: upstream_cache_members; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.upstream_cache_members (
    owner text NOT NULL,
    alive_until double precision NOT NULL
);

--
-- Name: upstream_flights; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.upstream_flights (
    key bytea NOT NULL,
    owner text NOT NULL,
    expires_at double precision NOT NULL,
    waited boolean DEFAULT false NOT NULL
);

--
-- Name: usage_monthly; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.usage_monthly (
    user_id bigint NOT NULL,
    month date NOT NULL,
    searches bigint DEFAULT 0 NOT NULL
);

--
-- Name: usage_receipts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.usage_receipts (
    process uuid NOT NULL,
    statement bigint NOT NULL,
    month date NOT NULL,
    user_ids bigint[] NOT NULL,
    units integer[] NOT NULL,
    made_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id bigint NOT NULL,
    username text NOT NULL,
    password_hash text DEFAULT ''::text NOT NULL,
    is_active boolean DEFAULT true NOT NULL,
    is_staff boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_login_at timestamp with time zone
);

--
-- Name: users_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: users_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.users_id_seq OWNED BY public.users.id;

--
-- Name: alert_outbox id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_outbox ALTER COLUMN id SET DEFAULT nextval('public.alert_outbox_id_seq'::regclass);

--
-- Name: api_keys id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys ALTER COLUMN id SET DEFAULT nextval('public.api_keys_id_seq'::regclass);

--
-- Name: provider_call_leases id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_call_leases ALTER COLUMN id SET DEFAULT nextval('public.provider_call_leases_id_seq'::regclass);

--
-- Name: users id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users ALTER COLUMN id SET DEFAULT nextval('public.users_id_seq'::regclass);

--
-- Name: alert_outbox alert_outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alert_outbox
    ADD CONSTRAINT alert_outbox_pkey PRIMARY KEY (id);

--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);

--
-- Name: api_keys api_keys_prefix_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_prefix_key UNIQUE (prefix);

--
-- Name: currency_rates currency_rates_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.currency_rates
    ADD CONSTRAINT currency_rates_pkey PRIMARY KEY (code);

--
-- Name: provider_budget_usage provider_budget_usage_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_budget_usage
    ADD CONSTRAINT provider_budget_usage_pkey PRIMARY KEY (provider, period, period_start);

--
-- Name: provider_budget_users provider_budget_users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_budget_users
    ADD CONSTRAINT provider_budget_users_pkey PRIMARY KEY (provider, period, period_start, user_id);

--
-- Name: provider_call_leases provider_call_leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_call_leases
    ADD CONSTRAINT provider_call_leases_pkey PRIMARY KEY (id);

--
-- Name: provider_history provider_history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_history
    ADD CONSTRAINT provider_history_pkey PRIMARY KEY (provider, hour);

--
-- Name: provider_pacing provider_pacing_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_pacing
    ADD CONSTRAINT provider_pacing_pkey PRIMARY KEY (provider);

--
-- Name: provider_status provider_status_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_status
    ADD CONSTRAINT provider_status_pkey PRIMARY KEY (provider);

--
-- Name: rate_limits rate_limits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (key_id);

--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (sid);

--
-- Name: sign_in_attempts sign_in_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_attempts
    ADD CONSTRAINT sign_in_attempts_pkey PRIMARY KEY (scope, key);

--
-- Name: upstream_cache_members upstream_cache_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.upstream_cache_members
    ADD CONSTRAINT upstream_cache_members_pkey PRIMARY KEY (owner);

--
-- Name: upstream_cache upstream_cache_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.upstream_cache
    ADD CONSTRAINT upstream_cache_pkey PRIMARY KEY (key);

--
-- Name: upstream_flights upstream_flights_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.upstream_flights
    ADD CONSTRAINT upstream_flights_pkey PRIMARY KEY (key);

--
-- Name: usage_monthly usage_monthly_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.usage_monthly
    ADD CONSTRAINT usage_monthly_pkey PRIMARY KEY (user_id, month);

--
-- Name: usage_receipts usage_receipts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.usage_receipts
    ADD CONSTRAINT usage_receipts_pkey PRIMARY KEY (process, statement);

--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

--
-- Name: alert_outbox_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alert_outbox_due ON public.alert_outbox USING btree (target, next_attempt_at);

--
-- Name: api_keys_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_user ON public.api_keys USING btree (user_id, created_at DESC);

--
-- Name: provider_budget_users_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_budget_users_user ON public.provider_budget_users USING btree (user_id);

--
-- Name: provider_call_leases_provider; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_call_leases_provider ON public.provider_call_leases USING btree (provider, expires_at);

--
-- Name: provider_history_hour; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX provider_history_hour ON public.provider_history USING btree (hour);

--
-- Name: sessions_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_expires ON public.sessions USING btree (expires_at);

--
-- Name: sign_in_attempts_last; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sign_in_attempts_last ON public.sign_in_attempts USING btree (last_attempt_at);

--
-- Name: upstream_cache_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX upstream_cache_expires ON public.upstream_cache USING btree (expires_at);

--
-- Name: upstream_cache_owner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX upstream_cache_owner ON public.upstream_cache USING btree (owner);

--
-- Name: usage_receipts_made_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX usage_receipts_made_at ON public.usage_receipts USING btree (made_at);

--
-- Name: users_username_lower; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX users_username_lower ON public.users USING btree (lower(username));

--
-- Name: api_keys api_keys_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER api_keys_changed AFTER UPDATE ON public.api_keys FOR EACH ROW WHEN (((old.revoked_at IS DISTINCT FROM new.revoked_at) OR (old.secret_hash IS DISTINCT FROM new.secret_hash) OR (old.user_id IS DISTINCT FROM new.user_id) OR (old.prefix IS DISTINCT FROM new.prefix))) EXECUTE FUNCTION public.sift_notify_key_change();

--
-- Name: api_keys api_keys_deleted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER api_keys_deleted AFTER DELETE ON public.api_keys FOR EACH ROW EXECUTE FUNCTION public.sift_notify_key_change();

--
-- Name: users users_changed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER users_changed AFTER UPDATE ON public.users FOR EACH ROW WHEN (((old.is_active IS DISTINCT FROM new.is_active) OR (old.username IS DISTINCT FROM new.username))) EXECUTE FUNCTION public.sift_notify_user_change();

--
-- Name: users users_deleted; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER users_deleted AFTER DELETE ON public.users FOR EACH ROW EXECUTE FUNCTION public.sift_notify_user_change();

--
-- Name: api_keys api_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: provider_budget_users provider_budget_users_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_budget_users
    ADD CONSTRAINT provider_budget_users_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: usage_monthly usage_monthly_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.usage_monthly
    ADD CONSTRAINT usage_monthly_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- PostgreSQL database dump complete
--
