-- Admission leases (src/limits/batch.ts): a busy key's instance may take a few slots more than the
-- requests waiting for a decision, and admit the key's next requests from them without a round trip.
--
-- The function of 0006 with three more things, same windows and buckets:
-- - p_extra: after the p_wanted requests (only when every one of them is admitted), up to p_extra
--   more slots are taken as a lease, never more than half the room left in either window, so that a
--   lease never starves the key's other instances;
-- - p_hold: a lease's slots are recorded as if admitted p_hold seconds from now (or at the newest
--   recording, if later), the longest the instance may use them. A slot thus leaves the window no earlier than a window after its use:
--   never more than `limit` admitted in any interval of the window's length still holds. Every later
--   admission of the key is recorded no earlier than that (buckets stay in time order); what leaves
--   the windows is judged by the real time;
-- - p_release / p_release_at: slots of an expired lease that were never used, given back to the
--   bucket they were recorded in (by its recording time) before anything is decided. A bucket that
--   has already left the window has nothing to give back.
-- Reported besides: `leased` (the lease's slots) and `recorded_at` (its recording time, to release by).
CREATE FUNCTION rate_limit_admit(
  p_key bigint, p_wanted integer,
  p_burst_window float8, p_burst_limit integer,
  p_sustained_window float8, p_sustained_limit integer,
  p_extra integer, p_hold float8, p_release integer, p_release_at float8,
  OUT granted integer,
  OUT burst_before integer, OUT burst_reset float8, OUT burst_wait float8,
  OUT sustained_before integer, OUT sustained_reset float8, OUT sustained_wait float8,
  OUT leased integer, OUT recorded_at float8
) LANGUAGE plpgsql AS $$
DECLARE
  now_s float8 := extract(epoch FROM clock_timestamp());
  rec_s float8;
  b_step float8 := greatest(1, ceil(p_burst_window / 1440));
  s_step float8 := greatest(1, ceil(p_sustained_window / 1440));
  bh float8; bcl float8; bcn integer; bt integer; bl float8[]; bn integer[];
  sh float8; scl float8; scn integer; st integer; sl float8[]; sn integer[];
  s_loaded boolean := false;
  b_changed boolean := false; s_changed boolean := false;
  k integer; i integer; cum integer; r integer; room integer; total integer;
BEGIN
  SELECT b_head, b_cur_last, b_cur_n, b_total, b_last, b_n, s_head, s_cur_last, s_cur_n, s_total
    INTO bh, bcl, bcn, bt, bl, bn, sh, scl, scn, st
    FROM rate_limits WHERE key_id = p_key FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_limits (key_id) VALUES (p_key) ON CONFLICT (key_id) DO NOTHING;
    SELECT b_head, b_cur_last, b_cur_n, b_total, b_last, b_n, s_head, s_cur_last, s_cur_n, s_total
      INTO bh, bcl, bcn, bt, bl, bn, sh, scl, scn, st
      FROM rate_limits WHERE key_id = p_key FOR NO KEY UPDATE;
  END IF;
  -- Recorded never before the newest admission recorded (a lease's may lie ahead), so buckets stay in order.
  rec_s := greatest(now_s, coalesce(bcl, now_s), coalesce(scl, now_s));

  -- Drop what has left each window (by the real time).
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

  -- Give back an expired lease's unused slots: the bucket recorded at p_release_at (the current one, or
  -- an older one found from the newest end).
  IF p_release > 0 AND p_release_at IS NOT NULL THEN
    IF bcn > 0 AND floor(bcl / b_step) = floor(p_release_at / b_step) THEN
      r := least(p_release, bcn);
      bcn := bcn - r;
      bt := bt - r;
    ELSE
      FOR i IN REVERSE coalesce(array_length(bl, 1), 0) .. 1 LOOP
        IF floor(bl[i] / b_step) = floor(p_release_at / b_step) THEN
          r := least(p_release, bn[i]);
          bn[i] := bn[i] - r;
          bt := bt - r;
          b_changed := true;
          EXIT;
        END IF;
        EXIT WHEN bl[i] < p_release_at;
      END LOOP;
    END IF;
    IF scn > 0 AND floor(scl / s_step) = floor(p_release_at / s_step) THEN
      r := least(p_release, scn);
      scn := scn - r;
      st := st - r;
    ELSE
      IF NOT s_loaded THEN
        SELECT s_last, s_n INTO sl, sn FROM rate_limits WHERE key_id = p_key;
        s_loaded := true;
      END IF;
      FOR i IN REVERSE coalesce(array_length(sl, 1), 0) .. 1 LOOP
        IF floor(sl[i] / s_step) = floor(p_release_at / s_step) THEN
          r := least(p_release, sn[i]);
          sn[i] := sn[i] - r;
          st := st - r;
          s_changed := true;
          EXIT;
        END IF;
        EXIT WHEN sl[i] < p_release_at;
      END LOOP;
    END IF;
  END IF;

  burst_before := bt;
  sustained_before := st;
  room := least(p_burst_limit - bt, p_sustained_limit - st);
  granted := greatest(0, least(p_wanted, room));
  leased := CASE WHEN granted = p_wanted AND p_extra > 0 THEN greatest(0, least(p_extra, (room - granted) / 2)) ELSE 0 END;
  total := granted + leased;
  IF leased > 0 THEN
    -- Not `rec_s + p_hold`: leases taken one after another must not push the key's time ever further ahead.
    rec_s := greatest(rec_s, now_s + p_hold);
  END IF;
  recorded_at := rec_s;

  IF total > 0 THEN
    IF bcn > 0 AND floor(bcl / b_step) = floor(rec_s / b_step) THEN
      bcn := bcn + total;
    ELSE
      IF bcn > 0 THEN
        bl := bl || bcl;
        bn := bn || bcn;
        bh := coalesce(bh, bcl);
        b_changed := true;
      END IF;
      bcn := total;
    END IF;
    bcl := rec_s;
    bt := bt + total;
    IF scn > 0 AND floor(scl / s_step) = floor(rec_s / s_step) THEN
      scn := scn + total;
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
      scn := total;
    END IF;
    scl := rec_s;
    st := st + total;
  END IF;

  -- One UPDATE. A list that did not change is set to itself: its stored (TOAST) value is kept as it is.
  IF total > 0 OR b_changed OR s_changed OR p_release > 0 THEN
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

-- The 0006 signature, for instances of the previous release still running during a rolling upgrade:
-- the same decision without a lease.
CREATE OR REPLACE FUNCTION rate_limit_admit(
  p_key bigint, p_wanted integer,
  p_burst_window float8, p_burst_limit integer,
  p_sustained_window float8, p_sustained_limit integer,
  OUT granted integer,
  OUT burst_before integer, OUT burst_reset float8, OUT burst_wait float8,
  OUT sustained_before integer, OUT sustained_reset float8, OUT sustained_wait float8
) LANGUAGE sql AS $$
  SELECT a.granted, a.burst_before, a.burst_reset, a.burst_wait, a.sustained_before, a.sustained_reset, a.sustained_wait
  FROM rate_limit_admit(p_key, p_wanted, p_burst_window, p_burst_limit, p_sustained_window, p_sustained_limit,
                        0, 0, 0, NULL) a
$$;

-- The touched_at index made every admission's UPDATE a non-HOT one (a new entry in both indexes);
-- the ten-minute prune scans this small table instead. With room left on each page, most updates
-- stay on their page (HOT).
DROP INDEX rate_limits_touched;
ALTER TABLE rate_limits SET (fillfactor = 50);
