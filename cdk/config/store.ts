/** Configuration area: the store's settings handed to the functions (docs/settings.md) and the record size. */
import { maxRecordSizeBytes as recordSizeFor } from '../../lib/domain/record-size';
import { bool, ConfigurationError, int, type ContextSpec } from './errors';

export interface StoreConfig {
  utxoBatchSize: number;
  blockHeightRetention: number;
  /** default: blockHeightRetention */
  cleanupSafetyWindow?: number;
  maxTxSizeInStore: number;
  externalizeAll: boolean;
  coinbaseMaturity: number;
  cleanupBatchSize: number;
  /** key prefix of the blobs in the bucket */
  blobPrefix: string;
}

export function storeDefaults(): StoreConfig {
  return {
    utxoBatchSize: 20000,
    blockHeightRetention: 288,
    maxTxSizeInStore: 1048576,
    externalizeAll: false,
    coinbaseMaturity: 100,
    cleanupBatchSize: 1000,
    blobPrefix: 'blobs',
  };
}

export const STORE_CONTEXT: ContextSpec = {
  keys: {
    utxoBatchSize: 'store.utxoBatchSize',
    blockHeightRetention: 'store.blockHeightRetention',
    cleanupSafetyWindow: 'store.cleanupSafetyWindow',
    maxTxSizeInStore: 'store.maxTxSizeInStore',
    externalizeAll: 'store.externalizeAll',
    coinbaseMaturity: 'store.coinbaseMaturity',
    cleanupBatchSize: 'store.cleanupBatchSize',
    blobPrefix: 'store.blobPrefix',
  },
  optional: ['cleanupSafetyWindow'],
  intPaths: ['store.cleanupSafetyWindow'],
};

export function validateStore(s: StoreConfig): void {
  int('utxoBatchSize', s.utxoBatchSize, 1, 100000);
  int('blockHeightRetention', s.blockHeightRetention, 0, 0x7fffffff);
  if (s.cleanupSafetyWindow !== undefined) int('cleanupSafetyWindow', s.cleanupSafetyWindow, 0, 0x7fffffff);
  int('maxTxSizeInStore', s.maxTxSizeInStore, 0, 4 * 1024 * 1024);
  int('coinbaseMaturity', s.coinbaseMaturity, 0, 0x7fffffff);
  int('cleanupBatchSize', s.cleanupBatchSize, 1, 100000);
  maxRecordSizeBytes(s); // B and the in-record tx size together: refused here, not half-way through synthesis
  bool('externalizeAll', s.externalizeAll);
  if (!/^[A-Za-z0-9_-]+$/.test(s.blobPrefix)) throw new ConfigurationError('blobPrefix', 'expected [A-Za-z0-9_-]+');
}

/**
 * Aerospike `max-record-size` for the namespace (lib/domain/record-size.ts, which the embedded engine uses too);
 * Aerospike 7 allows at most 8 MiB.
 */
export function maxRecordSizeBytes(store: Pick<StoreConfig, 'utxoBatchSize' | 'maxTxSizeInStore'>): number {
  const rounded = recordSizeFor(store.utxoBatchSize, store.maxTxSizeInStore);
  if (rounded > 8 * 1024 * 1024)
    throw new ConfigurationError(
      'utxoBatchSize',
      `records of up to ${rounded} bytes exceed Aerospike's 8 MiB max-record-size; lower utxoBatchSize or maxTxSizeInStore`,
    );
  return rounded;
}
