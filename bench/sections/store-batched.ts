/**
 * Batched store throughput: createMany and spendMany at batch sizes 1, 10, 100 and 1000 (BENCH_BATCH_IN_FLIGHT
 * batches in flight, default 8), beside the raw limit of the same run: a raw batchApply of spendMulti, 100 keys a
 * batch, 8 batches in flight. Ratios: each size against batch size 1 (goal on the embedded engine: spends >= 3x) and
 * against the raw limit (goal on Aerospike: >= 0.8x). Rates are txs per second (one input, one output each).
 */
import type { RecordEngine } from '../../lib/engine/port';
import type { UtxoStore } from '../../lib/store/types';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import type { BenchRow } from '../registry';
import { rawSpendCall } from '../raw-spend';

const TXS = Number(process.env.BENCH_BATCH_TXS ?? 4000);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 4000);
const IN_FLIGHT = Number(process.env.BENCH_BATCH_IN_FLIGHT ?? 8);
export const BATCH_SIZES = [1, 10, 100, 1000];
const RAW_BATCH = 100;

/** spendMany txs/s at batch size 100 of the last embedded run: the HTTP section's reference. */
export const measured: { embeddedSpendBatch100?: number } = {};

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs `work(batch)` for each batch with `inFlight` at a time until done or the budget is spent; items done. */
async function drive<T>(batches: T[][], inFlight: number, work: (b: T[]) => Promise<void>) {
  let next = 0;
  let done = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  const worker = async () => {
    while (next < batches.length && performance.now() - start < BUDGET_MS) {
      const b = batches[next++];
      await work(b);
      done += b.length;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  // CPU time per item: on a shared machine the wall-clock rate depends on the other load, this much less
  return {
    done,
    ms,
    rate: Math.round((done * 1000) / ms),
    cpuUs: Math.round((used.user + used.system) / Math.max(done, 1)),
  };
}

function row(
  section: string,
  measure: string,
  r: { done: number; ms: number; rate: number; cpuUs: number },
  note?: string,
): BenchRow {
  return {
    section,
    measure,
    ops: r.done,
    ms: Math.round(r.ms),
    opsPerSec: r.rate,
    note: `cpu ${r.cpuUs} us/tx; ${note ?? ''}`,
  };
}

async function createAll(store: UtxoStore, fs: Fixture[]): Promise<void> {
  for (const part of chunks(fs, 1000)) {
    const results = await store.createMany(part.map((f) => ({ tx: f.hex })));
    if (results.some((r) => !r.ok)) throw new Error('bench setup: createMany failed');
  }
}

/** The raw limit: batchApply of one-item spendMulti calls, 100 keys a batch, 8 batches in flight. */
async function rawLimit(store: UtxoStore & { moduleName: string }, engine: RecordEngine) {
  const parents = Array.from({ length: TXS }, () => rootTx(1));
  await createAll(store, parents);
  const spender = rootTx(1).txid;
  return drive(chunks(parents, RAW_BATCH), 8, async (batch) => {
    const results = await engine.batchApply(batch.map((p, i) => rawSpendCall(store.moduleName, p, spender, i, 288)));
    if (results.some((r) => !r.ok || r.result.status !== 'OK')) throw new Error('raw batchApply spendMulti failed');
  });
}

export async function benchBatched(
  section: string,
  store: UtxoStore & { moduleName: string },
  engine: RecordEngine,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const raw = await rawLimit(store, engine);
  rows.push(row(section, `raw batchApply spendMulti (${RAW_BATCH} keys a batch, 8 in flight)`, raw, 'the raw limit'));
  const rates: Record<number, { create: number; spend: number; createCpu: number; spendCpu: number }> = {};
  for (const size of BATCH_SIZES) {
    const parents = Array.from({ length: TXS }, () => rootTx(1));
    const created = await drive(chunks(parents, size), IN_FLIGHT, async (batch) => {
      const results = await store.createMany(batch.map((f) => ({ tx: f.hex })));
      if (results.some((r) => !r.ok)) throw new Error('createMany failed');
    });
    const spenders = parents.slice(0, created.done).map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex);
    const spent = await drive(chunks(spenders, size), IN_FLIGHT, async (batch) => {
      const results = await store.spendMany(batch.map((tx) => ({ tx })));
      if (results.some((r) => !r.ok)) throw new Error('spendMany failed');
    });
    rates[size] = { create: created.rate, spend: spent.rate, createCpu: created.cpuUs, spendCpu: spent.cpuUs };
    if (size === 100 && engine.kind === 'embedded') measured.embeddedSpendBatch100 = spent.rate;
    const vs = (r: number, base: number) => (base > 0 ? (r / base).toFixed(2) : '-');
    rows.push(
      row(
        section,
        `store createMany, batch ${size}`,
        created,
        `x${vs(created.rate, rates[1].create)} vs batch 1 (cpu x${vs(rates[1].createCpu, created.cpuUs)})`,
      ),
      row(
        section,
        `store spendMany, batch ${size}`,
        spent,
        `x${vs(spent.rate, rates[1].spend)} vs batch 1 (cpu x${vs(rates[1].spendCpu, spent.cpuUs)}); x${vs(spent.rate, raw.rate)} vs raw limit (cpu x${vs(raw.cpuUs, spent.cpuUs)})`,
      ),
    );
  }
  return rows;
}
