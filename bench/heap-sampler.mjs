/*
 * Loaded into a server under load (`node --import ./bench/heap-sampler.mjs …`) by
 * `HEAP=1 npx tsx bench/profile-web.ts`: V8's sampling heap profiler, through Node's inspector
 * (HeapProfiler.startSampling), switched on by one SIGWINCH and off by the next, which writes
 * <HEAP_PROFILE_DIR>/heap-<pid>.heapprofile (the format Chrome DevTools opens). SIGWINCH because a
 * process without the sampler ignores it, and nothing of the server's listens to it (close-with-grace
 * stops the server on SIGUSR2).
 *
 * HEAP_SAMPLES=allocated (the default) keeps the objects the collector has freed since: what the
 * code allocated, each allocation site's share of the garbage collector's work. HEAP_SAMPLES=survivors
 * drops those a young-generation collection freed: what lived through one, the objects the
 * scavenger copies and promotes (the costly ones), and what is still alive at the end.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env.HEAP_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  let sampling = false;
  process.on('SIGWINCH', () => {
    sampling = !sampling;
    const done = sampling
      ? post('HeapProfiler.enable').then(() =>
          post('HeapProfiler.startSampling', {
            samplingInterval: 4096,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: process.env.HEAP_SAMPLES !== 'survivors',
          }),
        )
      : post('HeapProfiler.stopSampling').then(({ profile }) =>
          writeFileSync(path.join(dir, `heap-${process.pid}.heapprofile`), JSON.stringify(profile)),
        );
    done.catch((err) => process.stderr.write(`heap-sampler: ${err.message}\n`));
  });
}
