-- Rate limits as bucketed sliding windows (replaces the per-request timestamp logs of 0004).
--
-- Each window of a key is a list of buckets, oldest first. A bucket spans one
-- step (window / 1440, at least one second: 1 s for a minute, 60 s for a day)
-- and holds how many admissions it took (`n`) and the database time (epoch
-- seconds) of its LATEST admission (`last`). A bucket leaves the window when
-- its latest admission does, so the count is never below the exact sliding
-- count: never more than `limit` admitted in any window, and a slot comes
-- back at most one step late.
--
-- Layout, so that a request rewrites only a few scalars whatever the limit:
-- the newest bucket lives in `*_cur_last` / `*_cur_n`; the older ones in the
-- arrays `*_last` / `*_n` (at most 1440 entries); `*_head` caches the time of
-- the oldest array bucket and `*_total` the sum of every bucket. The arrays
-- are read and rewritten only when a bucket closes or expires (about twice
-- per step) or to compute the wait of a refusal; otherwise their stored
-- (TOAST) values are left untouched by the UPDATE.
DROP TABLE rate_limits;
DROP FUNCTION rate_limit_expired(timestamptz[], timestamptz);

CREATE UNLOGGED TABLE rate_limits (
  key_id         bigint PRIMARY KEY,
  b_last         float8[] NOT NULL DEFAULT '{}',
  b_n            integer[] NOT NULL DEFAULT '{}',
  b_head         float8,
  b_cur_last     float8,
  b_cur_n        integer NOT NULL DEFAULT 0,
  b_total        integer NOT NULL DEFAULT 0,
  s_last         float8[] NOT NULL DEFAULT '{}',
  s_n            integer[] NOT NULL DEFAULT '{}',
  s_head         float8,
  s_cur_last     float8,
  s_cur_n        integer NOT NULL DEFAULT 0,
  s_total        integer NOT NULL DEFAULT 0,
  touched_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rate_limits_touched ON rate_limits (touched_at);

-- One admission decision for `wanted` requests of a key (that key's requests
-- waiting on one instance, batched): grants as many as both windows allow,
-- records them, and reports what the caller needs for its headers. The row
-- lock is held for this function only; READ COMMITTED sees the newest row.
-- (b = burst, s = sustained; h head, cl/cn current bucket, t total, l/n arrays.)
CREATE FUNCTION rate_limit_admit(
  p_key bigint, p_wanted integer,
  p_burst_window float8, p_burst_limit integer,
  p_sustained_window float8, p_sustained_limit integer,
  OUT granted integer,
  OUT burst_before integer, OUT burst_reset float8, OUT burst_wait float8,
  OUT sustained_before integer, OUT sustained_reset float8, OUT sustained_wait float8
) LANGUAGE plpgsql AS $$
DECLARE
  now_s float8 := extract(epoch FROM clock_timestamp());
  bh float8; bcl float8; bcn integer; bt integer; bl float8[]; bn integer[];
  sh float8; scl float8; scn integer; st integer; sl float8[]; sn integer[];
  s_loaded boolean := false;
  b_changed boolean := false; s_changed boolean := false;
  k integer; i integer; cum integer;
BEGIN
  -- The scalars, and the burst window's short lists (at most 61 buckets by default, stored inline);
  -- the sustained lists are read only when a bucket closes or expires, or for a refusal's wait.
  SELECT b_head, b_cur_last, b_cur_n, b_total, b_last, b_n, s_head, s_cur_last, s_cur_n, s_total
    INTO bh, bcl, bcn, bt, bl, bn, sh, scl, scn, st
    FROM rate_limits WHERE key_id = p_key FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_limits (key_id) VALUES (p_key) ON CONFLICT (key_id) DO NOTHING;
    SELECT b_head, b_cur_last, b_cur_n, b_total, b_last, b_n, s_head, s_cur_last, s_cur_n, s_total
      INTO bh, bcl, bcn, bt, bl, bn, sh, scl, scn, st
      FROM rate_limits WHERE key_id = p_key FOR NO KEY UPDATE;
  END IF;
  -- Never before the newest admission recorded, so buckets stay in order whatever the clocks did.
  now_s := greatest(now_s, coalesce(bcl, now_s), coalesce(scl, now_s));

  -- Drop what has left each window.
  IF bh IS NOT NULL AND bh + p_burst_window <= now_s THEN
    k := 0;
    WHILE k < coalesce(array_length(bl, 1), 0) AND bl[k + 1] + p_burst_window <= now_s LOOP
      bt := bt - bn[k + 1];
      k := k + 1;
    END LOOP;
    bl := bl[k + 1:];
    bn := bn[k + 1:];
    bh := bl[1];
    b_changed := true;
  END IF;
  IF bcn > 0 AND bcl + p_burst_window <= now_s THEN
    bt := bt - bcn;
    bcn := 0;
  END IF;
  IF sh IS NOT NULL AND sh + p_sustained_window <= now_s THEN
    IF NOT s_loaded THEN
      SELECT s_last, s_n INTO sl, sn FROM rate_limits WHERE key_id = p_key;
      s_loaded := true;
    END IF;
    k := 0;
    WHILE k < coalesce(array_length(sl, 1), 0) AND sl[k + 1] + p_sustained_window <= now_s LOOP
      st := st - sn[k + 1];
      k := k + 1;
    END LOOP;
    sl := sl[k + 1:];
    sn := sn[k + 1:];
    sh := sl[1];
    s_changed := true;
  END IF;
  IF scn > 0 AND scl + p_sustained_window <= now_s THEN
    st := st - scn;
    scn := 0;
  END IF;

  burst_before := bt;
  sustained_before := st;
  granted := greatest(0, least(p_wanted, p_burst_limit - bt, p_sustained_limit - st));

  IF granted > 0 THEN
    IF bcn > 0 AND floor(bcl / greatest(1, ceil(p_burst_window / 1440))) = floor(now_s / greatest(1, ceil(p_burst_window / 1440))) THEN
      bcn := bcn + granted;
    ELSE
      IF bcn > 0 THEN
        bl := bl || bcl;
        bn := bn || bcn;
        bh := coalesce(bh, bcl);
        b_changed := true;
      END IF;
      bcn := granted;
    END IF;
    bcl := now_s;
    bt := bt + granted;
    IF scn > 0 AND floor(scl / greatest(1, ceil(p_sustained_window / 1440))) = floor(now_s / greatest(1, ceil(p_sustained_window / 1440))) THEN
      scn := scn + granted;
    ELSE
      IF scn > 0 THEN
        IF NOT s_loaded THEN
          SELECT s_last, s_n INTO sl, sn FROM rate_limits WHERE key_id = p_key;
          s_loaded := true;
        END IF;
        sl := sl || scl;
        sn := sn || scn;
        sh := coalesce(sh, scl);
        s_changed := true;
      END IF;
      scn := granted;
    END IF;
    scl := now_s;
    st := st + granted;
  END IF;

  -- One UPDATE. A list that did not change is set to itself: its stored (TOAST) value is kept as it is.
  IF granted > 0 OR b_changed OR s_changed THEN
    UPDATE rate_limits SET
      b_last = CASE WHEN b_changed THEN bl ELSE b_last END,
      b_n = CASE WHEN b_changed THEN bn ELSE b_n END,
      s_last = CASE WHEN s_changed THEN sl ELSE s_last END,
      s_n = CASE WHEN s_changed THEN sn ELSE s_n END,
      b_head = bh, b_cur_last = bcl, b_cur_n = bcn, b_total = bt,
      s_head = sh, s_cur_last = scl, s_cur_n = scn, s_total = st,
      touched_at = clock_timestamp()
    WHERE key_id = p_key;
  END IF;

  -- When `remaining` next grows: the oldest bucket leaves.
  burst_reset := CASE WHEN bt > 0 THEN coalesce(bh, bcl) + p_burst_window - now_s END;
  sustained_reset := CASE WHEN st > 0 THEN coalesce(sh, scl) + p_sustained_window - now_s END;
  -- For requests refused now: when one slot frees (null while the window has room).
  IF bt >= p_burst_limit THEN
    cum := 0;
    burst_wait := bcl + p_burst_window - now_s;
    FOR i IN 1 .. coalesce(array_length(bl, 1), 0) LOOP
      cum := cum + bn[i];
      IF bt - cum < p_burst_limit THEN
        burst_wait := bl[i] + p_burst_window - now_s;
        EXIT;
      END IF;
    END LOOP;
  END IF;
  IF st >= p_sustained_limit THEN
    IF NOT s_loaded THEN
      SELECT s_last, s_n INTO sl, sn FROM rate_limits WHERE key_id = p_key;
      s_loaded := true;
    END IF;
    cum := 0;
    sustained_wait := scl + p_sustained_window - now_s;
    FOR i IN 1 .. coalesce(array_length(sl, 1), 0) LOOP
      cum := cum + sn[i];
      IF st - cum < p_sustained_limit THEN
        sustained_wait := sl[i] + p_sustained_window - now_s;
        EXIT;
      END IF;
    END LOOP;
  END IF;
END
$$;
