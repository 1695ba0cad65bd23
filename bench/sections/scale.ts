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
 * spendMany batches of 100, 32 in flight: every batch runs a UDF on the same parent records (a hot key).
 */
import { mkdtempSync, rmSync } from 'fs';
import { randomBytes } from 'crypto';
import { tmpdir } from 'os';
import * as path from 'path';
import { CleanupService } from '../../lib/cleanup';
import type { BlobStore } from '../../lib/blob/port';
import { FileBlobStore } from '../../lib/blob';
import type { RecordEngine } from '../../lib/engine/port';
import type { SignalQueue } from '../../lib/signals/port';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { StoreSettings, UtxoStore } from '../../lib/store/types';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import { registerBench, type BenchRow } from '../registry';
import { rawSpendCall } from '../raw-spend';
import { EngineRecorder, type ReplayResult } from '../engine-replay';
import { benchHandlerMemory } from './handler-memory';

const SECTION = 'scale';
const nullQueue: SignalQueue = { kind: 'inline', send: async () => undefined, ping: async () => undefined };
const AEROSPIKE = process.env.AEROSPIKE_HOSTS;
const STEPS = (process.env.BENCH_SCALE_STEPS ?? (AEROSPIKE ? '10000,100000,1000000' : '10000,100000'))
  .split(',')
  .map(Number);
const SAMPLE = Number(process.env.BENCH_SCALE_SAMPLE ?? 10000);
const BLOCK = Number(process.env.BENCH_SCALE_BLOCK ?? 100000);
const FANOUT = Number(process.env.BENCH_SCALE_FANOUT ?? 10000);
const IN_FLIGHT = 8;
/** rounds of a measure; the best round counts (BENCH_SCALE_ROUNDS) */
/** the handler part's page size (BENCH_SCALE_PAGE; the route's default is 1000, its maximum 10000) */
const HANDLER_PAGE = Number(process.env.BENCH_SCALE_PAGE ?? 10000);
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 4);
/** rounds of the block's replay on the raw engine (BENCH_SCALE_REPLAY_ROUNDS); each phase's best counts */
const REPLAY_ROUNDS = Number(process.env.BENCH_SCALE_REPLAY_ROUNDS ?? 2);
const R = 288;
/** utxoBatchSize: 8000 x 68-byte slots fit the test cluster's 1 MiB max-record-size */
const B = 8000;

const settings: StoreSettings = {
  utxoBatchSize: B,
  blockHeightRetention: R,
  maxTxSizeInStore: 1048576,
  externalizeAll: false,
  coinbaseMaturity: 100,
};

/** Progress on stderr: a long run shows where it is. */
function progress(what: string): void {
  process.stderr.write(`${new Date().toISOString()} scale: ${what}\n`);
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function inFlight<T>(batches: T[], n: number, work: (b: T) => Promise<void>): Promise<number> {
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < batches.length) await work(batches[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(n, batches.length) }, worker));
  return performance.now() - start;
}

function must(results: { ok: boolean; error?: unknown }[], what: string): void {
  const failed = results.find((r) => !r.ok) as { error?: { code?: string; message?: string } } | undefined;
  if (failed) throw new Error(`${what}: ${failed.error?.code ?? ''} ${failed.error?.message ?? ''}`);
}

/** A raw tx without inputs and one output with a random script: cheap to make by the million. */
function fillTx(): string {
  const script = Buffer.concat([Buffer.from([0x76, 0xa9, 0x14]), randomBytes(20), Buffer.from([0x88, 0xac])]);
  const tx = Buffer.alloc(4 + 1 + 1 + 8 + 1 + script.length + 4);
  let o = tx.writeUInt32LE(1, 0);
  o = tx.writeUInt8(0, o);
  o = tx.writeUInt8(1, o);
  o = tx.writeBigUInt64LE(1000n, o);
  o = tx.writeUInt8(script.length, o);
  o += script.copy(tx, o);
  tx.writeUInt32LE(randomBytes(4).readUInt32LE(0), o);
  return tx.toString('hex');
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function latencies(n: number, op: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await op(i);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) };
}

