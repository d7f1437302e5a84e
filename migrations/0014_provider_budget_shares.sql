-- Each user's share of a provider's budget, a wait given up that gives its slot back, and a
-- statement that tells a waiter when a concurrency slot frees (src/upstream/pacing/).
--
-- - provider_budget_users: the calls each user's searches made this period, per provider; a user
--   past PROVIDER_LIMITS' user_share of the budget gets budget_exhausted while others still spend.
--   Calls made for no user (probes, the CLI) count toward the budget only.
-- - acquire_provider_call reads the database's clock once it holds the provider's row, so a
--   statement that queued for the lock does not take a slot in the past (calls closer than their
--   spacing, issue 68 doubt 7).
-- - acquire_provider_call commits without waiting for the WAL's flush: a call is timed from its
--   answer, and a flush under load takes longer than the rate's margin.
-- - abandon_provider_call: a call that was given a slot and never made (the request's deadline or
--   abort cut its wait) gives back at once its lease, its budget unit and, when no later slot was
--   handed out since, its rate slot (issue 68 doubt 3).
-- - provider_budget_usage.announced: the 80 % and 100 % notices stay one per share and period even
--   when the unit that crossed a share is given back and taken again.
-- - reslot_provider_call: a call too late for its slot (its process was busy) takes a later one in
--   one statement, keeping its lease and budget unit.
-- - A freed lease is announced on the `sift_pacing` channel (payload: the provider), so a call
--   waiting for a concurrency slot waits for that or its deadline, never polling.

CREATE TABLE provider_budget_users (
  provider     text NOT NULL,
  period       text NOT NULL CHECK (period IN ('month', 'day')),
  period_start timestamptz NOT NULL,
  user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  calls        bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (provider, period, period_start, user_id)
);
CREATE INDEX provider_budget_users_user ON provider_budget_users (user_id);

-- The highest share of the budget (80, 100) already announced this period: a unit given back and
-- taken again never announces a share twice.
ALTER TABLE provider_budget_usage ADD COLUMN announced integer NOT NULL DEFAULT 0;

-- The budget alert names the user who spent the most of the budget this period.
ALTER TABLE alert_outbox
  ADD COLUMN budget_top_user  text,
  ADD COLUMN budget_top_calls bigint;

DROP FUNCTION acquire_provider_call(text, float8, boolean, float8, integer, float8, text, bigint, float8);

-- outcome: ok (wait_ms until the slot; lease when concurrency is limited; the slot, next_slot as
-- this call left it, and period_start of the unit it took, for abandon_provider_call; calls this
-- period, and crossed 80 or 100 when this call reached that share of the budget, with the period's
-- biggest spender; queued_ms: how long the statement waited for the provider's row), busy (no
-- concurrency slot now; retry_ms: until the oldest lease expires at the latest), rate_limited (no
-- slot within p_max_wait_ms; retry_ms: until the next one), budget_exhausted (retry_ms: until the
-- period ends or the upstream's count resets), user_budget_exhausted (this user's share is spent;
-- retry_ms: until the period ends).
CREATE FUNCTION acquire_provider_call(
  p_provider         text,
  p_interval_ms      float8,
  p_explicit_rate    boolean,
  p_provisional_ms   float8,
  p_concurrency      integer,
  p_hold_ms          float8,
  p_period           text,
  p_budget           bigint,
  p_user             bigint,
  p_user_budget      bigint,
  p_max_wait_ms      float8
) RETURNS TABLE (
  outcome      text,
  wait_ms      float8,
  lease        bigint,
  calls        bigint,
  crossed      integer,
  retry_ms     float8,
  slot_ms      float8,
  next_slot    float8,
  period_start timestamptz,
  top_user     text,
  top_calls    bigint,
  queued_ms    float8
)
LANGUAGE plpgsql AS $$
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

-- A call given a slot and never made: its lease and budget unit go back at once, and its rate slot
-- too when no later one was handed out since (next_slot is still what this call left). Locks the
-- provider's row first, as acquire_provider_call does.
CREATE FUNCTION abandon_provider_call(
  p_provider     text,
  p_lease        bigint,
  p_slot_ms      float8,
  p_next_slot    float8,
  p_period       text,
  p_period_start timestamptz,
  p_user         bigint
) RETURNS void LANGUAGE plpgsql AS $$
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

-- As in 0012, with the provider's row locked first (as acquire_provider_call locks it, then the
-- leases: one order, no deadlock), and a freed lease announced to the calls waiting for one.
CREATE OR REPLACE FUNCTION report_provider_call(
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

-- A call too late for its slot (its process was busy) takes a later one, keeping its lease and its
-- budget unit: its slot goes back when no later one was handed out since, and the new one is the
-- next free slot, or none (NULL wait_ms) when it is more than p_max_wait_ms away.
CREATE FUNCTION reslot_provider_call(
  p_provider    text,
  p_slot_ms     float8,
  p_next_slot   float8,
  p_max_wait_ms float8
) RETURNS TABLE (wait_ms float8, slot_ms float8, next_slot float8, queued_ms float8)
LANGUAGE plpgsql AS $$
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
