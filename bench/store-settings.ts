/** What the store benches open their store with: the settings (B large enough for any bench tx) and no queue. */
import type { SignalQueue } from '../lib/signals/port';
import type { StoreSettings } from '../lib/store/types';

export const BENCH_SETTINGS: StoreSettings = {
  utxoBatchSize: 20000,
  blockHeightRetention: 288,
  maxTxSizeInStore: 1048576,
  externalizeAll: false,
  coinbaseMaturity: 100,
};

/** Signals go nowhere: the benches measure the store's own work. */
export const nullQueue: SignalQueue = { kind: 'inline', send: async () => undefined, ping: async () => undefined };