/** Peak RSS (MB) while `fn` runs, sampled every 20 ms. */
async function peakRss<T>(fn: () => Promise<T>): Promise<{ value: T; rssMb: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  try {
    const value = await fn();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, rssMb: Math.round(peak / 1048576) };
  } finally {
    clearInterval(timer);
  }
}

/** The raw limit: batchApply of one-item spendMulti calls, 100 keys a batch, 8 batches in flight; items/s. */
async function rawLimit(store: UtxoStore & { moduleName: string }, engine: RecordEngine, n: number): Promise<number> {
  const parents = Array.from({ length: n }, () => rootTx(1));
  await inFlight(chunks(parents, 1000), IN_FLIGHT, async (b) =>
    must(await store.createMany(b.map((p) => ({ tx: p.hex }))), 'raw setup'),
  );
  const spender = rootTx(1).txid;
  const ms = await inFlight(chunks(parents, 100), IN_FLIGHT, async (batch) => {
    const results = await engine.batchApply(batch.map((p, i) => rawSpendCall(store.moduleName, p, spender, i, R)));
    if (results.some((r) => !r.ok || r.result.status !== 'OK')) throw new Error('raw batchApply spendMulti failed');
  });
  return (n * 1000) / ms;
}

interface Opened {
  engine: RecordEngine;
  label: string;
  /** the UTXO_STORE value of the same engine for the local server */
  storeUrl: (set: string) => string;
  /** bytes per stored record copy from the server's statistics, or a note */
  serverMemory: () => Promise<string>;
  /** record operations the server has done so far (RECORD_OP_STATS summed over nodes); undefined when unknown */
  serverOps?: () => Promise<number>;
  close: () => Promise<void>;
}

