/** The scale bench's steps: the store filled step by step, each operation measured at each size (bench/sections/scale.ts). */
import { CleanupService } from '../../../lib/cleanup';
import type { BlobStore } from '../../../lib/blob/port';
import type { RecordEngine } from '../../../lib/engine/port';
import { createUtxoStore } from '../../../lib/store/utxo-store';
import type { UtxoStore } from '../../../lib/store/types';
import { makeTx, rootTx } from '../../../test/fixtures/txs';
import type { BenchRow } from '../../registry';
import {
  SECTION,
  nullQueue,
  STEPS,
  SAMPLE,
  IN_FLIGHT,
  ROUNDS,
  R,
  B,
  settings,
  progress,
  chunks,
  inFlight,
  must,
  latencies,
  peakRss,
  rawLimit,
  Opened,
  fill,
  r0,
  r2,
} from './common';

export interface StepResult {
  size: number;
  raw: number;
  create: number;
  spend: number;
  setMined: number;
  cleanupUsPerTx: number;
  deleted: number;
  unminedUsPerTx: number;
  unminedCount: number;
  maxPageMs: number;
  counterMs: number;
  rssMb: number;
  single: Record<string, { p50: number; p99: number }>;
  server: string;
}

export async function measureStep(
  store: UtxoStore & { moduleName: string },
  engine: RecordEngine,
  blobs: BlobStore,
  size: number,
  tip: { height: number },
  server: () => Promise<string>,
): Promise<StepResult> {
  progress(`step ${size}: raw limit`);
  let raw = 0;
  for (let r = 0; r < ROUNDS; r++) raw = Math.max(raw, await rawLimit(store, engine, Math.ceil(SAMPLE / ROUNDS)));
  progress(`step ${size}: create, spend, setMined`);
  // batched create of the sample's parents (2 outputs: one spent by the sample child, one by the counter test)
  const parents = Array.from({ length: SAMPLE }, () => rootTx(1));
  const children = parents.map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }));
  // in ROUNDS rounds, raw / create / spend interleaved: the best round of each is the least disturbed by the other
  // load of a shared machine (the same for every step)
  let createRate = 0;
  let spendRate = 0;
  const per = Math.ceil(SAMPLE / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    const ps = parents.slice(r * per, (r + 1) * per);
    const cs = children.slice(r * per, (r + 1) * per);
    if (ps.length === 0) break;
    const createMs = await inFlight(chunks(ps, 100), IN_FLIGHT, async (b) =>
      must(await store.createMany(b.map((p) => ({ tx: p.hex }))), 'createMany'),
    );
    const spendMs = await inFlight(chunks(cs, 100), IN_FLIGHT, async (b) =>
      must(await store.spendMany(b.map((c) => ({ tx: c.hex }))), 'spendMany'),
    );
    createRate = Math.max(createRate, (ps.length * 1000) / createMs);
    spendRate = Math.max(spendRate, (cs.length * 1000) / spendMs);
  }
  must(
    (await Promise.all(chunks(children, 1000).map((b) => store.createMany(b.map((c) => ({ tx: c.hex })))))).flat(),
    'children createMany',
  );
  const block = ++tip.height;
  await store.setChainTip(block);
  const all = [...parents, ...children].map((f) => f.txid);
  const minedMs = await inFlight(chunks(all, 100), IN_FLIGHT, async (b) => {
    await store.setMined({ txids: b, blockId: block, blockHeight: block, subtreeIdx: 0 });
  });

  progress(`step ${size}: single ops`);
  const singles = Array.from({ length: 200 }, () => rootTx(1));
  const single: StepResult['single'] = {};
  single.create = await latencies(singles.length, (i) => store.create(singles[i].hex));
  single.get = await latencies(200, (i) => store.get(parents[i].txid));
  single.spend = await latencies(singles.length, (i) =>
    store.spend({ tx: makeTx({ inputs: [{ parent: singles[i], vout: 0 }] }).hex }),
  );

  // getCounterConflicting: a double spend of a sample parent's output
  const conflicted = parents[0];
  const double = makeTx({ inputs: [{ parent: conflicted, vout: 0 }] });
  await store.create(double.hex, { conflicting: true });
  const counter = await latencies(100, () => store.getCounterConflicting(double.txid));

  // one cleanup pass over the sample's parents: spent, mined, children mined and buried past the window
  tip.height += R + 1;
  await store.setChainTip(tip.height);
  const cleanup = new CleanupService({
    engine,
    blobs,
    moduleName: store.moduleName,
    settings: { utxoBatchSize: B, blockHeightRetention: R, cleanupSafetyWindow: R, batchSize: 1000 },
    getTip: () => store.getChainTip(),
  });
  progress(`step ${size}: cleanup pass`);
  const pass = await peakRss(() => cleanup.runPass({ tip: tip.height }));
  const report = pass.value;

  progress(`step ${size}: unmined iteration`);
  // in ROUNDS full iterations, the fastest counts (as for raw, create and spend); the slowest page of any round
  let maxPageMs = 0;
  const iteration = await peakRss(async () => {
    let best = { count: 0, ms: Number.POSITIVE_INFINITY };
    for (let r = 0; r < ROUNDS; r++) {
      let count = 0;
      let cursor: string | undefined;
      const start = performance.now();
      do {
        const t = performance.now();
        const page = await store.iterateUnmined({ limit: 10000, cursor });
        maxPageMs = Math.max(maxPageMs, performance.now() - t);
        count += page.txs.length;
        cursor = page.cursor;
      } while (cursor);
      const ms = performance.now() - start;
      if (ms < best.ms) best = { count, ms };
    }
    return best;
  });
  progress(`step ${size}: server statistics`);
  return {
    size,
    raw,
    create: createRate,
    spend: spendRate,
    setMined: (all.length * 1000) / minedMs,
    cleanupUsPerTx: report.deleted > 0 ? (report.durationMs * 1000) / report.deleted : 0,
    deleted: report.deleted,
    unminedUsPerTx: iteration.value.count > 0 ? (iteration.value.ms * 1000) / iteration.value.count : 0,
    unminedCount: iteration.value.count,
    maxPageMs,
    counterMs: counter.p50,
    rssMb: Math.max(pass.rssMb, iteration.rssMb),
    single,
    server: await server(),
  };
}

