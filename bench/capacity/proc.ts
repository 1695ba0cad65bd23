/**
 * What a local process and a network interface have used so far, from /proc and /sys (Linux): the slope check's and
 * the block bench's `asd` CPU (BENCH_ASD_PIDS) and each node's bytes on the wire. Parsing is pure (tested); reading
 * answers undefined where the file is not there (another OS, a process gone).
 */
import { readFileSync } from 'fs';

/** Clock ticks per second of /proc/<pid>/stat's times: USER_HZ, 100 on every Linux architecture the bench runs on. */
export const CLOCK_TICKS_PER_SECOND = 100;

/**
 * A process's CPU (user + system, every thread) from the text of /proc/<pid>/stat, in microseconds. The command name
 * (field 2) is in parentheses and may hold spaces, so the fields are counted from the last ')'; utime and stime are
 * fields 14 and 15.
 */
export function parseProcessCpuUs(stat: string): number | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state): utime is field 14 -> index 11, stime index 12
  const [utime, stime] = [Number(fields[11]), Number(fields[12])];
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** The CPU a process has used so far (microseconds), or undefined when it cannot be read. */
export function processCpuUs(pid: number): number | undefined {
  try {
    return parseProcessCpuUs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The CPU of every process in `pids` together (microseconds); undefined when any one cannot be read. */
export function processesCpuUs(pids: readonly number[]): number | undefined {
  let sum = 0;
  for (const pid of pids) {
    const us = processCpuUs(pid);
    if (us === undefined) return undefined;
    sum += us;
  }
  return sum;
}

/** BENCH_ASD_PIDS: a comma list of the local `asd` process ids a bench reads the CPU of (empty: none). */
export function asdPids(env: NodeJS.ProcessEnv = process.env): number[] {
  const raw = (env.BENCH_ASD_PIDS ?? '').trim();
  if (raw === '') return [];
  const pids = raw.split(',').map((p) => Number(p.trim()));
  const bad = pids.find((p) => !Number.isInteger(p) || p <= 0);
  if (bad !== undefined) throw new RangeError(`BENCH_ASD_PIDS: expected a comma list of process ids, got "${raw}"`);
  return pids;
}

/** Bytes received plus sent by a network interface so far (/sys/class/net/<iface>/statistics), or undefined. */
export function interfaceBytes(iface: string): number | undefined {
  try {
    const read = (what: string) =>
      Number(readFileSync(`/sys/class/net/${iface}/statistics/${what}_bytes`, 'utf8').trim());
    const total = read('rx') + read('tx');
    return Number.isFinite(total) ? total : undefined;
  } catch {
    return undefined;
  }
}
