-- Provider state changes waiting for the alert webhooks (ALERT_WEBHOOK_URLS): one row per change and
-- webhook target. A row is written in the same transaction as the provider_status update that decided
-- the change (the writer that locked the row and saw the old state differ from the new), so each change
-- is queued exactly once whichever instance observed it. Any instance sends: it claims due rows with
-- FOR UPDATE SKIP LOCKED (setting a lease in next_attempt_at), posts one message per target (a digest
-- when several changes are due together), and deletes the rows once the target answered 2xx; a failure
-- moves next_attempt_at back by a growing delay.
CREATE TABLE alert_outbox (
  id              bigserial PRIMARY KEY,
  -- SHA-256 (hex) of the webhook URL: the URL is configuration and may hold a secret, never stored here
  target          text NOT NULL,
  provider        text NOT NULL,
  old_ok          boolean NOT NULL,
  new_ok          boolean NOT NULL,
  last_error      text NOT NULL DEFAULT '',
  changed_at      timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  -- deliveries tried so far (a claim counts one)
  attempts        integer NOT NULL DEFAULT 0,
  -- fresh rows: the end of the digest window; claimed: the end of the lease; failed: the next retry
  next_attempt_at timestamptz NOT NULL
);
CREATE INDEX alert_outbox_due ON alert_outbox (target, next_attempt_at);
