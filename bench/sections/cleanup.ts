/**
 * Cleanup throughput: parents examined and deleted per second, with 1 and with 3 spending children per parent
 * (every child mined and stable, so every parent is deleted). Standalone: `npx tsx bench/sections/cleanup.ts`;
 * `benchCleanup()` is exported for a bench runner. The default engine is the in-memory double of test/cleanup;
 * pass `open` to measure a real engine (e.g. the embedded engine on ':memory:').
 */
import { createHash } from 'crypto';
import type { BlobStore } from '../../lib/blob/port';
import { CleanupService } from '../../lib/cleanup';
import type { RecordEngine } from '../../lib/engine/port';
import { MemoryBlobs, MemoryEngine } from '../../test/cleanup/fakes';

export interface CleanupBenchRow {
  childrenPerParent: number;
  parents: number;
  examined: number;
  deleted: number;
  ms: number;
  examinedPerSec: number;
  deletedPerSec: number;
}

export interface CleanupBenchTarget {
  engine: RecordEngine;
  blobs: BlobStore;
  moduleName: string;
  close?: () => Promise<void>;
}

export interface CleanupBenchOptions {
  parents?: number;
  batchSize?: number;
  open?: () => Promise<CleanupBenchTarget>;
}

function id(label: string): Buffer {
  return createHash('sha256').update(label).digest();
}

async function populate(engine: RecordEngine, parents: number, children: number, run: string): Promise<void> {
  for (let p = 0; p < parents; p++) {
    const parent = id(`${run}/p${p}`);
    const utxos: Buffer[] = [];
    for (let c = 0; c < children; c++) {
      const child = id(`${run}/p${p}/c${c}`);
      utxos.push(Buffer.concat([id(`${run}/p${p}/u${c}`), child, Buffer.alloc(4)]));
      await engine.create(child, {
        txID: child,
        utxos: [id(`${run}/p${p}/c${c}/u0`)],
        recordUtxos: 1,
        spentUtxos: 0,
        totalUtxos: 1,
        totalExtraRecs: 0,
        spentExtraRecs: 0,
        blockIDs: [2],
        blockHeights: [110],
        subtreeIdxs: [0],
        inputs: [],
      });
    }
    await engine.create(parent, {
      txID: parent,
      utxos,
      recordUtxos: children,
      spentUtxos: children,
      totalUtxos: children,
      totalExtraRecs: 0,
      spentExtraRecs: 0,
      blockIDs: [1],
      blockHeights: [100],
      subtreeIdxs: [0],
      deleteAtHeight: 398,
      inputs: [],
    });
  }
}

const memoryTarget = async (): Promise<CleanupBenchTarget> => ({
  engine: new MemoryEngine(),
  blobs: new MemoryBlobs(),
  moduleName: 'utxo',
});

export async function benchCleanup(options: CleanupBenchOptions = {}): Promise<CleanupBenchRow[]> {
  const parents = options.parents ?? 2000;
  const rows: CleanupBenchRow[] = [];
  for (const children of [1, 3]) {
    const target = await (options.open ?? memoryTarget)();
    try {
      await populate(target.engine, parents, children, `bench-${children}`);
      const service = new CleanupService({
        engine: target.engine,
        blobs: target.blobs,
        moduleName: target.moduleName,
        settings: {
          utxoBatchSize: 20000,
          blockHeightRetention: 288,
          cleanupSafetyWindow: 288,
          batchSize: options.batchSize ?? 500,
        },
        getTip: async () => 1000,
      });
      const started = process.hrtime.bigint();
      const report = await service.runPass({ tip: 1000 });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const examined = report.deleted + Object.values(report.kept).reduce((a, b) => a + b, 0) + report.errors;
      rows.push({
        childrenPerParent: children,
        parents,
        examined,
        deleted: report.deleted,
        ms: Math.round(ms),
        examinedPerSec: Math.round((examined / ms) * 1000),
        deletedPerSec: Math.round((report.deleted / ms) * 1000),
      });
    } finally {
      await target.close?.();
    }
  }
  return rows;
}

if (require.main === module) {
  void benchCleanup().then((rows) => {
    console.log('| children/parent | parents | examined/s | deleted/s | ms |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) {
      console.log(`| ${r.childrenPerParent} | ${r.parents} | ${r.examinedPerSec} | ${r.deletedPerSec} | ${r.ms} |`);
    }
  });
}
