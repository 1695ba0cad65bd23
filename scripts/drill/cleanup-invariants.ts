/**
 * Cleanup's invariants over the records of a restored and replayed store (pure; the drill reads the facts with
 * records.ts). The same rules the cleanup property test holds a history to (test/cleanup/property.test.ts), read
 * from the records rather than a model:
 *  - the DAH rule (docs/udf.md): a master that is deletable (every output spent, no reassignment, its pagination
 *    records spent, mined on the longest chain, neither locked nor creating) has a delete-at-height no lower than its
 *    highest block + R; one that is not has none (unless conflicting or preserved, which keep theirs); no record is
 *    left `creating` or `deleting` (no create or pass is running);
 *  - passes at tip H (passViolations, the facts read before the first pass and the txs present after one): no tx
 *    deleted while one of its spending children is unmined or mined less than the safety window ago (safety), and
 *    once the passes settled (checks.ts) no tx left that was due (a DAH <= H and every child safe or gone: liveness).
 */
export interface TxFacts {
  txid: string;
  blockIds: number[];
  blockHeights: number[];
  unminedSince?: number;
  deleteAtHeight?: number;
  preserveUntil?: number;
  spentUtxos: number;
  recordUtxos: number;
  totalExtraRecs: number;
  spentExtraRecs: number;
  reassignments: boolean;
  conflicting: boolean;
  locked: boolean;
  creating: boolean;
  deleting: boolean;
}

/** The DAH rule's deletable (lua/utxo.lua applyDah), for a master. */
export function deletable(f: TxFacts): boolean {
  return (
    f.spentUtxos >= f.recordUtxos &&
    !f.reassignments &&
    f.spentExtraRecs >= f.totalExtraRecs &&
    f.blockIds.length > 0 &&
    f.unminedSince === undefined &&
    !f.locked &&
    !f.creating
  );
}

/** Each master that breaks the DAH rule or carries a mark nothing should have left, with why. */
export function dahViolations(facts: TxFacts[], retention: number): { txid: string; why: string }[] {
  const out: { txid: string; why: string }[] = [];
  for (const f of facts) {
    if (f.creating) out.push({ txid: f.txid, why: 'left creating' });
    if (f.deleting) out.push({ txid: f.txid, why: 'left deleting' });
    if (f.conflicting || f.preserveUntil !== undefined) continue;
    if (deletable(f)) {
      const floor = Math.max(...f.blockHeights) + retention;
      if (f.deleteAtHeight === undefined) out.push({ txid: f.txid, why: 'deletable without a DAH (never cleaned up)' });
      else if (f.deleteAtHeight < floor) out.push({ txid: f.txid, why: `DAH ${f.deleteAtHeight} below ${floor}` });
    } else if (f.deleteAtHeight !== undefined) {
      out.push({ txid: f.txid, why: `DAH ${f.deleteAtHeight} on a tx that is not deletable` });
    }
  }
  return out;
}

/** A spending child is safe at tip H when it is gone or mined on the longest chain at least `window` blocks ago. */
export function childSafe(child: TxFacts | undefined, tip: number, window: number): boolean {
  if (child === undefined) return true;
  if (child.unminedSince !== undefined || child.blockHeights.length === 0) return false;
  return tip >= Math.max(...child.blockHeights) + window;
}

export interface PassViolations {
  /** deleted while a spending child was not safe */
  unsafe: { txid: string; child: string }[];
  /** due (a DAH <= H, every child safe) and still there */
  owed: string[];
}

/**
 * `before`: the facts of every tx before the first pass; `after`: the txids present after a pass (`completed`: the
 * passes settled, so the due ones must be gone); `children`: each tx's spending children (its outputs' spenders).
 */
export function passViolations(
  before: Record<string, TxFacts>,
  after: Set<string>,
  children: Map<string, string[]>,
  tip: number,
  window: number,
  completed: boolean,
): PassViolations {
  const unsafe: PassViolations['unsafe'] = [];
  const owed: string[] = [];
  for (const f of Object.values(before)) {
    const kids = children.get(f.txid) ?? [];
    const unsafeKid = kids.find((c) => !childSafe(before[c], tip, window));
    if (!after.has(f.txid)) {
      if (unsafeKid !== undefined) unsafe.push({ txid: f.txid, child: unsafeKid });
    } else if (
      completed &&
      unsafeKid === undefined &&
      f.deleteAtHeight !== undefined &&
      f.deleteAtHeight <= tip &&
      (deletable(f) || f.conflicting)
    ) {
      owed.push(f.txid);
    }
  }
  return { unsafe, owed };
}
