/**
 * The local `asd` processes' CPU over a stretch of work, less what they spend idle (heartbeats every 150 ms, the
 * supervisor, tickers): the slope check's and the block bench's per-phase server-side CPU (BENCH_ASD_PIDS).
 */
import { asdPids, processesCpuUs } from './proc';

/** How long the nodes' idle CPU is measured before the work (ms). */
export const IDLE_MS = 5000;

export interface AsdCpu {
  pids: number[];
  /** the nodes' idle CPU, microseconds per millisecond of wall time */
  idleUsPerMs: number;
  /** the nodes' CPU so far, microseconds */
  read(): number | undefined;
  /** the nodes' CPU since `before` (a read()) over `ms` of wall time, less the idle share; undefined when unknown */
  since(before: number | undefined, ms: number): number | undefined;
}

/** The CPU used over a stretch less the idle share of its wall time (never below 0); pure, tested. */
export function lessIdle(before: number | undefined, after: number | undefined, ms: number, idleUsPerMs: number) {
  if (before === undefined || after === undefined) return undefined;
  return Math.max(0, after - before - idleUsPerMs * ms);
}

/**
 * The nodes of `pids` (default BENCH_ASD_PIDS), their idle rate measured first over IDLE_MS; undefined without
 * pids or when a process cannot be read (the bench then prints no asd figure).
 */
export async function asdCpu(log: (line: string) => void, pids = asdPids()): Promise<AsdCpu | undefined> {
  if (pids.length === 0) return undefined;
  const read = () => processesCpuUs(pids);
  const before = read();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const after = read();
  if (before === undefined || after === undefined) {
    log(`asd CPU: cannot read /proc/<pid>/stat of ${pids.join(',')}: no asd figures`);
    return undefined;
  }
  const idleUsPerMs = (after - before) / IDLE_MS;
  log(`asd CPU: ${pids.length} nodes idle at ${Math.round(idleUsPerMs * 1000)} us per second, taken off each phase`);
  return { pids, idleUsPerMs, read, since: (b, ms) => lessIdle(b, read(), ms, idleUsPerMs) };
}
