import { CleanupService, type CleanupSettings } from '../../lib/cleanup';
import { MemoryBlobs, MemoryEngine } from './fakes';
import { Ledger, newTxid, type Outpoint } from './ledger';

export interface Harness {
  engine: MemoryEngine;
  blobs: MemoryBlobs;
  ledger: Ledger;
  service: CleanupService;
  settings: CleanupSettings;
  counts: Record<string, number>;
  /** a mined parent (no inputs) with `outputs` outputs; returns its txid */
  parent(outputs?: number, options?: { external?: boolean; minedAt?: number; inputs?: Outpoint[] }): Promise<string>;
  /** a child spending the given outputs at `height` (unmined); returns its txid */
  child(spends: Outpoint[], height: number): Promise<string>;
}

export function harness(overrides: Partial<CleanupSettings> = {}): Harness {
  const settings: CleanupSettings = {
    utxoBatchSize: 4,
    blockHeightRetention: 288,
    cleanupSafetyWindow: 288,
    batchSize: 10,
    ...overrides,
  };
  const engine = new MemoryEngine();
  const blobs = new MemoryBlobs();
  const ledger = new Ledger(engine, blobs, settings.utxoBatchSize, settings.blockHeightRetention);
  const counts: Record<string, number> = {};
  const service = new CleanupService({
    engine,
    blobs,
    moduleName: 'utxo',
    settings,
    getTip: async () => 0,
    metrics: { count: (name, value) => (counts[name] = (counts[name] ?? 0) + value) },
  });
  return {
    engine,
    blobs,
    ledger,
    service,
    settings,
    counts,
    async parent(outputs = 1, options = {}) {
      const txid = newTxid();
      await ledger.create(txid, outputs, options.inputs ?? [], { external: options.external, height: 1 });
      await ledger.setMined(txid, 1_000_000 + Number.parseInt(txid.slice(0, 6), 16), options.minedAt ?? 900);
      return txid;
    },
    async child(spends, height) {
      const txid = newTxid();
      await ledger.create(txid, 1, spends, { height });
      await ledger.spend(txid, spends, height);
      return txid;
    },
  };
}
