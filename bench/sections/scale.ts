/**
 * Scale (issue 21): how each operation's cost grows with the store. Runs only when selected (BENCH_ONLY=scale), on
 * Aerospike when AEROSPIKE_HOSTS is set (namespace AEROSPIKE_NAMESPACE, a fresh set per run), else on the embedded
 * engine (':memory:').
 *
 * Steps (BENCH_SCALE_STEPS, default 10000,100000,1000000 on Aerospike and 10000,100000 embedded): the store is filled
 * through createMany (batches of 1000, 8 in flight) up to the step's size, 90 % of the fill created mined and 10 %
 * unmined. At each step, on a sample of BENCH_SCALE_SAMPLE txs (default 10000): batched createMany, spendMany and
 * setMined rates (batches of 100, 8 in flight); single-op p50/p99 (get, create, spend); one cleanup pass over the
 * sample's parents (a block's worth of deletable txs: spent, mined, children mined and buried); the fastest of
 * BENCH_SCALE_ROUNDS full unmined iterations (pages of 10000); getCounterConflicting; the bench process's peak RSS during the iteration and the
 * cleanup pass; the server's memory per record (Aerospike: namespace statistics from every node). The raw limit
 * (batchApply spendMulti, 100 keys a batch, 8 in flight) is measured at every step; growth is printed as ratios to
 * the first step.
 *
 * Block (BENCH_SCALE_BLOCK, default 100000 txs; 0 skips): one block through the typed client against an in-process
 * server (server/local-server.ts, the `npm start` server) on the same engine: a previous block of parents (mined),
 * then the block's txs (1-3 inputs, 2 outputs, and 3 large txs of 35,000 outputs that paginate and go to the blob
 * store) through createMany, spendMany, setMinedMany, then the tip moved past the retention and cleanup passes
 * until done. Signals run inline (SIGNAL_QUEUE=inline): their cost is inside the phases. Wall time per phase and the
 * block's rate beside the raw limit. The block's own raw limit: every record operation the server's engine was asked
 * for is recorded (bench/engine-replay.ts) and issued again straight on the engine, on a fresh set, in
 * BENCH_SCALE_REPLAY_ROUNDS rounds (default 2, each phase's best counts): the engine doing the block's work without
 * HTTP, handlers, parsing or store logic.
 *
 * Fan-out (BENCH_SCALE_FANOUT, default 10000; 0 skips): one parent with that many outputs, its children spent by
 *
 * The parts: scale/steps.ts, scale/fanout.ts, scale/block.ts, scale/handler.ts; what they share in scale/common.ts.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { FileBlobStore } from '../../lib/blob';
import { registerBench, type BenchRow } from '../registry';
import { benchSteps } from './scale/steps';
import { benchFanout } from './scale/fanout';
import { benchBlock } from './scale/block';
import { benchHandler } from './scale/handler';
import { BLOCK, FANOUT, openEngine, SECTION } from './scale/common';

export async function benchScale(): Promise<BenchRow[]> {
  const set = process.env.BENCH_SCALE_SET ?? `scale_${Date.now() % 1_000_000}`;
  const opened = await openEngine(set);
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-scale-'));
  const blobs = new FileBlobStore({ dir });
  const rows: BenchRow[] = [];
  try {
    const run = async (what: string, fn: () => Promise<BenchRow[]>) => {
      const t = Date.now();
      try {
        rows.push(...(await fn()));
      } catch (err) {
        rows.push({
          section: `${SECTION} ${what}`,
          measure: 'failed',
          ops: 0,
          ms: Date.now() - t,
          opsPerSec: 0,
          note: String((err as Error).message ?? err),
        });
      }
    };
    const parts = (process.env.BENCH_SCALE_PARTS ?? 'fanout,steps,block').split(',');
    if (parts.includes('handler')) await run('handler', () => benchHandler(opened, set, dir));
    if (parts.includes('fanout') && FANOUT > 0) await run('fan-out', () => benchFanout(opened, blobs));
    if (parts.includes('steps')) await run('steps', () => benchSteps(opened, blobs));
    if (parts.includes('block') && BLOCK > 0) await run('block', () => benchBlock(opened, `${set}_block`));
    rows.unshift({ section: SECTION, measure: 'engine', ops: 0, ms: 0, opsPerSec: 0, note: opened.label });
    return rows;
  } finally {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// selected only: BENCH_ONLY=scale (the default run stays as fast as before)
if ((process.env.BENCH_ONLY ?? '').includes(SECTION)) registerBench(SECTION, benchScale);
