/**
 * Which candidates of a DAH range query are examined, and what their own records say (docs/cleanup.md, step 2).
 * The DAH bin is only the trigger: the record state is re-checked here rather than trusted. Pure.
 */
import type { Bins, EngineRecord } from '../engine/port';
import { BIN } from '../domain/bins';
import type { KeptReason } from './report';
import { deletedChildrenOf } from './child-safety';
import { txidHex, type SpendingChild } from './record-facts';
import * as slots from '../domain/slots';
import * as spendingData from '../domain/spending-data';

// read once: collectChildren's loop runs per slot of every candidate (a module's exports may be getters)
const UNSPENT_SLOT_BYTES = slots.UNSPENT_SLOT_BYTES;
const SPENT_SLOT_BYTES = slots.SPENT_SLOT_BYTES;
const SPENDING_DATA_BYTES = spendingData.SPENDING_DATA_BYTES;
const FROZEN_SPENDING_DATA = spendingData.FROZEN_SPENDING_DATA;

/**
 * The bins cleanup reads of a candidate master (masterDecision, collectChildren, and phase 2's inputs and blobs), and
 * the queried bin: the DAH query asks for these only, not the tx's other bins (outputs, txID, fee, ...).
 */
export const CANDIDATE_BINS: readonly string[] = [
  BIN.deleteAtHeight,
  BIN.totalExtraRecs,
  BIN.deleting,
  BIN.preserveUntil,
  BIN.creating,
  BIN.conflicting,
  BIN.locked,
  BIN.blockIDs,
  BIN.unminedSince,
  BIN.reassignments,
  BIN.utxos,
  BIN.deletedChildren,
  BIN.isCoinbase,
  BIN.inputs,
  BIN.external,
];

/** The bins cleanup reads of a pagination record: its slots, the children cleanup recorded, its mark. */
export const PAGE_BINS: readonly string[] = [BIN.utxos, BIN.deletedChildren, BIN.deleting];

/** Masters only: pagination records carry `deleteAtHeight` too but have no `totalExtraRecs`. */
export function isMaster(record: EngineRecord): boolean {
  const total = record.bins[BIN.totalExtraRecs];
  return total !== undefined && total !== null && record.key.length === 32;
}

export function extraRecordCount(bins: Bins): number {
  const total = bins[BIN.totalExtraRecs];
  if (typeof total === 'number') return total;
  if (typeof total === 'bigint') return Number(total);
  return 0;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false;
}

/**
 * What to do with a master before its pagination records and children are read:
 * 'finish' (marked `deleting` by a pass that died midway), 'check', or the reason it is kept.
 */
export function masterDecision(bins: Bins): 'finish' | 'check' | KeptReason {
  if (bins[BIN.deleting] === true) return 'finish';
  if (present(bins[BIN.preserveUntil])) return 'preserved';
  if (present(bins[BIN.creating])) return 'creating';
  if (!Number.isInteger(extraRecordCount(bins)) || extraRecordCount(bins) < 0) return 'invalid_record';
  // a conflicting tx is deletable without being spent or mined; its spenders are still checked
  if (bins[BIN.conflicting] === true) return 'check';
  if (present(bins[BIN.locked])) return 'locked';
  const blockIDs = bins[BIN.blockIDs];
  if (!Array.isArray(blockIDs) || blockIDs.length === 0 || present(bins[BIN.unminedSince])) return 'not_mined';
  const reassignments = bins[BIN.reassignments];
  if (Array.isArray(reassignments) && reassignments.length > 0) return 'not_all_spent';
  return 'check';
}

/**
 * A spending child, `vouched` when every record holding an output it spent lists it in `deletedChildren` (it was
 * itself cleaned up after becoming stable; cleanup records it on the record that held the output, docs/cleanup.md).
 */
export interface ChildRef extends SpendingChild {
  vouched: boolean;
}

export type RecordsVerdict = { ok: true; children: ChildRef[] } | { ok: false; reason: KeptReason };

/**
 * Every spending child of every spent slot of all the tx's records (master first). Unless the tx is conflicting,
 * every stored output must be spent (not unspent, not frozen). The slots are read in place (slotState and
 * spendingChildOf say the same, docs/records.md): a chunk reads a few slots per candidate, and a copy per slot was
 * most of a pass's own CPU.
 */
export function collectChildren(records: readonly (Bins | null)[], conflicting: boolean): RecordsVerdict {
  // keyed by the child's txid in internal order (hex): one string per slot, the display hex once per child
  const children = new Map<string, ChildRef>();
  for (const bins of records) {
    if (bins === null) return { ok: false, reason: 'record_missing' };
    const utxos = bins[BIN.utxos];
    if (!Array.isArray(utxos)) return { ok: false, reason: 'invalid_record' };
    const listed = deletedChildrenOf(bins);
    for (const slot of utxos) {
      if (slot === null || slot === undefined) continue;
      if (!Buffer.isBuffer(slot)) return { ok: false, reason: 'invalid_record' };
      if (slot.length === UNSPENT_SLOT_BYTES || (slot.length === SPENT_SLOT_BYTES && isFrozenSlot(slot))) {
        if (!conflicting) return { ok: false, reason: 'not_all_spent' };
        continue;
      }
      if (slot.length !== SPENT_SLOT_BYTES) return { ok: false, reason: 'invalid_record' };
      const id = slot.toString('hex', UNSPENT_SLOT_BYTES, UNSPENT_SLOT_BYTES + 32);
      let child = children.get(id);
      if (child === undefined) {
        const txid = Buffer.allocUnsafe(32);
        slot.copy(txid, 0, UNSPENT_SLOT_BYTES, UNSPENT_SLOT_BYTES + 32);
        child = { txid, txidHex: txidHex(txid), vin: 0, vouched: true };
        children.set(id, child);
      }
      child.vin = slot.readUInt32LE(UNSPENT_SLOT_BYTES + 32);
      // vouched only while every record holding one of its outputs lists it
      if (child.vouched && listed?.[child.txidHex] !== true) child.vouched = false;
    }
  }
  return { ok: true, children: [...children.values()] };
}

/** A 68-byte slot whose spending data is the frozen marker. */
function isFrozenSlot(slot: Buffer): boolean {
  return slot.compare(FROZEN_SPENDING_DATA, 0, SPENDING_DATA_BYTES, UNSPENT_SLOT_BYTES, SPENT_SLOT_BYTES) === 0;
}
