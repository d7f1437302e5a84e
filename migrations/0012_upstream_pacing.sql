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

-- A provider's budget reaching 80 % and 100 % goes out through the alert webhooks like a state
-- change: one outbox row per webhook target, written by the instance whose call crossed the share
-- (acquire_provider_call says which one did: exactly one per share and period).
ALTER TABLE alert_outbox
  ADD COLUMN budget_percent integer,
  ADD COLUMN budget_calls   bigint,
  ADD COLUMN budget_limit   bigint,
  ADD COLUMN budget_period  text;

-- The processes that use the shared cache, each renewing its row while it runs: a process that
-- finds itself alone (one process, one instance) keeps to its own cache and makes no statement.
CREATE UNLOGGED TABLE upstream_cache_members (
  owner       text PRIMARY KEY,
  alive_until float8 NOT NULL
);
