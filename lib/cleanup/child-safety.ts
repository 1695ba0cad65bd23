/**
 * The safety rule of docs/cleanup.md, step 4: a parent may be deleted only when every spending child is
 * positively known to be mined and stable. Anything uncertain is unsafe. Pure.
 */
import type { Bins } from '../engine/port';
import { BIN } from '../domain/bins';
import type { KeptReason } from './report';

export type ChildVerdict = { safe: true } | { safe: false; reason: KeptReason };

/** What reading a child's master gave: its bins, null when missing, or the read error. */
export type ChildRead = Bins | null | Error;

function heights(value: unknown): number[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const out: number[] = [];
  for (const h of value) {
    if (typeof h === 'number' && Number.isInteger(h)) out.push(h);
    else if (typeof h === 'bigint') out.push(Number(h));
    else return null;
  }
  return out;
}

/** The verdict of every safe child (one object, not one per child). */
const SAFE: ChildVerdict = Object.freeze({ safe: true });

export function childVerdict(read: ChildRead | undefined, tip: number, safetyWindow: number): ChildVerdict {
  if (read === undefined || read instanceof Error) return { safe: false, reason: 'child_read_error' };
  if (read === null) return { safe: false, reason: 'child_missing' };
  const unminedSince = read[BIN.unminedSince];
  if (unminedSince !== undefined && unminedSince !== null) return { safe: false, reason: 'child_unmined' };
  const hs = heights(read[BIN.blockHeights]);
  if (hs === null) return { safe: false, reason: 'child_unmined' };
  if (tip >= Math.max(...hs) + safetyWindow) return SAFE;
  return { safe: false, reason: 'child_unstable' };
}

/** The record's `deletedChildren` map (child display hex -> true), or undefined when it has none (or not a map). */
export function deletedChildrenOf(bins: Bins): Readonly<Record<string, unknown>> | undefined {
  const map = bins[BIN.deletedChildren];
  if (map === null || map === undefined || typeof map !== 'object' || Array.isArray(map) || Buffer.isBuffer(map)) {
    return undefined;
  }
  return map as Record<string, unknown>;
}

/** A child recorded in the parent's `deletedChildren` was itself cleaned up after becoming stable: safe. */
export function isDeletedChild(parentBins: Bins, childHex: string): boolean {
  return deletedChildrenOf(parentBins)?.[childHex] === true;
}

/**
 * The first unsafe child's reason, or null when all children are safe. A child vouched for by `deletedChildren` is
 * safe only when its record is really gone: cleanup records it there before deleting the child, and a child whose
 * delete was interrupted and then reorganized out is still in the store and judged by its own record.
 */
export function parentVerdict(
  children: Iterable<{ txidHex: string; vouched: boolean }>,
  verdicts: ReadonlyMap<string, ChildVerdict>,
): KeptReason | null {
  for (const { txidHex: hex, vouched } of children) {
    const v = verdicts.get(hex);
    if (v === undefined) return 'child_read_error';
    if (v.safe || (vouched && v.reason === 'child_missing')) continue;
    return v.reason;
  }
  return null;
}
