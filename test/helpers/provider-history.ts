import type pg from 'pg';

/** The start of the hour `hours` hours before now. */
const hoursAgo = (hours: number) => new Date(Math.floor(Date.now() / 3_600_000 - hours) * 3_600_000);

/**
 * A provider history the status page has something to show for: provider_02 failed 3 of 20 calls
 * two hours ago and all 4 five days ago, provider_01 answered all 50 an hour ago.
 * Returns the hours in which provider_02 failed.
 */
export async function seedProviderHistory(pool: pg.Pool): Promise<{ failedHours: Date[] }> {
  const twoHoursAgo = hoursAgo(2);
  const anHourAgo = hoursAgo(1);
  const fiveDaysAgo = hoursAgo(24 * 5);
  await pool.query(
    `INSERT INTO provider_history (provider, hour, successes, failures, latency_sum_ms, latency_max_ms)
     VALUES ('provider_02', $1, 17, 3, 2000, 900), ('provider_01', $2, 50, 0, 5000, 300),
            ('provider_02', $3, 0, 4, 400, 100)`,
    [twoHoursAgo, anHourAgo, fiveDaysAgo],
  );
  return { failedHours: [twoHoursAgo, fiveDaysAgo] };
}
