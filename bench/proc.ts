import { readdirSync, readFileSync } from 'node:fs';

/* CPU and memory of processes on this machine, read from /proc (Linux). */

const CLK_TCK = 100;

/** CPU time (user + system) a process has used so far, ms; 0 once it has ended. */
export function cpuMsOf(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return 0;
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
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(d);
    if (f && Number(f[1]) === postmasterPid) ticks += Number(f[11]) + Number(f[12]);
  }
  return (ticks * 1000) / CLK_TCK;
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
