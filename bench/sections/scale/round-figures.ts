/** The block's per-round figures printed beside its best-of-3 rows (block.ts): pure, so they are tested alone. */

/** A figure rounded to a whole number, and to two decimals (the bench's tables; common.ts re-exports them). */
export const r0 = (n: number) => Math.round(n);
export const r2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Each round's replay against the same round's block ("x0.74 / x0.77 / x0.8"): a phase's two sides ran seconds apart
 * in a round, while the best of each side may come from rounds minutes apart. Rounds one side lacks are left out.
 */
export function roundByRound(blockMs: number[], replayMs: number[]): string {
  const rounds = Math.min(blockMs.length, replayMs.length);
  return Array.from({ length: rounds }, (_, i) => `x${r2(replayMs[i] / blockMs[i])}`).join(' / ');
}

/**
 * A process's CPU over a phase's wall time, every thread (the collector's helpers and the native client's too), as
 * "89 %": a phase near 100 % or above is bound by the process's main thread, not by the engine.
 */
export function busyShare(cpuUs: number, wallMs: number): string {
  return `${Math.round(cpuUs / wallMs / 10)} %`;
}

/** The machine's CPU time so far, all cores, from the first line of /proc/stat (clock ticks): busy and in all. */
export interface MachineCpu {
  busy: number;
  total: number;
}

/**
 * Parses /proc/stat's `cpu` line (user nice system idle iowait irq softirq steal ...): idle and iowait are not busy;
 * steal (the hypervisor's time for other guests) is left out of both, the cores were not this machine's then.
 */
export function parseProcStat(text: string): MachineCpu | undefined {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  const [user, nice, system, idle, iowait, irq = 0, softirq = 0] = line.trim().split(/\s+/).slice(1, 8).map(Number);
  const ticks = [user, nice, system, idle, iowait, irq, softirq];
  if (ticks.some((t) => t === undefined || !Number.isFinite(t))) return undefined;
  const busy = user + nice + system + irq + softirq;
  return { busy, total: busy + idle + iowait };
}

/**
 * How busy the whole machine was between two readings, as "93 %" of all its cores: the server or replay, the client
 * and every `asd` together. A phase near 100 % is bound by the machine's cores: no process model would run it faster.
 */
export function machineShare(before: MachineCpu | undefined, after: MachineCpu | undefined): string {
  if (!before || !after || after.total <= before.total) return 'n/a';
  return `${Math.round(((after.busy - before.busy) / (after.total - before.total)) * 100)} %`;
}
