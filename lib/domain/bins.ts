/**
 * Bin names of the UTXO records (docs/records.md). These are fixed: other software reads the same records.
 * Aerospike bin names are at most 15 characters.
 */
export const BIN = {
  txID: 'txID',
  version: 'version',
  locktime: 'locktime',
  fee: 'fee',
  sizeInBytes: 'sizeInBytes',
  extendedSize: 'extendedSize',
  isCoinbase: 'isCoinbase',
  spendingHeight: 'spendingHeight',
  conflicting: 'conflicting',
  locked: 'locked',
  creating: 'creating',
  deleting: 'deleting',
  utxos: 'utxos',
  recordUtxos: 'recordUtxos',
  spentUtxos: 'spentUtxos',
  deleteAtHeight: 'deleteAtHeight',
  utxoSpendableIn: 'utxoSpendableIn',
  reassignments: 'reassignments',
  deletedChildren: 'deletedChildren',
  lastSpentState: 'lastSpentState',
  // master only
  totalUtxos: 'totalUtxos',
  totalExtraRecs: 'totalExtraRecs',
  spentExtraRecs: 'spentExtraRecs',
  blockIDs: 'blockIDs',
  blockHeights: 'blockHeights',
  subtreeIdxs: 'subtreeIdxs',
  unminedSince: 'unminedSince',
  createdAt: 'createdAt',
  external: 'external',
  inputs: 'inputs',
  outputs: 'outputs',
  preserveUntil: 'preserveUntil',
  conflictingCs: 'conflictingCs',
  // lock record
  lockCreatedAt: 'created_at',
  lockType: 'lock_type',
  lockProcessId: 'process_id',
  lockHostname: 'hostname',
  lockExpectedRecs: 'expected_recs',
} as const;

export type BinName = (typeof BIN)[keyof typeof BIN];

/** Integer bins with a secondary index, usable in range queries. */
export const INDEXED_BINS = ['deleteAtHeight', 'unminedSince', 'preserveUntil'] as const;
export type IndexedBin = (typeof INDEXED_BINS)[number];

/** Every bin a record may carry; the API's `fields` list is checked against it. */
export const RECORD_BINS: readonly string[] = Object.values(BIN);
