-- Rate limits (burst and sustained sliding logs) and monthly search usage.

-- One row per API key holding the admission timestamps of both sliding windows,
-- each array in ascending order (only entries still inside their window survive
-- an admission). UNLOGGED: no WAL is written for this hot table; after a crash
-- Postgres empties it, which forgives the current windows, an accepted
-- trade-off. The limiter reads and updates a row with a single statement (see
-- src/limits/rate-limiter.ts). Timestamps do not compress: storing the arrays
-- uncompressed (EXTERNAL) saves compressing up to 40 kB on every admission.
CREATE UNLOGGED TABLE rate_limits (
  key_id     bigint PRIMARY KEY,
  burst      timestamptz[] NOT NULL DEFAULT '{}',
  sustained  timestamptz[] NOT NULL DEFAULT '{}',
  touched_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE rate_limits ALTER COLUMN burst SET STORAGE EXTERNAL, ALTER COLUMN sustained SET STORAGE EXTERNAL;
CREATE INDEX rate_limits_touched ON rate_limits (touched_at);

-- How many leading entries of an ascending timestamp array are at or before
-- `cutoff` (the expired ones): a binary search, O(log n) instead of a scan.
CREATE FUNCTION rate_limit_expired(stamps timestamptz[], cutoff timestamptz) RETURNS integer
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  lo integer := 1;
  hi integer := coalesce(array_length(stamps, 1), 0) + 1;
  mid integer;
BEGIN
  WHILE lo < hi LOOP
    mid := (lo + hi) / 2;
    IF stamps[mid] <= cutoff THEN lo := mid + 1; ELSE hi := mid; END IF;
  END LOOP;
  RETURN lo - 1;
END
$$;

-- Searches per user per UTC month (month = its first day). Written in batches
-- by the usage recorder (src/limits/usage.ts).
CREATE TABLE usage_monthly (
  user_id  bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  month    date NOT NULL,
  searches bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, month)
);
