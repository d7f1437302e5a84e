/*
 * A process that reserves searches in the usage ledger and never answers them, to be killed by the
 * test that started it: node --import tsx test/helpers/ledger-process.ts <database url> <key id>
 * <user id> <requests>. Prints `reserved <n>` once its statement has committed.
 */
import { parseRate } from '../../src/config/rate.js';
import { createPool } from '../../src/db/pool.js';
import { createUsageLedger } from '../../src/limits/ledger.js';

const [url, keyId, userId, requests] = process.argv.slice(2);
const rate = (text: string) => {
  const r = parseRate(text);
  if (typeof r === 'string') throw new Error(r);
  return r;
};
const pool = createPool(url!, { max: 1 });
const ledger = createUsageLedger(pool, {
  limits: { burst: rate('1000/min'), sustained: rate('100000/day') },
  monthlyQuota: 1000,
});
const reserved = await Promise.all(
  Array.from({ length: Number(requests) }, () =>
    ledger.reserve({ key: { keyId: Number(keyId), userId: Number(userId) }, limited: true, metered: true, units: 1 }),
  ),
);
process.stdout.write(`reserved ${reserved.filter((r) => r.ticket !== null).length}\n`);
// Answers nothing, settles nothing: waits to be killed.
setInterval(() => {}, 60_000);
