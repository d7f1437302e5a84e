-- Users of this instance, their API keys, and web sign-in sessions.
CREATE TABLE users (
  id            bigserial PRIMARY KEY,
  username      text NOT NULL,
  password_hash text NOT NULL DEFAULT '',
  is_active     boolean NOT NULL DEFAULT true,
  is_staff      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_login_at timestamptz
);
CREATE UNIQUE INDEX users_username_lower ON users (lower(username));

CREATE TABLE api_keys (
  id           bigserial PRIMARY KEY,
  user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  prefix       char(8) NOT NULL UNIQUE,
  secret_hash  bytea NOT NULL,
  name         text NOT NULL DEFAULT 'API key',
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at DESC);

CREATE TABLE sessions (
  sid        text PRIMARY KEY,
  data       jsonb NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);
