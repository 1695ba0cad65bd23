/**
 * One client process of the slope check (slope.ts forks 1..k of them): its own Aerospike client and store (what one
 * function instance holds), its own share of a block shaped as the scale bench's (parents of 4 outputs, created
 * mined; txs of 1-3 inputs and 2 outputs), and the block's four phases on command: create, spend, setMined (requests
 * of 1,000 txs, 8 in flight, as the block client sends them) and cleanup (passes over its shard of the partition
 * ranges until none is left). Each `phase` answer carries this process's CPU over the phase.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { FileBlobStore } from '../../lib/blob';
import { CleanupService } from '../../lib/cleanup';
import type { RecordEngine } from '../../lib/engine/port';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { UtxoStore } from '../../lib/store/types';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import { nullQueue } from '../store-settings';
import { B, chunks, inFlight, IN_FLIGHT, must, R, settings } from '../sections/scale/common';

export type SlopePhase = 'create' | 'spend' | 'setMined' | 'cleanup';
export const SLOPE_PHASES: readonly SlopePhase[] = ['create', 'spend', 'setMined', 'cleanup'];
/** the heights the phases use: parents mined at PARENT_HEIGHT, the block mined at BLOCK_HEIGHT */
const PARENT_HEIGHT = 999;
const BLOCK_HEIGHT = 1001;
/** the blob store's directory (block txs write no blob), made by main() and removed when the process ends */
let BLOB_DIR = '';

export type ToWorker =
  | { type: 'setup'; hosts: string; namespace: string; set: string; txs: number; shard: number; shards: number }
  | { type: 'phase'; phase: SlopePhase }
  | { type: 'exit' };
export type FromWorker =
  | { type: 'ready'; txs: number; parents: number }
  | { type: 'done'; cpuUs: number; ms: number; deleted: number }
  | { type: 'error'; message: string };

interface Share {
  store: UtxoStore & { moduleName: string };
  engine: RecordEngine;
  parents: Fixture[];
  txs: Fixture[];
  shard: number;
  shards: number;
}

/** The block's shape (bench/sections/scale/block-client.ts buildBlock), without its 3 large txs. */
function buildShare(size: number): { parents: Fixture[]; txs: Fixture[] } {
  const parents = Array.from({ length: Math.ceil((size * 2) / 4) }, () => rootTx(4));
  const outputs = parents.flatMap((p) => [0, 1, 2, 3].map((vout) => ({ parent: p, vout })));
  const txs: Fixture[] = [];
  let at = 0;
  for (let i = 0; i < size && at < outputs.length; i++) {
    const k = 1 + (i % 3);
    txs.push(makeTx({ inputs: outputs.slice(at, at + k), outputs: [400, 400] }));
    at += k;
  }
  return { parents, txs };
}

async function setup(m: Extract<ToWorker, { type: 'setup' }>): Promise<Share> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { connectAerospike, AerospikeEngine } = require('../../lib/engine/aerospike');
  const client = await connectAerospike({
    hosts: m.hosts,
    namespace: m.namespace,
    timeouts: { commandMs: 20000, batchMs: 60000, queryMs: 120000, connectMs: 5000 },
  });
  const engine: RecordEngine = new AerospikeEngine({ client, namespace: m.namespace, set: m.set });
  const blobs = new FileBlobStore({ dir: BLOB_DIR });
  // the acknowledgement guard's cluster check (one info round a spend batch) answers in doubt on a machine loaded far
  // beyond its cores (it asks every node within 1 s): off here, its CPU is left out of spend
  const store = await createUtxoStore({
    engine,
    blobs,
    signals: nullQueue,
    settings: { ...settings, spendAckGuard: 'off' },
  });
  const { parents, txs } = buildShare(m.txs);
  await store.setChainTip(BLOCK_HEIGHT - 1, { force: true });
  const mined = { minedBlocks: [{ blockId: PARENT_HEIGHT, blockHeight: PARENT_HEIGHT, subtreeIdx: 0 }] };
  await inFlight(chunks(parents, 1000), IN_FLIGHT, async (b) =>
    must(await store.createMany(b.map((p) => ({ tx: p.hex, options: mined }))), 'parents'),
  );
  return { store, engine, parents, txs, shard: m.shard, shards: m.shards };
}

async function runPhase(s: Share, phase: SlopePhase): Promise<number> {
  const { store, txs } = s;
  switch (phase) {
    case 'create':
      await inFlight(chunks(txs, 1000), IN_FLIGHT, async (b) =>
        must(await store.createMany(b.map((t) => ({ tx: t.hex }))), 'createMany'),
      );
      return 0;
    case 'spend':
      await inFlight(chunks(txs, 1000), IN_FLIGHT, async (b) =>
        must(await store.spendMany(b.map((t) => ({ tx: t.hex }))), 'spendMany'),
      );
      return 0;
    case 'setMined':
      await store.setChainTip(BLOCK_HEIGHT, { force: true });
      await inFlight(chunks(txs, 1000), IN_FLIGHT, async (b) => {
        await store.setMined({
          txids: b.map((t) => t.txid),
          blockId: BLOCK_HEIGHT,
          blockHeight: BLOCK_HEIGHT,
          subtreeIdx: 0,
        });
      });
      return 0;
    case 'cleanup': {
      const tip = BLOCK_HEIGHT + R + 1;
      await store.setChainTip(tip, { force: true });
      const cleanup = new CleanupService({
        engine: s.engine,
        blobs: new FileBlobStore({ dir: BLOB_DIR }),
        moduleName: store.moduleName,
        settings: { utxoBatchSize: B, blockHeightRetention: R, cleanupSafetyWindow: R, batchSize: 1000 },
        getTip: () => store.getChainTip(),
      });
      let deleted = 0;
      for (let pass = 0; pass < 100; pass++) {
        const report = await cleanup.runPass({ tip, shard: { index: s.shard, count: s.shards } });
        deleted += report.deleted;
        if (!report.more) break;
      }
      return deleted;
    }
  }
}

function main(): void {
  BLOB_DIR = mkdtempSync(path.join(tmpdir(), 'slope-blobs-'));
  process.on('exit', () => rmSync(BLOB_DIR, { recursive: true, force: true }));
  // slope.ts ends its workers with SIGTERM: exit through 'exit', so the directory goes
  process.on('SIGTERM', () => process.exit(0));
  let share: Share | undefined;
  const send = (m: FromWorker) => process.send?.(m);
  process.on('message', (m: ToWorker) => {
    void (async () => {
      try {
        if (m.type === 'setup') {
          share = await setup(m);
          send({ type: 'ready', txs: share.txs.length, parents: share.parents.length });
        } else if (m.type === 'phase') {
          if (!share) throw new Error('slope worker: phase before setup');
          const cpu = process.cpuUsage();
          const t = performance.now();
          const deleted = await runPhase(share, m.phase);
          const ms = performance.now() - t;
          const used = process.cpuUsage(cpu);
          send({ type: 'done', cpuUs: used.user + used.system, ms, deleted });
        } else process.exit(0);
      } catch (err) {
        send({ type: 'error', message: String((err as Error).message ?? err) });
      }
    })();
  });
}

// a forked worker only (a test importing its types is in a jest worker, which has process.send too)
if (require.main === module && process.send) main();
