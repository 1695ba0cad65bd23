/**
 * Public types of the UTXO store (docs/operations.md). Txids and hashes are display hex at this boundary;
 * the HTTP layer serializes these shapes as they are.
 */
import type { ItemOutcome, UtxoStoreError } from '../domain/errors';
import type { AckRefusalReason } from './ack-guard';

export type { StoreSettings } from '../domain/store-settings';

/** An input of verifySpenders whose spend did not stand (verify-spends.ts). */
export interface LostSpend {
  /** the parent output */
  txid: string;
  vout: number;
  /** the stored tx whose spend of it did not stand */
  spendingTxid: string;
  vin: number;
  /** the spender in the record (undefined: the output is unspent, or its record is missing) */
  recorded?: string;
  state: 'spent-by-other' | 'unspent' | 'missing' | 'frozen';
}

export interface VerifySpendersReport {
  /** stored txs whose inputs were checked (txs not in the store are skipped) */
  checked: number;
  /** inputs whose output the record does not show spent by their tx */
  lost: LostSpend[];
  /** every tx marked conflicting: the txs with a lost input spent by another tx, and all their descendants */
  markedConflicting: string[];
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

/** A spend request the acknowledgement guard refused (UtxoStoreDeps.onSpendRefused). */
export interface SpendRefusal {
  reason: AckRefusalReason;
  /** txs of the request whose spends were applied and are answered in doubt instead of OK */
  txs: number;
  /** what each node answered */
  detail: string;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  engine: string;
  blobStore: string;
  queue: string;
}

/** One item of a batched operation: its value, or the error a single call would have raised. */
export type ItemResult<T> = { ok: true; value: T } | { ok: false; error: UtxoStoreError };

export interface CreateItem {
  tx: string | Buffer;
  options?: CreateOptions;
}

export interface PreviousOutput {
  txid: string;
  vout: number;
  satoshis: number;
  /** hex */
  lockingScript: string;
}

/**
 * Batched operations take many items and answer one ItemResult per item, in order; their record operations go out
 * as chunked engine batches (ENGINE_BATCH_SIZE records each), never one engine call per item. A bad envelope (not a
 * list, empty) throws INVALID_ARGUMENT; a bad item fails that item only.
 */
export interface UtxoStore {
  create(tx: string | Buffer, options?: CreateOptions): Promise<CreateResult>;
  createMany(txs: CreateItem[]): Promise<ItemResult<CreateResult>[]>;
  spend(request: SpendRequest, options?: SpendOptions): Promise<SpendResult>;
  /** each tx all-or-nothing; of two txs spending one output the earlier in the list wins */
  spendMany(requests: SpendRequest[], options?: SpendOptions): Promise<ItemResult<SpendResult>[]>;
  /** flagAsLocked: the parents are locked first and stay locked (not spendable) until setLocked(false) */
  unspend(spends: SpendItem[], options?: UnspendOptions): Promise<void>;
  setMined(request: SetMinedRequest): Promise<SetMinedResult>;
  setLocked(txids: string[], locked: boolean): Promise<void>;
  setConflicting(txids: string[], conflicting: boolean): Promise<void>;
  freeze(utxos: OutpointRef[]): Promise<void>;
  unfreeze(utxos: OutpointRef[]): Promise<void>;
  reassign(request: ReassignRequest): Promise<void>;
  preserve(txids: string[], untilHeight: number): Promise<void>;
  get(txid: string, fields?: string[]): Promise<TxView>;
  getMany(txids: string[], fields?: string[]): Promise<ItemResult<TxView>[]>;
  /** satoshis and locking script of each outpoint (from the record or the blob) */
  previousOutputs(outpoints: { txid: string; vout: number }[]): Promise<ItemResult<PreviousOutput>[]>;
  getSpend(ref: { txid: string; vout: number; utxoHash?: string }): Promise<SpendStatus>;
  getSpendMany(refs: { txid: string; vout: number; utxoHash?: string }[]): Promise<ItemResult<SpendStatus>[]>;
  delete(txid: string): Promise<void>;
  queryUnmined(query: UnminedQuery): Promise<UnminedPage>;
  getChainTip(): Promise<number>;
  /** sets H; bounded by settings.maxTipAdvance unless `force` (lib/store/meta.ts moveChainTip) */
  setChainTip(height: number, options?: { force?: boolean }): Promise<number>;
  health(): Promise<HealthReport>;
  /** the other txs spending one of the outputs this tx spends */
  getCounterConflicting(txid: string): Promise<string[]>;
  /** the children registered in the tx's conflictingCs */
  getConflictingChildren(txid: string): Promise<string[]>;
  /** sets (false) or clears (true) unminedSince of each tx; block lists untouched */
  setOnLongestChain(txids: string[], onLongestChain: boolean): Promise<void>;
  /** double-spend resolution: each tx becomes the spender of its inputs; answers the displaced txs */
  processConflicting(txids: string[]): Promise<ProcessConflictingResult>;
  /** every unmined tx with what block assembly needs, in createdAt order, paged by retry-safe cursors */
  iterateUnmined(query?: UnminedIterationQuery): Promise<UnminedIterationPage>;
  /**
   * after a cluster change: each stored tx's inputs must be spent by it; a tx whose acknowledged spend did not stand
   * (the output is spent by another tx) and its descendants are marked conflicting unless `repair` is false
   * (lib/store/verify-spends.ts)
   */
  verifySpenders(txids: string[], options?: { repair?: boolean }): Promise<VerifySpendersReport>;
}

export interface UnspendOptions {
  blockHeight?: number;
  flagAsLocked?: boolean;
}

export interface ProcessConflictingResult {
  /** the txs the winners displaced */
  losingTxids: string[];
  /** every tx marked conflicting: the losers and all their descendants */
  markedConflicting: string[];
}

export interface UnminedIterationQuery {
  limit?: number;
  cursor?: string;
}

/** One unmined tx as block assembly reloads it. */
export interface UnminedTx {
  txid: string;
  fee: number;
  sizeInBytes: number;
  parentTxids: string[];
  createdAt: number;
  locked: boolean;
  conflicting: boolean;
}

export interface UnminedIterationPage {
  txs: UnminedTx[];
  /** present when more txs follow */
  cursor?: string;
}
