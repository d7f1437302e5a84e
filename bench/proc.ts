import { readdirSync, readFileSync } from 'node:fs';

/* CPU and memory of processes on this machine, read from /proc (Linux). */

const CLK_TCK = 100;

/**
 * CPU time (user + system) a process has used so far, ms; 0 once it has ended. Summed over its
 * threads from /proc/<pid>/task/<tid>/schedstat (nanoseconds), where the kernel gives it; else from
 * /proc/<pid>/stat, in clock ticks (10 ms: coarse for a PostgreSQL backend's few ms in a run).
 */
export function cpuMsOf(pid: number | string): number {
  const precise = runtimeMsOf(pid);
  if (precise !== null) return precise;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** Time on CPU of every thread of a process, ms, from schedstat; null when unreadable. */
function runtimeMsOf(pid: number | string): number | null {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return Number.isFinite(ns) && ns > 0 ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** Fields of /proc/<pid>/stat after the command name (index 0 = state, 1 = ppid, 11/12 = utime/stime, 13/14 = cutime/cstime). */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU time of one PostgreSQL server, ms: its postmaster, the backends it has
 * already reaped (their CPU moves to the postmaster's cutime/cstime when they
 * exit, so the sum never goes backwards) and its live children (backends,
 * background workers). Other PostgreSQL servers on the machine are not counted.
 */
export function postgresServerCpuMs(postmasterPid: number): number {
  const own = statFields(postmasterPid);
  if (!own) return 0;
  // Reaped backends only in clock ticks (the kernel keeps no finer sum for them); live processes precisely.
  let ms = ((Number(own[13]) + Number(own[14])) * 1000) / CLK_TCK + cpuMsOf(postmasterPid);
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(d);
    if (f && Number(f[1]) === postmasterPid) ms += cpuMsOf(d);
  }
  return ms;
}

/** CPU time of every PostgreSQL process now running on the machine (servers and backends), ms. */
export function postgresCpuMs(): number {
  let sum = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres') sum += cpuMsOf(d);
    } catch {
      /* gone */
    }
  }
  return sum;
}

/** Peak resident set size of a process, MB. */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
}

/** Current resident set size of a process, MB (0 once it has ended). */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** The live child processes of a process (a cluster primary's workers). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(d);
    if (f && Number(f[1]) === pid) out.push(Number(d));
  }
  return out;
}

/**
 * The Node flags `bin/sift-server` starts Sift with (its V8 heap sizes), for the tools that start
 * `dist/server.js` themselves (ab.ts, profile-web.ts), so that they measure Sift as it runs.
 */
export function serverNodeFlags(root: string): string[] {
  const script = readFileSync(`${root}/bin/sift-server`, 'utf8');
  const line = script.match(/^exec node (.*) dist\/server\.js/m);
  if (!line) throw new Error('bin/sift-server: no `exec node … dist/server.js` line to take the flags from');
  return line[1]!.split(' ').filter(Boolean);
}

/**
 * The whole machine's CPU time so far, in clock ticks, from the first line of /proc/stat: `total`
 * over every core, and `busy`, all but idle and iowait. Null where unreadable (not Linux).
 */
export function machineTicks(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    // cpu user nice system idle iowait irq softirq steal (guest time is counted in user already)
    const t = line.trim().split(/\s+/).slice(1, 9).map(Number);
    if (t.length < 8 || t.some((x) => !Number.isFinite(x))) return null;
    const total = t.reduce((a, b) => a + b, 0);
    return { busy: total - t[3]! - t[4]!, total };
  } catch {
    return null;
  }
}

/** The share of the whole machine's CPU (every core) that was busy between two readings of machineTicks. */
export function busyShare(
  before: ReturnType<typeof machineTicks>,
  after: ReturnType<typeof machineTicks>,
): number | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  return (after.busy - before.busy) / (after.total - before.total);
}
