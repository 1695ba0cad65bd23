/**
 * A cleanup test bench on the embedded engine (':memory:') with the real UDF module: the ledger builds histories
 * through the UDFs, the service runs passes over the same engine. Call `closeHarnesses()` after each test.
 */
import type { BlobStore } from '../../lib/blob/port';
import { CleanupService, type CleanupSettings } from '../../lib/cleanup';
import { keyOfRecord, txidBytes } from '../../lib/cleanup/record-facts';
import type { RecordEngine } from '../../lib/engine/port';
import { MemoryBlobs, MODULE_NAME, openUdfEngine } from './fakes';
import { Ledger, newTxid, type Outpoint } from './ledger';

export interface Harness {
  engine: RecordEngine;
  blobs: MemoryBlobs;
  ledger: Ledger;
  service: CleanupService;
  settings: CleanupSettings;
  moduleName: string;
  counts: Record<string, number>;
  /** a mined parent with `outputs` outputs (mined at `minedAt`, default 900); returns its txid */
  parent(
    outputs?: number,
    options?: { external?: boolean; coinbase?: boolean; minedAt?: number; inputs?: Outpoint[] },
  ): Promise<string>;
  /** a child spending the given outputs at `height` (unmined); returns its txid */
  child(spends: Outpoint[], height: number): Promise<string>;
  /** block id a parent() was mined in */
  parentBlock(txid: string): number;
  /** a service over other ports (fault injection) with the harness's settings and module */
  serviceOver(engine: RecordEngine, blobs?: BlobStore, now?: () => number): CleanupService;
}

const open: RecordEngine[] = [];

export async function closeHarnesses(): Promise<void> {
  for (const e of open.splice(0, open.length)) await e.close();
}

export async function harness(overrides: Partial<CleanupSettings> = {}): Promise<Harness> {
  const settings: CleanupSettings = {
    utxoBatchSize: 4,
    blockHeightRetention: 288,
    cleanupSafetyWindow: 288,
    batchSize: 10,
    ...overrides,
  };
  const engine = await openUdfEngine();
  open.push(engine);
  const blobs = new MemoryBlobs();
  const ledger = new Ledger(engine, blobs, MODULE_NAME, settings.utxoBatchSize, settings.blockHeightRetention);
  const counts: Record<string, number> = {};
  const service = new CleanupService({
    engine,
    blobs,
    moduleName: MODULE_NAME,
    settings,
    getTip: async () => 0,
    metrics: { count: (name, value) => (counts[name] = (counts[name] ?? 0) + value) },
    signals: ledger.queue,
  });
  const parentBlock = (txid: string): number => 1_000_000 + Number.parseInt(txid.slice(0, 6), 16);
  return {
    engine,
    blobs,
    ledger,
    service,
    settings,
    moduleName: MODULE_NAME,
    counts,
    parentBlock,
    async parent(outputs = 1, options = {}) {
      const txid = newTxid();
      const minedAt = options.minedAt ?? 900;
      await ledger.create(txid, outputs, options.inputs ?? [], {
        external: options.external,
        coinbase: options.coinbase,
        height: 1,
      });
      await ledger.setMined(txid, parentBlock(txid), minedAt);
      return txid;
    },
    async child(spends, height) {
      const txid = newTxid();
      await ledger.create(txid, 1, spends, { height });
      await ledger.spend(txid, spends, height);
      return txid;
    },
    serviceOver(e, b = blobs, now) {
      return new CleanupService({
        engine: e,
        blobs: b,
        moduleName: MODULE_NAME,
        settings,
        getTip: async () => 0,
        now,
        signals: ledger.queue,
      });
    },
  };
}

/** Block id the helpers below mine children in. */
export const CHILD_BLOCK = 7;

/** A child spending `spends` at `height`, mined in CHILD_BLOCK at the same height. */
/** Outputs 0 .. count - 1 of a tx. */
export function outpoints(txid: string, count: number): Outpoint[] {
  return Array.from({ length: count }, (_, vout) => ({ txid, vout }));
}

export async function minedChild(h: Harness, spends: Outpoint[], height: number): Promise<string> {
  const c = await h.child(spends, height);
  await h.ledger.setMined(c, CHILD_BLOCK, height);
  return c;
}

/** A harness with a parent whose output 0 a child spends at 1000 (DAH 1288), the child mined at 1000 too. */
export async function spentParent(outputs?: number): Promise<{ h: Harness; parent: string; child: string }> {
  const h = await harness();
  const parent = await h.parent(outputs);
  const child = await minedChild(h, [{ txid: parent, vout: 0 }], 1000);
  return { h, parent, child };
}

/** Bins of record n (0 = master) of a tx, or undefined when it is gone. */
export async function recordBins(h: Harness, txid: string, n = 0): Promise<Record<string, unknown> | undefined> {
  return (await h.engine.get(keyOfRecord(txidBytes(txid), n)))?.bins;
}
