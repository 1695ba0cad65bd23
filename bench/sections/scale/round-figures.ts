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
