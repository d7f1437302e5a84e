-- Searches reserved after admission, by a request whose count is known only once its body is read
-- (a POST of several pages to read: src/limits/ledger.ts, reserve more). One statement on the
-- user's usage row for the admission's month, under the same monthly quota (0: none): true when
-- the searches were added, false (nothing added) when the quota cannot hold them.
CREATE FUNCTION usage_reserve_more(p_user_id bigint, p_month date, p_units bigint, p_quota bigint)
RETURNS boolean LANGUAGE sql AS $$
  WITH added AS (
    INSERT INTO usage_monthly AS u (user_id, month, searches)
    SELECT p_user_id, p_month, p_units WHERE p_quota = 0 OR p_units <= p_quota
    ON CONFLICT (user_id, month) DO UPDATE SET searches = u.searches + EXCLUDED.searches
      WHERE p_quota = 0 OR u.searches + EXCLUDED.searches <= p_quota
    RETURNING 1
  )
  SELECT EXISTS (SELECT 1 FROM added)
$$;
