-- Failed web sign-ins, counted per client IP and per username, to slow down password guessing.
CREATE TABLE login_failures (
  scope           text NOT NULL CHECK (scope IN ('ip', 'user')),
  key             text NOT NULL,
  failures        integer NOT NULL,
  last_failure_at timestamptz NOT NULL,
  blocked_until   timestamptz,
  PRIMARY KEY (scope, key)
);
CREATE INDEX login_failures_last ON login_failures (last_failure_at);
