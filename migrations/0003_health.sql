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