export async function benchSteps(opened: Opened, blobs: BlobStore): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const store = await createUtxoStore({ engine: opened.engine, blobs, signals: nullQueue, settings });
  // a set filled by an earlier run keeps its tip
  const tip = { height: Math.max(1000, await store.getChainTip().catch(() => 0)) };
  await store.setChainTip(tip.height);
  const results: StepResult[] = [];
  // BENCH_SCALE_FILLED: txs already in BENCH_SCALE_SET from an earlier run (measure again without filling)
  let stored = Number(process.env.BENCH_SCALE_FILLED ?? 0);
  for (const size of STEPS) {
    progress(`fill to ${size}`);
    const fillRate = await fill(store, stored, size, tip.height);
    stored = Math.max(stored, size);
    const r = await measureStep(store, opened.engine, blobs, size, tip, opened.serverMemory);
    stored += 4 * SAMPLE + 600; // raw, parents, children, singles
    results.push(r);
    const first = results[0];
    const x = (a: number, b: number) => (b > 0 ? `x${r2(a / b)}` : '-');
    const add = (measure: string, opsPerSec: number, note: string) =>
      rows.push({ section: `${SECTION} ${size}`, measure, ops: 0, ms: 0, opsPerSec: r0(opsPerSec), note });
    add('fill createMany (1000 a batch, 8 in flight)', fillRate, `store now ~${stored} txs`);
    add(
      'raw batchApply spendMulti (100 a batch, 8 in flight)',
      r.raw,
      `the raw limit; ${x(r.raw, first.raw)} vs first step`,
    );
    add(
      'createMany (100 a batch, 8 in flight)',
      r.create,
      `${x(r.create, first.create)} vs first step; ${x(r.create, r.raw)} vs raw`,
    );
    add(
      'spendMany (100 a batch, 8 in flight)',
      r.spend,
      `${x(r.spend, first.spend)} vs first step; ${x(r.spend, r.raw)} vs raw`,
    );
    add('setMined (100 a batch, 8 in flight)', r.setMined, `${x(r.setMined, first.setMined)} vs first step`);
    add(
      'cleanup pass',
      r.cleanupUsPerTx > 0 ? 1e6 / r.cleanupUsPerTx : 0,
      `${r.deleted} deleted, ${r2(r.cleanupUsPerTx)} us/tx; ${x(r.cleanupUsPerTx, first.cleanupUsPerTx)} time per tx vs first step`,
    );
    add(
      'unmined iteration (pages of 10000)',
      r.unminedUsPerTx > 0 ? 1e6 / r.unminedUsPerTx : 0,
      `${r.unminedCount} txs, ${r2(r.unminedUsPerTx)} us/tx (${x(r.unminedUsPerTx, first.unminedUsPerTx)} vs first step); slowest page ${r0(r.maxPageMs)} ms`,
    );
    add('getCounterConflicting', r.counterMs > 0 ? 1000 / r.counterMs : 0, `p50 ${r2(r.counterMs)} ms`);
    add(
      'single ops p50 / p99 (ms)',
      0,
      Object.entries(r.single)
        .map(([k, v]) => `${k} ${r2(v.p50)} / ${r2(v.p99)}`)
        .join('; '),
    );
    add('memory', 0, `bench process peak RSS ${r.rssMb} MB (cleanup pass, unmined iteration); server: ${r.server}`);
    // the table is printed at the end: a line now shows progress on a long run
    console.log(JSON.stringify({ step: size, ...r }));
  }
  return rows;
}
