import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';

/*
 * How many cores `WORKERS=auto` may use. Node counts the CPUs the process may
 * be scheduled on, not a container's CPU quota: under `docker run --cpus=2`
 * on a 32-core host it says 32, and 32 workers would share two cores' worth
 * of time (with 32 times the memory). So the quota counts too, read where a
 * container sees its own cgroup: cgroup v2's cpu.max, or v1's CFS quota and
 * period.
 */

/** CPUs the cgroup's quota allows, rounded up; undefined when there is no quota or it cannot be read. */
export function cgroupCpuLimit(root = '/sys/fs/cgroup'): number | undefined {
  const read = (file: string) => {
    try {
      return readFileSync(path.join(root, file), 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  let quota: number;
  let period: number;
  const v2 = read('cpu.max');
  if (v2 !== undefined) {
    const [q = '', p = ''] = v2.split(/\s+/);
    quota = q === 'max' ? Number.NaN : Number(q);
    period = Number(p);
  } else {
    quota = Number(read('cpu/cpu.cfs_quota_us'));
    period = Number(read('cpu/cpu.cfs_period_us'));
  }
  // v1 says -1 for no quota; v2 says max.
  if (!(quota > 0 && period > 0)) return undefined;
  return Math.max(1, Math.ceil(quota / period));
}

/** The cores this process can use: the schedulable CPUs, capped by a container's CPU quota. */
export function usableCores(cgroupRoot?: string): number {
  return Math.max(1, Math.min(availableParallelism(), cgroupCpuLimit(cgroupRoot) ?? Number.POSITIVE_INFINITY));
}