async function openEngine(set: string): Promise<Opened> {
  if (!AEROSPIKE) {
    const { openEmbeddedEngine } = await import('../../lib/engine/embedded');
    const engine = await openEmbeddedEngine({ path: ':memory:' });
    return {
      engine,
      label: 'embedded :memory:',
      storeUrl: () => 'embedded::memory:',
      serverMemory: async () => 'embedded: no server',
      close: () => engine.close(),
    };
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { connectAerospike, AerospikeEngine } = require('../../lib/engine/aerospike');
  const namespace = process.env.AEROSPIKE_NAMESPACE ?? 'test';
  // a shared 2-core machine: generous timeouts, so that a slow moment is measured, not failed
  const client = await connectAerospike({
    hosts: AEROSPIKE,
    namespace,
    timeouts: { commandMs: 20000, batchMs: 60000, queryMs: 120000 },
  });
  const engine: RecordEngine = new AerospikeEngine({ client, namespace, set });
  return {
    engine,
    label: `aerospike ${AEROSPIKE}/${namespace}`,
    storeUrl: (s) => `aerospike://${AEROSPIKE}/${namespace}?set=${s}`,
    serverMemory: async () => {
      // every node's namespace statistics: objects (master + replica copies) and the memory they hold
      const nodes = await namespaceStats(client, namespace);
      let objects = 0;
      let bytes = 0;
      let index = 0;
      let sindex = 0;
      for (const stats of nodes) {
        objects += Number(stats.objects ?? 0);
        bytes += Number(stats.data_used_bytes ?? 0);
        index += Number(stats.index_used_bytes ?? 0);
        sindex += Number(stats.sindex_used_bytes ?? 0);
      }
      const per = (n: number) => (objects > 0 ? Math.round(n / objects) : 0);
      return `${objects} record copies on ${nodes.length} nodes: data ${per(bytes)} B + primary index ${per(index)} B + sindex ${per(sindex)} B per copy`;
    },
    serverOps: async () =>
      (await namespaceStats(client, namespace)).reduce(
        (sum, stats) => sum + RECORD_OP_STATS.reduce((n, name) => n + Number(stats[name] ?? 0), 0),
        0,
      ),
    close: async () => client.close(),
  };
}

/**
 * The namespace statistics counting record operations a client asked for, on the master copy (a replica write is
 * not counted): single and batch reads, writes, deletes and UDF calls. Query results are not counted.
 */
const RECORD_OP_STATS = ['client', 'batch_sub'].flatMap((kind) => [
  `${kind}_read_success`,
  `${kind}_read_not_found`,
  `${kind}_write_success`,
  `${kind}_delete_success`,
  `${kind}_delete_not_found`,
  `${kind}_udf_complete`,
]);

/** Every node's statistics of the namespace (info `namespace/<ns>`), parsed. */
async function namespaceStats(
  client: { infoAll(command: string): Promise<unknown> },
  namespace: string,
): Promise<Record<string, string>[]> {
  const nodes = (await client.infoAll(`namespace/${namespace}`)) as { info: string }[];
  return nodes.map(
    ({ info: answer }) =>
      Object.fromEntries(
        answer
          .replace(/^[^\t]*\t/, '')
          .trim()
          .split(';')
          .map((kv) => kv.split('=')),
      ) as Record<string, string>,
  );
}

interface StepResult {
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

async function measureStep(
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

async function fill(store: UtxoStore, from: number, to: number, height: number): Promise<number> {
  const n = to - from;
  if (n <= 0) return 0;
  const batches: number[] = [];
  for (let i = 0; i < n; i += 1000) batches.push(Math.min(1000, n - i));
  const mined = { minedBlocks: [{ blockId: 1, blockHeight: height, subtreeIdx: 0 }] };
  let k = 0;
  const ms = await inFlight(batches, IN_FLIGHT, async (count) => {
    const items = Array.from({ length: count }, () => ({
      tx: fillTx(),
      // 1 in 10 unmined
      ...(k++ % 10 === 0 ? {} : { options: mined }),
    }));
    must(await store.createMany(items), 'fill createMany');
  });
  return (n * 1000) / ms;
}

const r0 = (n: number) => Math.round(n);
const r2 = (n: number) => Math.round(n * 100) / 100;

async function benchSteps(opened: Opened, blobs: BlobStore): Promise<BenchRow[]> {
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

async function benchFanout(opened: Opened, blobs: BlobStore): Promise<BenchRow[]> {
  const store = await createUtxoStore({ engine: opened.engine, blobs, signals: nullQueue, settings });
  await store.setChainTip(1000);
  const raw = await rawLimit(store, opened.engine, Math.min(FANOUT, 10000));
  progress('fan-out');
  const parent = rootTx(FANOUT);
  must(await store.createMany([{ tx: parent.hex }]), 'fan-out parent');
  const children = Array.from({ length: FANOUT }, (_, vout) => makeTx({ inputs: [{ parent, vout }] }).hex);
  let failed = 0;
  const codes = new Set<string>();
  let firstError = '';
  const ms = await inFlight(chunks(children, 100), 32, async (b) => {
    for (const r of await store.spendMany(b.map((tx) => ({ tx })))) {
      if (!r.ok) {
        failed++;
        codes.add(r.error.code);
        firstError ||= r.error.message;
      }
    }
  });
  const rate = (FANOUT * 1000) / ms;
  return [
    {
      section: `${SECTION} fan-out`,
      measure: `1 parent, ${FANOUT} outputs; children by spendMany 100 a batch, 32 in flight`,
      ops: FANOUT - failed,
      ms: r0(ms),
      opsPerSec: r0(rate),
      note: `${failed} failed${codes.size ? ` (${[...codes].join(', ')}: ${firstError})` : ''}; x${r2(rate / raw)} vs raw limit ${r0(raw)}/s`,
    },
  ];
}

async function benchBlock(opened: Opened, set: string): Promise<BenchRow[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startServer } = require('../../server/local-server') as typeof import('../../server/local-server');
  const { localClient } = await import('@bsv-utxo-store/client');
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-block-'));
  const server = await startServer({
    env: {
      UTXO_STORE: opened.storeUrl(set),
      BLOB_STORE: `file:${dir}`,
      SIGNAL_QUEUE: 'inline',
      UTXO_BATCH_SIZE: String(B),
      BLOCK_HEIGHT_RETENTION: String(R),
      // the shared 2-core machine: a slow moment is measured, not failed
      AEROSPIKE_COMMAND_TIMEOUT_MS: '20000',
      AEROSPIKE_BATCH_TIMEOUT_MS: '60000',
    },
    port: 0,
    log: () => undefined,
    cleanupIntervalSeconds: 0,
  });
  const client = localClient(server.url, { batching: false });
  const rows: BenchRow[] = [];
  // the server's engine calls, recorded to be issued again straight on the engine (the block's raw limit)
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { currentRuntime } = require('../../lib/runtime') as typeof import('../../lib/runtime');
  const runtime = await currentRuntime();
  if (!runtime) throw new Error('block: the local server has no runtime');
  const recorder = new EngineRecorder(runtime.engine);
  const replayed: Opened[] = [];
  try {
    const rawStore = await createUtxoStore({
      engine: opened.engine,
      blobs: new FileBlobStore({ dir }),
      signals: nullQueue,
      settings,
    });
    const raw = await rawLimit(rawStore, opened.engine, 20000);

    progress('block: parents');
    recorder.phase('parents');
    // the previous block: parents with 4 outputs each, mined
    const parents = Array.from({ length: Math.ceil((BLOCK * 2) / 4) }, () => rootTx(4));
    await client.forceChainTip(1000);
    const prev = { minedBlocks: [{ blockId: 999, blockHeight: 999, subtreeIdx: 0 }] };
    await inFlight(chunks(parents, 1000), IN_FLIGHT, async (b) =>
      must(await client.createMany(b.map((p) => ({ tx: p.hex, ...prev }))), 'parents'),
    );
    // the block: 1-3 inputs from the parents' outputs, 2 outputs; three large txs that paginate and are external
    const outputs = parents.flatMap((p) => [0, 1, 2, 3].map((vout) => ({ parent: p, vout })));
    const txs: Fixture[] = [];
    let at = 0;
    for (let i = 0; i < BLOCK - 3 && at < outputs.length; i++) {
      const k = 1 + (i % 3);
      txs.push(makeTx({ inputs: outputs.slice(at, at + k), outputs: [400, 400] }));
      at += k;
    }
    const large = Array.from({ length: 3 }, () => rootTx(35000));
    // wall time and, on Aerospike, the record operations the server did in each phase
    const phases: [string, number, number | undefined][] = [];
    const phase = async (name: string, fn: () => Promise<void>) => {
      recorder.phase(name);
      const ops = await opened.serverOps?.();
      const t = performance.now();
      await fn();
      const ms = performance.now() - t;
      const after = await opened.serverOps?.();
      phases.push([name, ms, ops === undefined || after === undefined ? undefined : after - ops]);
    };
    progress('block: phases');
    await phase('create', async () => {
      await inFlight([...chunks(txs, 1000), ...large.map((l) => [l])], IN_FLIGHT, async (b) =>
        must(await client.createMany(b.map((t) => ({ tx: t.hex }))), 'block createMany'),
      );
    });
    await phase('spend', async () => {
      await inFlight(chunks(txs, 1000), IN_FLIGHT, async (b) =>
        must(await client.spendMany(b.map((t) => t.hex)), 'block spendMany'),
      );
    });
    const all = [...txs, ...large].map((t) => t.txid);
    await phase('setMined', async () => {
      await client.forceChainTip(1001);
      await client.setMinedMany(all, { blockId: 1001, blockHeight: 1001, subtreeIdx: 0 }, { concurrency: IN_FLIGHT });
    });
    let deleted = 0;
    await phase('cleanup', async () => {
      await client.forceChainTip(1001 + R + 1);
      for (let pass = 0; pass < 100; pass++) {
        const report = await client.cleanup(60);
        deleted += report.deleted;
        if (!report.more) break;
      }
    });
    const total = phases.reduce((s, [, ms]) => s + ms, 0);
    const n = all.length;

    // the block's raw limit: the same record operations issued straight on the engine, on a fresh set each round;
    // each phase's best round counts (as the raw limit's rounds: the least disturbed run of the engine)
    recorder.stop();
    const replay = new Map<string, ReplayResult & { ops?: number }>();
    for (let round = 0; round < REPLAY_ROUNDS; round++) {
      progress(`block: the raw engine replays the recorded record operations (round ${round + 1})`);
      const target = await openEngine(`${set}_raw${round}`);
      replayed.push(target);
      await createUtxoStore({ engine: target.engine, blobs: new FileBlobStore({ dir }), signals: nullQueue, settings });
      const ops = new Map<string, number | undefined>();
      let last: [string | undefined, number | undefined] = [undefined, undefined];
      const results = await recorder.replay(target.engine, async (next) => {
        const count = await target.serverOps?.();
        if (last[0] !== undefined)
          ops.set(last[0], count === undefined || last[1] === undefined ? undefined : count - last[1]);
        last = [next, count];
      });
      for (const [name, result] of results) {
        const best = replay.get(name);
        if (best === undefined || result.ms < best.ms) replay.set(name, { ...result, ops: ops.get(name) });
      }
    }
    const rawTotal = phases.reduce((s, [name]) => s + (replay.get(name)?.ms ?? 0), 0);

    // per record operation: the raw limit is one UDF call on one record per item
    const perOp = (ops: number | undefined, ms: number) =>
      ops === undefined
        ? ''
        : `; ${ops} record ops (${r2(ops / n)} per block tx), ${r0((ops * 1000) / ms)} ops/s = x${r2((ops * 1000) / ms / raw)} raw per op`;
    for (const [name, ms, ops] of phases) {
      rows.push({
        section: `${SECTION} block`,
        measure: `${name} (client, local server)`,
        ops: name === 'cleanup' ? deleted : n,
        ms: r0(ms),
        opsPerSec: r0(((name === 'cleanup' ? deleted : n) * 1000) / ms),
        note:
          (name === 'cleanup' ? `${deleted} parents deleted` : `${r2((n * 1000) / ms / raw)} x raw`) + perOp(ops, ms),
      });
    }
    for (const [name, ms] of phases) {
      const r = replay.get(name);
      if (!r) continue;
      const errors = Object.entries(r.errors).map(([code, k]) => `${k} ${code}`);
      const ops = r.ops;
      rows.push({
        section: `${SECTION} block`,
        measure: `${name}: the same record ops straight on the engine`,
        ops: r.calls,
        ms: r0(r.ms),
        opsPerSec: ops === undefined ? 0 : r0((ops * 1000) / r.ms),
        note:
          `${r.calls} engine calls (${recorder.methods(name)})` +
          (ops === undefined ? '' : `, ${ops} record ops`) +
          `; the block's phase at x${r2(r.ms / ms)} of it` +
          (errors.length ? `; item errors: ${errors.join(', ')}` : ''),
      });
    }
    const allOps = phases.every(([, , ops]) => ops !== undefined)
      ? phases.reduce((s, [, , ops]) => s + (ops ?? 0), 0)
      : undefined;
    rows.push({
      section: `${SECTION} block`,
      measure: `block end to end (${n} txs, ${txs.reduce((s, t) => s + t.tx.inputs.length, 0)} inputs)`,
      ops: n,
      ms: r0(total),
      opsPerSec: r0((n * 1000) / total),
      note:
        `x${r2(rawTotal / total)} vs the raw engine doing its record ops (${r0(rawTotal)} ms); ` +
        `x${r2((n * 1000) / total / raw)} vs raw limit ${r0(raw)}/s (signals inline)${perOp(allOps, total)}`,
    });
  } finally {
    recorder.stop();
    for (const target of replayed) await target.close();
    await client.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * A handler's memory (BENCH_SCALE_PARTS=handler, BENCH_SCALE_SET=<the set of a filled store>): the bundled `get` and
 * `cleanup` functions as Lambda runs them (bench/sections/handler-memory.ts), each in a fresh process at its
 * configured memory size and at 256 MB: every page of the unmined iteration (limits 1000 and BENCH_SCALE_PAGE) and
 * one scheduled cleanup pass. Aerospike only: a function process cannot open the bench's in-memory database.
 */
async function benchHandler(opened: Opened, set: string, blobDir: string): Promise<BenchRow[]> {
  if (!AEROSPIKE) {
    console.log('scale handler: skipped (the functions run in their own processes: needs AEROSPIKE_HOSTS)');
    return [];
  }
  // each preparation on a client of its own: the bench's client sat idle through minutes of synthesis and probes
  const prepare = async (): Promise<string> => {
    const own = await openEngine(set);
    try {
      const blobs = new FileBlobStore({ dir: blobDir });
      return await prepareDeletable(
        await createUtxoStore({ engine: own.engine, blobs, signals: nullQueue, settings }),
        SAMPLE,
      );
    } finally {
      await own.close();
    }
  };
  const runs = await benchHandlerMemory({
    storeUrl: opened.storeUrl(set),
    env: {
      BLOB_STORE: `file:${blobDir}`,
      SIGNAL_QUEUE: 'inline',
      UTXO_BATCH_SIZE: String(B),
      BLOCK_HEIGHT_RETENTION: String(R),
      CLEANUP_SAFETY_WINDOW: String(R),
    },
    limits: [...new Set([1000, HANDLER_PAGE])],
    memorySizes: [256],
    beforeCleanup: prepare,
  });
  return runs.map((r) => ({
    section: `${SECTION} handler`,
    measure: `${r.fn} (${r.memoryMb} MB function, Node 22): ${r.what}`,
    ops: r.invocations,
    ms: r0(r.slowestMs),
    opsPerSec: 0,
    note:
      `peak RSS ${r.maxRssMb} MB; ` +
      (r.fn === 'get'
        ? `${r.txs} txs in ${r.invocations} pages, slowest ${r0(r.slowestMs)} ms, largest body ${r0(r.largestBody / 1024)} KB`
        : `${r.prepared}; ${JSON.stringify(r.report)}`),
  }));
}

/**
 * `n` parents made deletable at the store's tip: created, spent by a child each, both mined, then the tip moved past
 * the retention and the safety window (what one block's worth of cleanup meets).
 */
async function prepareDeletable(store: UtxoStore, n: number): Promise<string> {
  const parents = Array.from({ length: n }, () => rootTx(1));
  const children = parents.map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }));
  await inFlight(chunks(parents, 1000), IN_FLIGHT, async (b) =>
    must(await store.createMany(b.map((p) => ({ tx: p.hex }))), 'createMany'),
  );
  await inFlight(chunks(children, 1000), IN_FLIGHT, async (b) =>
    must(await store.spendMany(b.map((c) => ({ tx: c.hex }))), 'spendMany'),
  );
  await inFlight(chunks(children, 1000), IN_FLIGHT, async (b) =>
    must(await store.createMany(b.map((c) => ({ tx: c.hex }))), 'children createMany'),
  );
  const block = (await store.getChainTip()) + 1;
  await store.setChainTip(block);
  const all = [...parents, ...children].map((f) => f.txid);
  await inFlight(chunks(all, 1000), IN_FLIGHT, async (b) => {
    await store.setMined({ txids: b, blockId: block, blockHeight: block, subtreeIdx: 0 });
  });
  await store.setChainTip(block + R + 1);
  return `${n} parents made deletable`;
}

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
