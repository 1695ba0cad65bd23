/** The scale bench's settings (BENCH_SCALE_*), the engine it runs on, and what its parts share (bench/sections/scale.ts). */
import { randomBytes } from 'crypto';
import type { RecordEngine } from '../../../lib/engine/port';
import type { StoreSettings, UtxoStore } from '../../../lib/store/types';
import { rootTx } from '../../../test/fixtures/txs';
import { rawSpendCall } from '../../raw-spend';

export const SECTION = 'scale';
export { nullQueue } from '../../store-settings';
export const AEROSPIKE = process.env.AEROSPIKE_HOSTS;
export const STEPS = (process.env.BENCH_SCALE_STEPS ?? (AEROSPIKE ? '10000,100000,1000000' : '10000,100000'))
  .split(',')
  .map(Number);
export const SAMPLE = Number(process.env.BENCH_SCALE_SAMPLE ?? 10000);
export const BLOCK = Number(process.env.BENCH_SCALE_BLOCK ?? 100000);
export const FANOUT = Number(process.env.BENCH_SCALE_FANOUT ?? 10000);
/** requests a client keeps in flight (BENCH_SCALE_IN_FLIGHT, default 8) */
export const IN_FLIGHT = Number(process.env.BENCH_SCALE_IN_FLIGHT ?? 8);
/** the handler part's page size (BENCH_SCALE_PAGE; the route's default is 1000, its maximum 10000) */
export const HANDLER_PAGE = Number(process.env.BENCH_SCALE_PAGE ?? 10000);
/** rounds of a measure; the best round counts (BENCH_SCALE_ROUNDS) */
export const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 4);
/** rounds of the block's replay on the raw engine (BENCH_SCALE_REPLAY_ROUNDS); each phase's best counts */
export const REPLAY_ROUNDS = Number(process.env.BENCH_SCALE_REPLAY_ROUNDS ?? 3);
/** rounds of the block itself, each on a fresh set (BENCH_SCALE_BLOCK_ROUNDS); each phase's best counts */
export const BLOCK_ROUNDS = Number(process.env.BENCH_SCALE_BLOCK_ROUNDS ?? 3);
/**
 * The block client's process priority (BENCH_SCALE_CLIENT_NICE, a niceness 0-19, default 19): the node service that
 * sends a block runs on machines of its own, so on the bench's shared cores its process yields to the server's and
 * Aerospike's (0: it competes with them as an equal)
 */
export const CLIENT_NICE = Number(process.env.BENCH_SCALE_CLIENT_NICE ?? 19);
export const R = 288;
/** utxoBatchSize: 8000 x 68-byte slots fit the test cluster's 1 MiB max-record-size */
export const B = 8000;

export const settings: StoreSettings = {
  utxoBatchSize: B,
  blockHeightRetention: R,
  maxTxSizeInStore: 1048576,
  externalizeAll: false,
  coinbaseMaturity: 100,
};

/** Progress on stderr: a long run shows where it is. */
export function progress(what: string): void {
  process.stderr.write(`${new Date().toISOString()} scale: ${what}\n`);
}

export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export async function inFlight<T>(batches: T[], n: number, work: (b: T) => Promise<void>): Promise<number> {
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < batches.length) await work(batches[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(n, batches.length) }, worker));
  return performance.now() - start;
}

export function must(results: { ok: boolean; error?: unknown }[], what: string): void {
  const failed = results.find((r) => !r.ok) as { error?: { code?: string; message?: string } } | undefined;
  if (failed) throw new Error(`${what}: ${failed.error?.code ?? ''} ${failed.error?.message ?? ''}`);
}

/** A raw tx without inputs and one output with a random script: cheap to make by the million. */
export function fillTx(): string {
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

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

export async function latencies(n: number, op: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
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
export async function peakRss<T>(fn: () => Promise<T>): Promise<{ value: T; rssMb: number }> {
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
export async function rawLimit(
  store: UtxoStore & { moduleName: string },
  engine: RecordEngine,
  n: number,
): Promise<number> {
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

export interface Opened {
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

export async function openEngine(set: string): Promise<Opened> {
  if (!AEROSPIKE) {
    const { openEmbeddedEngine } = await import('../../../lib/engine/embedded');
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
  const { connectAerospike, AerospikeEngine } = require('../../../lib/engine/aerospike');
  const namespace = process.env.AEROSPIKE_NAMESPACE ?? 'test';
  // a shared 2-core machine: generous timeouts, so that a slow moment is measured, not failed
  const client = await connectAerospike({
    hosts: AEROSPIKE,
    namespace,
    timeouts: { commandMs: 20000, batchMs: 60000, queryMs: 120000, connectMs: 5000 },
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
export const RECORD_OP_STATS = ['client', 'batch_sub'].flatMap((kind) => [
  `${kind}_read_success`,
  `${kind}_read_not_found`,
  `${kind}_write_success`,
  `${kind}_delete_success`,
  `${kind}_delete_not_found`,
  `${kind}_udf_complete`,
]);

/** Every node's statistics of the namespace (info `namespace/<ns>`), parsed. */
export async function namespaceStats(
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

export async function fill(store: UtxoStore, from: number, to: number, height: number): Promise<number> {
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

export { r0, r2 } from './round-figures';
