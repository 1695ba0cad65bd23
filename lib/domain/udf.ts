/**
 * The contract between the store and the Lua UDF module (lua/utxo.lua, docs/udf.md).
 *
 * Every function takes the record first, then the arguments listed here, and returns a map:
 *   { status = "OK" | "ERROR", errorCode?, message?, signal?, blockIDs?, errors?, childCount? }
 * Record-level errors write nothing. No function raises a Lua error: a wrong argument type returns
 * status ERROR with errorCode INVALID_PARAMETER.
 *
 * Every function that changes state takes `currentBlockHeight, blockHeightRetention` as its last two arguments
 * and re-runs the DAH rule afterwards.
 *
 * Arguments (bytes are Lua `bytes` / JS Buffer; offsets are 0-based positions in this record's `utxos` list):
 *   spend(offset, utxoHash32, spendingData36, ignoreConflicting, ignoreLocked, currentBlockHeight, retention)
 *   spendMulti(spends, ignoreConflicting, ignoreLocked, currentBlockHeight, retention)
 *       spends = bytes of 72-byte items (encodeSpendItems: offset uint32 LE || utxoHash || spendingData), the store's
 *       form, or a list of maps { offset, utxoHash, spendingData }; `errors` is keyed by the item's 0-based
 *       position in `spends`: { errorCode, message, spendingData? (the existing spender for SPENT/INVALID_SPEND) };
 *       `unchanged` lists the positions already spent by the same spender (success without a write)
 *   unspend(offset, utxoHash32, expectedSpendingData36, currentBlockHeight, retention)
 *   setMined(blockID, blockHeight, subtreeIdx, currentBlockHeight, retention, onLongestChain, unsetMined)
 *   freeze(offset, utxoHash32, currentBlockHeight, retention)
 *   unfreeze(offset, utxoHash32, currentBlockHeight, retention)
 *   reassign(offset, utxoHash32, newUtxoHash32, blockHeight, spendableAfter, currentBlockHeight, retention)
 *   setConflicting(setValue, currentBlockHeight, retention)
 *   setLocked(setValue, currentBlockHeight, retention)
 *   preserveUntil(untilHeight, currentBlockHeight, retention)        -- sets preserveUntil, removes DAH, PRESERVE
 *   expirePreserve(currentBlockHeight, retention)         -- removes preserveUntil if <= height, re-runs DAH rule
 *   incrementSpentExtraRecs(inc, currentBlockHeight, retention)
 *   setSpentExtraRecs(value, currentBlockHeight, retention)
 *   clearCreating(currentBlockHeight, retention)           -- phase 2 of the multi-record create
 *   addConflictingChild(childTxid32)                        -- appends to conflictingCs once
 *   setDeletedChild(childTxidDisplayHex)                    -- deletedChildren[child] = true
 *   markDeleting(expectedGeneration)                        -- deleting = true if the record's generation is that
 *       (cleanup's phase-1 mark); another generation -> CHANGED
 *   rerunDah(currentBlockHeight, retention)                 -- re-evaluates the DAH rule only (reconciler)
 *   setLongestChain(onLongestChain, currentBlockHeight, retention)  -- master only: sets or clears unminedSince
 *       (cleared only when the tx is in a block; an already set unminedSince is kept), then the DAH rule
 *   replaceSpend(offset, utxoHash32, spendingData36, expectedSpendingData36, currentBlockHeight, retention)
 *       -- atomically moves an output from the expected spender (or from unspent) to spendingData; a retry is OK;
 *       another spender -> SPENT (with spendingData), frozen -> FROZEN
 */
import type { UdfErrorCode } from './errors';
import { SPENDING_DATA_BYTES } from './spending-data';
import { UTXO_HASH_BYTES } from './utxo-hash';

export const UDF_FUNCTIONS = [
  'spend',
  'spendMulti',
  'unspend',
  'setMined',
  'freeze',
  'unfreeze',
  'reassign',
  'setConflicting',
  'setLocked',
  'preserveUntil',
  'expirePreserve',
  'incrementSpentExtraRecs',
  'setSpentExtraRecs',
  'clearCreating',
  'addConflictingChild',
  'setDeletedChild',
  'markDeleting',
  'rerunDah',
  'setLongestChain',
  'replaceSpend',
] as const;
export type UdfFunction = (typeof UDF_FUNCTIONS)[number];

export type UdfSignal = 'ALLSPENT' | 'NOTALLSPENT' | 'DAHSET' | 'DAHUNSET' | 'PRESERVE';

export interface UdfItemError {
  errorCode: UdfErrorCode;
  message: string;
  spendingData?: Buffer;
}

export interface UdfResponse {
  status: 'OK' | 'ERROR';
  errorCode?: UdfErrorCode;
  message?: string;
  signal?: UdfSignal;
  blockIDs?: number[];
  /** spendMulti: item position (decimal string) -> error */
  errors?: Record<string, UdfItemError>;
  /** number of pagination records (totalExtraRecs) when a signal concerns them */
  childCount?: number;
  /** spendMulti: positions of the items already spent by the same spender (not written by this call) */
  unchanged?: number[];
}

/** Spendable-after delay of a reassigned output (docs/udf.md). */
export const REASSIGN_SPENDABLE_AFTER = 1000;

/** One spendMulti item: the output's 0-based offset in its record, its UTXO hash and the spender's spending data. */
export interface SpendMultiItem {
  offset: number;
  utxoHash: Buffer;
  spendingData: Buffer;
}

/** Bytes of one spendMulti item: offset (uint32 LE), utxoHash (32), spendingData (36). */
export const SPEND_ITEM_BYTES = 4 + UTXO_HASH_BYTES + SPENDING_DATA_BYTES;

/**
 * spendMulti's `spends` as one bytes value (docs/udf.md): the items back to back, SPEND_ITEM_BYTES each. One value per
 * record, where a map per input cost the native client (and the server) a conversion per field.
 */
export function encodeSpendItems(items: readonly SpendMultiItem[]): Buffer {
  const out = Buffer.allocUnsafe(items.length * SPEND_ITEM_BYTES);
  items.forEach((item, i) => {
    const at = i * SPEND_ITEM_BYTES;
    if (item.utxoHash.length !== UTXO_HASH_BYTES || item.spendingData.length !== SPENDING_DATA_BYTES) {
      throw new RangeError(
        `spend item ${i}: utxoHash must be ${UTXO_HASH_BYTES} bytes and spendingData ${SPENDING_DATA_BYTES}`,
      );
    }
    out.writeUInt32LE(item.offset, at);
    item.utxoHash.copy(out, at + 4);
    item.spendingData.copy(out, at + 4 + UTXO_HASH_BYTES);
  });
  return out;
}
