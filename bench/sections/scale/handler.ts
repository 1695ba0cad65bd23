/** The scale bench's handler part: the unmined iteration and a cleanup pass through the handlers, their memory (bench/sections/scale.ts). */
import { FileBlobStore } from '../../../lib/blob';
import { createUtxoStore } from '../../../lib/store/utxo-store';
import type { UtxoStore } from '../../../lib/store/types';
import { makeTx, rootTx } from '../../../test/fixtures/txs';
import type { BenchRow } from '../../registry';
import { benchHandlerMemory } from '../handler-memory';
import {
  SECTION,
  nullQueue,
  AEROSPIKE,
  SAMPLE,
  IN_FLIGHT,
  HANDLER_PAGE,
  R,
  B,
  settings,
  chunks,
  inFlight,
  must,
  Opened,
  openEngine,
  r0,
} from './common';

/**
 * A handler's memory (BENCH_SCALE_PARTS=handler, BENCH_SCALE_SET=<the set of a filled store>): the bundled `get` and
 * `cleanup` functions as Lambda runs them (bench/sections/handler-memory.ts), each in a fresh process at its
 * configured memory size and at 256 MB: every page of the unmined iteration (limits 1000 and BENCH_SCALE_PAGE) and
 * one scheduled cleanup pass. Aerospike only: a function process cannot open the bench's in-memory database.
 */
export async function benchHandler(opened: Opened, set: string, blobDir: string): Promise<BenchRow[]> {
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
export async function prepareDeletable(store: UtxoStore, n: number): Promise<string> {
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
