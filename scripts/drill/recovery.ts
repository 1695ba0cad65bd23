/**
 * What a restore lost and how it is won back (pure functions of the history and the records):
 *  - recoveryPoint: the acknowledged writes after the backup began (what the backup may miss: RPO), and of them, and
 *    of the earlier ones, those the restored records do not hold;
 *  - replayBatches: those writes in acknowledgement order, as block validation sends the blocks since the backup
 *    again: each run of one kind in one batched call (createMany, spendMany), a block's setMined alone. A run's
 *    items do not depend on each other (a spend needs its parent created, and that create is an earlier run).
 */
import type { FinalState } from '../partition/history';
import { outpointKey } from '../partition/history';
import { acknowledged, type DrillCreate, type DrillEvent, type DrillMined, type DrillSpend } from './events';

/** Whether the records hold what the acknowledged event wrote. */
export function applied(e: DrillEvent, final: FinalState): boolean {
  if (e.kind === 'create') return final.txs[e.txid] !== undefined;
  if (e.kind === 'spend') return e.inputs.every((i) => final.spenders[outpointKey(i)] === e.spender);
  return e.txids.every((t) => (final.txs[t]?.blockIds ?? []).includes(e.blockId));
}

interface KindCounts {
  creates: number;
  spends: number;
  /** setMined calls (blocks) */
  blocks: number;
}

const countKinds = (events: DrillEvent[]): KindCounts => ({
  creates: events.filter((e) => e.kind === 'create').length,
  spends: events.filter((e) => e.kind === 'spend').length,
  blocks: events.filter((e) => e.kind === 'setMined').length,
});

export interface RecoveryPoint {
  /** ms since the drill started: the backup's start, the cluster's loss */
  backupStartMs: number;
  lossMs: number;
  /** writes acknowledged from the backup's start on: what a replay sends again */
  since: KindCounts;
  /** of them, those the restored records do not hold */
  missing: KindCounts;
  /** acknowledged before the backup began and not in the restored records: a broken backup unless 0 */
  missingBefore: KindCounts;
  /** ms from the backup's start to the last acknowledged write, and to the first write the records miss */
  lastAckMs: number | null;
  firstMissingMs: number | null;
  /** the heights of the blocks marked since the backup began: what block validation processes again */
  blockHeights: { from: number; to: number } | null;
}

export function recoveryPoint(
  events: DrillEvent[],
  restored: FinalState,
  backupStartMs: number,
  lossMs: number,
): RecoveryPoint {
  const acked = acknowledged(events);
  const since = acked.filter((e) => e.end >= backupStartMs);
  const before = acked.filter((e) => e.end < backupStartMs);
  const missing = since.filter((e) => !applied(e, restored));
  const heights = since.filter((e): e is DrillMined => e.kind === 'setMined').map((e) => e.blockHeight);
  return {
    backupStartMs,
    lossMs,
    since: countKinds(since),
    missing: countKinds(missing),
    missingBefore: countKinds(before.filter((e) => !applied(e, restored))),
    lastAckMs: since.length > 0 ? Math.max(...since.map((e) => e.end)) - backupStartMs : null,
    firstMissingMs: missing.length > 0 ? Math.min(...missing.map((e) => e.end)) - backupStartMs : null,
    blockHeights: heights.length > 0 ? { from: Math.min(...heights), to: Math.max(...heights) } : null,
  };
}

export type ReplayBatch =
  | { kind: 'create'; events: DrillCreate[] }
  | { kind: 'spend'; events: DrillSpend[] }
  | { kind: 'setMined'; events: [DrillMined] };

/** The writes acknowledged since `sinceMs`, in acknowledgement order, grouped into the calls a replay makes. */
export function replayBatches(events: DrillEvent[], sinceMs: number, maxBatch = 100): ReplayBatch[] {
  const batches: ReplayBatch[] = [];
  for (const e of acknowledged(events).filter((x) => x.end >= sinceMs)) {
    const last = batches[batches.length - 1];
    if (e.kind !== 'setMined' && last?.kind === e.kind && last.events.length < maxBatch) {
      (last.events as DrillEvent[]).push(e);
    } else if (e.kind === 'create') batches.push({ kind: 'create', events: [e] });
    else if (e.kind === 'spend') batches.push({ kind: 'spend', events: [e] });
    else batches.push({ kind: 'setMined', events: [e] });
  }
  return batches;
}
