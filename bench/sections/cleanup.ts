/**
 * Cleanup throughput: parents examined and deleted per second, with 1 and with 3 spending children per parent
 * (every child mined and stable, so every parent is deleted). Standalone: `npx tsx bench/sections/cleanup.ts`;
 * `benchCleanup()` is exported for a bench runner.
 *
 * The default target is the embedded engine (':memory:') with the real UDF module and an in-memory blob store.
 * The history is built through the UDFs (test/cleanup/ledger.ts: create, spendMulti, setMined), so the parents'
 * DAHs come from the Lua DAH rule; only the cleanup pass is timed. Pass `open` to measure another engine (e.g.
 * Aerospike) with the module registered under `moduleName`.
 */
import type { BlobStore } from '../../lib/blob/port';
import { CleanupService } from '../../lib/cleanup';
import type { RecordEngine } from '../../lib/engine/port';
import { MemoryBlobs, MODULE_NAME, openUdfEngine } from '../../test/cleanup/fakes';
import { Ledger, newTxid } from '../../test/cleanup/ledger';
import { registerBench } from '../registry';

export interface CleanupBenchRow {
  engine: string;
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
  /** the UDF module, registered on `engine` */
  moduleName: string;
  close?: () => Promise<void>;
}

export interface CleanupBenchOptions {
  parents?: number;
  batchSize?: number;
  open?: () => Promise<CleanupBenchTarget>;
}

const R = 288;
const B = 20000;
/** parents mined at 100 and spent at 110 by children mined at 110: DAH 398; the pass runs at 1000 */
const TIP = 1000;

async function populate(ledger: Ledger, parents: number, children: number): Promise<void> {
  let block = 1;
  for (let p = 0; p < parents; p++) {
    const parent = newTxid();
    await ledger.create(parent, children, [], { height: 100 });
    await ledger.setMined(parent, block++, 100);
    for (let c = 0; c < children; c++) {
      const child = newTxid();
      const input = [{ txid: parent, vout: c }];
      await ledger.create(child, 1, input, { height: 110 });
      await ledger.spend(child, input, 110);
      await ledger.setMined(child, block++, 110);
    }
  }
}

export const embeddedTarget = async (): Promise<CleanupBenchTarget> => {
  const engine = await openUdfEngine();
  return { engine, blobs: new MemoryBlobs(), moduleName: MODULE_NAME, close: () => engine.close() };
};

export async function benchCleanup(options: CleanupBenchOptions = {}): Promise<CleanupBenchRow[]> {
  const parents = options.parents ?? 2000;
  const rows: CleanupBenchRow[] = [];
  for (const children of [1, 3]) {
    const target = await (options.open ?? embeddedTarget)();
    try {
      await populate(new Ledger(target.engine, target.blobs, target.moduleName, B, R), parents, children);
      const service = new CleanupService({
        engine: target.engine,
        blobs: target.blobs,
        moduleName: target.moduleName,
        settings: {
          utxoBatchSize: B,
          blockHeightRetention: R,
          cleanupSafetyWindow: R,
          batchSize: options.batchSize ?? 500,
        },
        getTip: async () => TIP,
      });
      const started = process.hrtime.bigint();
      const report = await service.runPass({ tip: TIP });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const examined = report.deleted + Object.values(report.kept).reduce((a, b) => a + b, 0) + report.errors;
      rows.push({
        engine: target.engine.kind,
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

registerBench('cleanup (embedded :memory:)', async () => {
  const rows = await benchCleanup({ parents: Number(process.env.CLEANUP_BENCH_PARENTS ?? 2000) });
  return rows.map((r) => ({
    section: 'cleanup',
    measure: `cleanup pass, ${r.childrenPerParent} child(ren)/parent (parents examined)`,
    ops: r.examined,
    ms: r.ms,
    opsPerSec: r.examinedPerSec,
    note: `deleted/s ${r.deletedPerSec}`,
  }));
});

if (require.main === module) {
  const parents = Number(process.env.CLEANUP_BENCH_PARENTS ?? 2000);
  void benchCleanup({ parents }).then((rows) => {
    console.log('| engine | children/parent | parents | examined/s | deleted/s | ms |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) {
      console.log(
        `| ${r.engine} | ${r.childrenPerParent} | ${r.parents} | ${r.examinedPerSec} | ${r.deletedPerSec} | ${r.ms} |`,
      );
    }
  });
}
