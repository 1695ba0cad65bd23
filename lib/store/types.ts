/**
 * Public types of the UTXO store (DESIGN section 6). Txids and hashes are display hex at this boundary;
 * the HTTP layer serializes these shapes as they are.
 */
import type { ItemOutcome } from '../domain/errors';

export interface StoreSettings {
  /** B: outputs per record; fixed for the life of a store */
  utxoBatchSize: number;
  /** R: blocks a fully spent tx is kept before deletion; 0 disables DAH */
  blockHeightRetention: number;
  /** extended size above which a tx goes to the blob store */
  maxTxSizeInStore: number;
  externalizeAll: boolean;
  coinbaseMaturity: number;
  /** records per engine batch of a batched operation (ENGINE_BATCH_SIZE; default 100) */
  engineBatchSize?: number;
}

export interface MinedBlock {
  blockId: number;
  blockHeight: number;
  subtreeIdx: number;
}

export interface CreateOptions {
  /**
   * height the tx is created at (default: chain tip); coinbase spendingHeight = this + coinbaseMaturity, or the lowest
   * minedBlocks height + coinbaseMaturity when minedBlocks is given
   */
  blockHeight?: number;
  minedBlocks?: MinedBlock[];
  isCoinbase?: boolean;
  locked?: boolean;
  conflicting?: boolean;
}

export interface CreateResult {
  txid: string;
  fee: number;
  sizeInBytes: number;
  extendedSize: number;
  external: boolean;
  /** number of records written (1 + pagination records) */
  records: number;
}

/** One output to spend: the parent txid/vout and its UTXO hash, and the spender txid/vin. */
export interface SpendItem {
  txid: string;
  vout: number;
  utxoHash: string;
  spendingTxid: string;
  vin: number;
}

export interface SpendOptions {
  ignoreConflicting?: boolean;
  ignoreLocked?: boolean;
  /** overrides the chain tip H (the spend is evaluated at blockHeight + 1) */
  blockHeight?: number;
}

/** Spend input: an EF spending tx (hex or parsed bytes), or explicit spends. */
export type SpendRequest = { tx: string | Buffer } | { spends: SpendItem[] };

export interface SpendResult {
  spends: ItemOutcome[];
}

export interface OutpointRef {
  txid: string;
  vout: number;
  utxoHash: string;
}

export interface SetMinedRequest extends MinedBlock {
  txids: string[];
  onLongestChain?: boolean;
  unsetMined?: boolean;
}

export interface SetMinedResult {
  /** txid -> block ids after the change */
  blockIds: Record<string, number[]>;
}

export interface ReassignRequest extends OutpointRef {
  newUtxoHash: string;
  /** default: the chain tip */
  blockHeight?: number;
}

export type UtxoStatus = 'OK' | 'SPENT' | 'FROZEN' | 'IMMATURE' | 'CONFLICTING' | 'LOCKED' | 'CREATING' | 'NOT_FOUND';

export interface SpendStatus {
  status: UtxoStatus;
  spendingTxid?: string;
  vin?: number;
  /** height from which the output is spendable (coinbase maturity or a reassignment) */
  spendableAt?: number;
}

export interface UtxoView {
  utxoHash: string;
  status: 'UNSPENT' | 'SPENT' | 'FROZEN';
  spendingTxid?: string;
  vin?: number;
}

/** get(): bins by name with JSON-friendly values, plus `tx` (hex) and `utxos` when asked for. */
export interface TxView {
  txid: string;
  tx?: string;
  utxos?: (UtxoView | null)[];
  [field: string]: unknown;
}

export const DEFAULT_GET_FIELDS = [
  'fee',
  'sizeInBytes',
  'blockIDs',
  'blockHeights',
  'subtreeIdxs',
  'isCoinbase',
  'conflicting',
  'locked',
  'unminedSince',
] as const;

export interface UnminedQuery {
  /** txids with unminedSince <= cutoff */
  cutoff: number;
  limit?: number;
  cursor?: string;
}

export interface UnminedPage {
  txids: string[];
  cursor?: string;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  engine: string;
  blobStore: string;
  queue: string;
}

export interface UtxoStore {
  create(tx: string | Buffer, options?: CreateOptions): Promise<CreateResult>;
  spend(request: SpendRequest, options?: SpendOptions): Promise<SpendResult>;
  unspend(spends: SpendItem[], options?: { blockHeight?: number }): Promise<void>;
  setMined(request: SetMinedRequest): Promise<SetMinedResult>;
  setLocked(txids: string[], locked: boolean): Promise<void>;
  setConflicting(txids: string[], conflicting: boolean): Promise<void>;
  freeze(utxos: OutpointRef[]): Promise<void>;
  unfreeze(utxos: OutpointRef[]): Promise<void>;
  reassign(request: ReassignRequest): Promise<void>;
  preserve(txids: string[], untilHeight: number): Promise<void>;
  get(txid: string, fields?: string[]): Promise<TxView>;
  getSpend(ref: { txid: string; vout: number; utxoHash?: string }): Promise<SpendStatus>;
  delete(txid: string): Promise<void>;
  queryUnmined(query: UnminedQuery): Promise<UnminedPage>;
  getChainTip(): Promise<number>;
  setChainTip(height: number): Promise<number>;
  health(): Promise<HealthReport>;
}
