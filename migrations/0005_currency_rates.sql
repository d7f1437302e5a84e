-- Exchange rates of the currency instant answer (Frankfurter: ECB reference
-- rates), one row per currency: units of it per 1 US dollar (USD itself is 1).
-- Refreshed from the feed at most once a day (src/search/instant/rates-store.ts);
-- when the feed is down, the stored rates are served marked stale.
CREATE TABLE currency_rates (
  code       text PRIMARY KEY CHECK (code ~ '^[A-Z]{3}$'),
  per_usd    double precision NOT NULL CHECK (per_usd > 0),
  -- the feed's date for this rate
  rate_date  date NOT NULL,
  -- when this instance last fetched it
  fetched_at timestamptz NOT NULL DEFAULT now()
);
