/**
 * `npm run bench`: runs every registered section (bench/sections/*.ts) and prints one table with the machine.
 * BENCH_OPS (default 3000) and BENCH_BUDGET_MS (default 4000 per measure) bound the run; BENCH_ONLY=<text> runs only
 * the sections whose name contains it. BENCH_ONLY=scale runs the scale section (bench/sections/scale.ts), which the
 * default run leaves out; BENCH_ONLY=capacity prints the capacity model's table (bench/sections/capacity.ts). BENCH_NODE=22 runs it on Node.js 22, the functions' runtime (bench/node-select.ts).
 */
import './node-select'; // BENCH_NODE=22: the rest runs in a Node 22 child
import { cpus, platform, release } from 'os';
import { registeredBenches, type BenchRow } from './registry';
import './sections/store';
import './sections/cleanup';
import './sections/http';
import './sections/reorg';
import './sections/client';
import './sections/cold-start';
import './sections/scale';
import './sections/capacity';

async function main(): Promise<void> {
  const cpu = cpus();
  console.log(
    `machine: ${cpu[0]?.model ?? 'unknown cpu'}, ${cpu.length} cores, ${platform()} ${release()}, node ${process.version}`,
  );
  const rows: BenchRow[] = [];
  const only = process.env.BENCH_ONLY; // a substring of the section names to run (default: all)
  for (const { name, fn } of registeredBenches()) {
    if (only && !name.includes(only)) continue;
    const start = Date.now();
    try {
      rows.push(...(await fn()));
    } catch (err) {
      rows.push({
        section: name,
        measure: 'failed',
        ops: 0,
        ms: Date.now() - start,
        opsPerSec: 0,
        note: (err as Error).message,
      });
    }
  }
  console.table(
    rows.map((r) => ({
      section: r.section,
      measure: r.measure,
      'ops/s': r.opsPerSec,
      ops: r.ops,
      ms: r.ms,
      note: r.note ?? '',
    })),
  );
}

main()
  // the Aerospike client shared by the runtime (the scale section's local server) is never closed by design: end here
  .then(() => process.exit(process.exitCode ?? 0))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
