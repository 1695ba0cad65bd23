/**
 * Which candidates of a DAH range query are examined, and what their own records say (docs/cleanup.md, step 2).
 * The DAH bin is only the trigger: the record state is re-checked here rather than trusted. Pure.
 */
import type { Bins, EngineRecord } from '../engine/port';
import { BIN } from '../domain/bins';
import type { KeptReason } from './report';
import { isDeletedChild } from './child-safety';
import { slotState, spendingChildOf, type SpendingChild } from './record-facts';

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
 * every stored output must be spent (not unspent, not frozen).
 */
export function collectChildren(records: readonly (Bins | null)[], conflicting: boolean): RecordsVerdict {
  const children = new Map<string, ChildRef>();
  for (const bins of records) {
    if (bins === null) return { ok: false, reason: 'record_missing' };
    const utxos = bins[BIN.utxos];
    if (!Array.isArray(utxos)) return { ok: false, reason: 'invalid_record' };
    for (const slot of utxos) {
      const state = slotState(slot);
      if (state === 'invalid') return { ok: false, reason: 'invalid_record' };
      if (state === 'spent') {
        const child = spendingChildOf(slot as Buffer);
        const vouched = isDeletedChild(bins, child.txidHex) && (children.get(child.txidHex)?.vouched ?? true);
        children.set(child.txidHex, { ...child, vouched });
      } else if ((state === 'unspent' || state === 'frozen') && !conflicting) {
        return { ok: false, reason: 'not_all_spent' };
      }
    }
  }
  return { ok: true, children: [...children.values()] };
}
