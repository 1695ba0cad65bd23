/**
 * Bench sections: each registers a name and a function returning rows; bench/run.ts runs them in order and prints
 * one table. Add a section by creating bench/sections/<name>.ts that calls registerBench and importing it in run.ts.
 */
export interface BenchRow {
  section: string;
  measure: string;
  ops: number;
  ms: number;
  opsPerSec: number;
  note?: string;
}

export type BenchFn = () => Promise<BenchRow[]>;

const sections: { name: string; fn: BenchFn }[] = [];

export function registerBench(name: string, fn: BenchFn): void {
  sections.push({ name, fn });
}

export function registeredBenches(): readonly { name: string; fn: BenchFn }[] {
  return sections;
}

/** Runs `op(i)` sequentially for i = 0.. until `count` ops or `budgetMs` elapsed; one row. */
export async function timeOps(
  section: string,
  measure: string,
  count: number,
  budgetMs: number,
  op: (i: number) => Promise<unknown>,
  note?: string,
): Promise<BenchRow> {
  const start = performance.now();
  let done = 0;
  while (done < count && performance.now() - start < budgetMs) {
    await op(done);
    done++;
  }
  const ms = performance.now() - start;
  return { section, measure, ops: done, ms: Math.round(ms), opsPerSec: Math.round((done * 1000) / ms), note };
}
