/**
 * Reorg operations on the embedded engine (':memory:'): the unmined iteration (snapshot + pages of 1000) beside the
 * raw unminedSince range query over the same txs, setOnLongestChain in batches of 1000 beside a raw batchApply of
 * the same UDF, and processConflicting of one double spend (a loser with a child) at a time.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import type { RecordEngine } from '../../lib/engine/port';
import { createUtxoStore } from '../../lib/store/utxo-store';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import { BENCH_SETTINGS, nullQueue } from '../store-settings';
import { registerBench, type BenchRow } from '../registry';

const N = Number(process.env.BENCH_OPS ?? 3000);

const settings = BENCH_SETTINGS;

function row(section: string, measure: string, ops: number, ms: number, note?: string): BenchRow {
  return { section, measure, ops, ms: Math.round(ms), opsPerSec: Math.round((ops * 1000) / ms), note };
}

registerBench('reorg (embedded :memory:)', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { openEmbeddedEngine } = require('../../lib/engine/embedded');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { FileBlobStore } = require('../../lib/blob');
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-reorg-'));
  const engine: RecordEngine = await openEmbeddedEngine({ path: ':memory:' });
  const section = 'reorg embedded';
  try {
    const store = await createUtxoStore({ engine, blobs: new FileBlobStore({ dir }), signals: nullQueue, settings });
    await store.setChainTip(1000);
    const rows: BenchRow[] = [];

    // N unmined txs, each spending a mined root
    const roots: Fixture[] = [];
    for (let i = 0; i < N; i++) {
      const r = rootTx([100_000]);
      await store.create(r.hex, { minedBlocks: [{ blockId: 1, blockHeight: 900, subtreeIdx: 0 }] });
      roots.push(r);
    }
    const unmined: Fixture[] = [];
    for (const r of roots) {
      const tx = makeTx({ inputs: [{ parent: r, vout: 0 }], outputs: [1000] });
      await store.create(tx.hex);
      unmined.push(tx);
    }

    let start = performance.now();
    let cursor: string | undefined;
    let seen = 0;
    do {
      const raw = await engine.queryRange({ bin: 'unminedSince', min: 0, max: 0xffffffff, limit: 1000, cursor });
      seen += raw.records.length;
      cursor = raw.cursor;
    } while (cursor);
    rows.push(row(section, 'raw queryRange unminedSince (pages of 1000)', seen, performance.now() - start, 'txs'));

    start = performance.now();
    seen = 0;
    let page = await store.iterateUnmined({ limit: 1000 });
    for (;;) {
      seen += page.txs.length;
      if (!page.cursor) break;
      page = await store.iterateUnmined({ limit: 1000, cursor: page.cursor });
    }
    rows.push(row(section, 'iterateUnmined (snapshot + pages of 1000)', seen, performance.now() - start, 'txs'));

    const batches: string[][] = [];
    for (let i = 0; i < roots.length; i += 1000) batches.push(roots.slice(i, i + 1000).map((r) => r.txid));
    start = performance.now();
    for (const b of batches) {
      await engine.batchApply(
        b.map((t) => ({
          key: Buffer.from(t, 'hex').reverse(),
          module: store.moduleName,
          fn: 'setLongestChain',
          args: [false, 1000, 288],
        })),
      );
    }
    rows.push(
      row(section, 'raw batchApply setLongestChain (1000 per batch)', roots.length, performance.now() - start, 'txs'),
    );
    start = performance.now();
    for (const b of batches) await store.setOnLongestChain(b, true);
    rows.push(row(section, 'setOnLongestChain (1000 per call)', roots.length, performance.now() - start, 'txs'));

    // double spends: the unmined tx is the loser (spent, with a spent child), a conflicting rival the winner
    const count = Math.min(N, 300);
    const winners: string[] = [];
    for (let i = 0; i < count; i++) {
      const loser = unmined[i];
      await store.spend({ tx: loser.hex });
      const child = makeTx({ inputs: [{ parent: loser, vout: 0 }], outputs: [100] });
      await store.create(child.hex);
      await store.spend({ tx: child.hex });
      const winner = makeTx({ inputs: [{ parent: roots[i], vout: 0 }], outputs: [900] });
      await store.create(winner.hex, { conflicting: true });
      winners.push(winner.txid);
    }
    start = performance.now();
    for (const w of winners) await store.processConflicting([w]);
    rows.push(row(section, 'processConflicting (1 winner, loser + child)', count, performance.now() - start));
    return rows;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
