-- Idle rate rows are deleted in key order, and never waited for (src/limits/ledger.ts).
--
-- A plain DELETE by age locked the rows in the order of its scan, while admit_api_requests locks a
-- batch's rate rows by key ascending: the two could deadlock, aborting a whole admission batch. A
-- row another transaction holds is in use, so not idle: it is skipped, and nothing waits.
CREATE FUNCTION prune_idle_rate_limits(idle_seconds float8) RETURNS integer
LANGUAGE sql AS $$
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
