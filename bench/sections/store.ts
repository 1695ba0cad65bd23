/**
 * Store throughput: one-item spendMulti UDF calls straight on the engine, and creates, spends, setMined and gets
 * through the store. On the embedded engine (':memory:') always; on Aerospike too when AEROSPIKE_HOSTS is set,
 * beside a raw batchApply of the same spendMulti (the ratio is the store's overhead). The batched rows (createMany,
 * spendMany at batch sizes 1-1000 beside the raw batched limit) are in store-batched.ts, the acknowledgement guard's
 * cost (BENCH_GUARD_ONLY=1: only those rows) in store-guard.ts.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import type { BlobStore } from '../../lib/blob/port';
import type { RecordEngine } from '../../lib/engine/port';
import { createUtxoStore } from '../../lib/store/utxo-store';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import { BENCH_SETTINGS, nullQueue } from '../store-settings';
import { registerBench, timeOps, type BenchRow } from '../registry';
import { rawSpendCall } from '../raw-spend';
import { benchBatched } from './store-batched';
import { benchGuard } from './store-guard';

const N = Number(process.env.BENCH_OPS ?? 3000);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 4000);

const settings = BENCH_SETTINGS;

export async function benchStore(
  label: string,
  engine: RecordEngine,
  blobs: BlobStore,
  raw: 'apply' | 'batchApply',
): Promise<BenchRow[]> {
  const store = await createUtxoStore({ engine, blobs, signals: nullQueue, settings });
  await store.setChainTip(1000);
  const rows: BenchRow[] = [];
  const section = label;

  // raw spendMulti on the engine, one item per call
  const rawParents: Fixture[] = Array.from({ length: N }, () => rootTx(1));
  for (const p of rawParents) await store.create(p.hex);
  const spender = rootTx(1).txid;
  rows.push(
    await timeOps(section, `raw ${raw} spendMulti (1 item)`, N, BUDGET_MS, async (i) => {
      const p = rawParents[i];
      const { key, ...call } = rawSpendCall(store.moduleName, p, spender, i, 288);
      if (raw === 'apply') {
        const r = await engine.apply(key, call);
        if (r.status !== 'OK') throw new Error(`raw spendMulti: ${String(r.errorCode)}`);
      } else {
        const [r] = await engine.batchApply([{ key, ...call }]);
        if (!r.ok || r.result.status !== 'OK') throw new Error('raw batchApply spendMulti failed');
      }
    }),
  );

  const roots: Fixture[] = Array.from({ length: N }, () => rootTx(2));
  const create = await timeOps(section, 'store create (2 outputs)', N, BUDGET_MS, (i) => store.create(roots[i].hex));
  rows.push(create);
  const created = roots.slice(0, create.ops);
  const spends = created.map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex);
  rows.push(
    await timeOps(section, 'store spend (1 input, EF)', spends.length, BUDGET_MS, (i) =>
      store.spend({ tx: spends[i] }),
    ),
  );
  rows.push(
    await timeOps(section, 'store setMined (1 txid)', created.length, BUDGET_MS, (i) =>
      store.setMined({ txids: [created[i].txid], blockId: 7, blockHeight: 1001, subtreeIdx: 0 }),
    ),
  );
  rows.push(
    await timeOps(section, 'store get (default fields)', created.length, BUDGET_MS, (i) => store.get(created[i].txid)),
  );
  return rows;
}

registerBench('store (embedded :memory:)', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { openEmbeddedEngine } = require('../../lib/engine/embedded');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { FileBlobStore } = require('../../lib/blob');
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-'));
  const engine: RecordEngine = await openEmbeddedEngine({ path: ':memory:' });
  try {
    const blobs = new FileBlobStore({ dir });
    const rows = await benchStore('embedded :memory:', engine, blobs, 'apply');
    const store = await createUtxoStore({ engine, blobs, signals: nullQueue, settings });
    return [...rows, ...(await benchBatched('embedded :memory: batched', store, engine))];
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

registerBench('store (Aerospike)', async () => {
  const hosts = process.env.AEROSPIKE_HOSTS;
  if (!hosts) {
    return [
      { section: 'aerospike', measure: 'skipped', ops: 0, ms: 0, opsPerSec: 0, note: 'AEROSPIKE_HOSTS is not set' },
    ];
  }
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { connectAerospike, AerospikeEngine } = require('../../lib/engine/aerospike');
  const { FileBlobStore } = require('../../lib/blob');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const namespace = process.env.AEROSPIKE_NAMESPACE ?? 'test';
  const client = await connectAerospike({ hosts, namespace });
  const engine: RecordEngine = new AerospikeEngine({ client, namespace, set: `bench_${Date.now() % 1_000_000}` });
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-'));
  try {
    const blobs = new FileBlobStore({ dir });
    if (process.env.BENCH_GUARD_ONLY === '1')
      return await benchGuard(`aerospike ${hosts}`, engine, blobs, { hosts, namespace });
    const rows = await benchStore(`aerospike ${hosts}`, engine, blobs, 'batchApply');
    const store = await createUtxoStore({ engine, blobs, signals: nullQueue, settings });
    rows.push(...(await benchBatched(`aerospike ${hosts} batched`, store, engine)));
    rows.push(...(await benchGuard(`aerospike ${hosts}`, engine, blobs, { hosts, namespace })));
    const raw = rows[0].opsPerSec;
    const spend = rows.find((r) => r.measure.startsWith('store spend'));
    if (spend && raw > 0) spend.note = `store overhead: raw/store = ${(raw / Math.max(spend.opsPerSec, 1)).toFixed(2)}`;
    return rows;
  } finally {
    client.close(); // the last close unreferences the client's event loop, so the bench process can exit
    rmSync(dir, { recursive: true, force: true });
  }
});
