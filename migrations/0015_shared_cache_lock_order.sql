-- The shared response cache (src/upstream/shared-cache.ts) locks rows in one global order, and
-- tells the processes that wait for a flight when it ends.
--
-- Lock order, in every statement: upstream_cache rows before upstream_flights rows, each by key
-- ascending. The lookup locks flights only, the store and a leaving process take cache rows then
-- flights, the prune skips rows another statement holds. Before this, the store deleted flights
-- in scan order while the lookup upserted them in its own: PostgreSQL aborted one of the two.
--
-- upstream_flights.waited: another process found the flight live and waits for it; ending the
-- flight (a store, a failure's release, its holder leaving) then notifies `sift_upstream_cache`
-- with the key in hex, so waiters ask again at once instead of polling.

ALTER TABLE upstream_flights ADD COLUMN waited boolean NOT NULL DEFAULT false;

DROP FUNCTION upstream_cache_lookup(text, bytea[], float8[]);

-- One row per distinct key: 'hit' with the value, 'claimed' (this caller fetches it; its flight is
-- taken), or 'wait' (another caller's flight is live; wait_ms: until it expires).
CREATE FUNCTION upstream_cache_lookup(p_owner text, p_keys bytea[], p_flight_ms float8[])
RETURNS TABLE (key bytea, value text, state text, wait_ms float8)
LANGUAGE sql AS $$
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

-- Ends the flights of p_keys (in key order), notifying their waiters.
CREATE FUNCTION upstream_flights_end(p_keys bytea[]) RETURNS void LANGUAGE sql AS $$
  WITH locked AS (
    SELECT f.key FROM upstream_flights f WHERE f.key = ANY (p_keys) ORDER BY f.key FOR UPDATE
  ),
  gone AS (
    DELETE FROM upstream_flights f USING locked WHERE f.key = locked.key RETURNING f.key, f.waited
  )
  SELECT count(pg_notify('sift_upstream_cache', encode(gone.key, 'hex'))) FROM gone WHERE gone.waited;
$$;

-- Stores answers (each with its TTL, ms) and ends their flights, and ends the flights of failed calls.
CREATE OR REPLACE FUNCTION upstream_cache_store(
  p_owner text, p_keys bytea[], p_providers text[], p_values text[], p_ttls float8[], p_released bytea[]
) RETURNS void LANGUAGE sql AS $$
  INSERT INTO upstream_cache AS c (key, owner, provider, value, bytes, expires_at)
  SELECT DISTINCT ON (u.key) u.key, p_owner, u.provider, u.value, octet_length(u.value), pacing_now() + u.ttl
    FROM unnest(p_keys, p_providers, p_values, p_ttls) AS u(key, provider, value, ttl)
   ORDER BY u.key
  ON CONFLICT (key) DO UPDATE
    SET owner = EXCLUDED.owner, provider = EXCLUDED.provider, value = EXCLUDED.value, bytes = EXCLUDED.bytes,
        expires_at = EXCLUDED.expires_at;
  SELECT upstream_flights_end(p_keys || p_released);
$$;

-- A process that stops: its entries and flights go (its waiters are told), then its membership.
CREATE FUNCTION upstream_cache_leave(p_owner text) RETURNS void LANGUAGE sql AS $$
  DELETE FROM upstream_cache c USING (
    SELECT key FROM upstream_cache WHERE owner = p_owner ORDER BY key FOR UPDATE
  ) mine WHERE c.key = mine.key;
  SELECT upstream_flights_end(ARRAY(SELECT key FROM upstream_flights WHERE owner = p_owner));
  DELETE FROM upstream_cache_members WHERE owner = p_owner;
$$;

-- Expired entries and flights go; then, past p_max_bytes, the entries nearest expiry. Rows another
-- statement holds are left for the next prune (a prune never waits, so it is in no lock cycle).
CREATE OR REPLACE FUNCTION upstream_cache_prune(p_max_bytes bigint) RETURNS void LANGUAGE sql AS $$
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
