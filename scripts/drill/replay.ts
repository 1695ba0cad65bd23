/**
 * The replay after a restore (recovery.ts replayBatches): every write acknowledged since the backup began, sent again
 * through the store in acknowledgement order, as block validation re-validates the blocks since the backup's start.
 * Every item must answer as done: a create OK or TX_EXISTS (already there), a spend OK (the store answers a spend by
 * the same spender as done), a block's setMined OK (idempotent per block id). An item answered STORAGE_ERROR (in
 * doubt: a busy machine) is sent again, as block validation retries; any other answer is a failure of the drill.
 */
import { UtxoStoreError } from '../../lib/domain/errors';
import type { ItemResult, UtxoStore } from '../../lib/store/types';
import type { ReplayBatch } from './recovery';

export interface ReplayReport {
  creates: { sent: number; ok: number; exists: number };
  spends: { sent: number; ok: number };
  blocks: { sent: number; ok: number };
  /** items answered other than done */
  failures: { kind: string; id: string; code: string }[];
  /** items answered in doubt and sent again */
  retried: number;
  ms: number;
}

const RETRIES = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const codeOf = (err: unknown) => (err instanceof UtxoStoreError ? err.code : `THROWN ${String(err).slice(0, 80)}`);

export async function replay(store: UtxoStore, batches: ReplayBatch[]): Promise<ReplayReport> {
  const started = Date.now();
  const report: ReplayReport = {
    creates: { sent: 0, ok: 0, exists: 0 },
    spends: { sent: 0, ok: 0 },
    blocks: { sent: 0, ok: 0 },
    failures: [],
    retried: 0,
    ms: 0,
  };

  /** sends `items` until none answers in doubt (or RETRIES rounds); answers the final result of each */
  async function untilAnswered<T, R>(items: T[], send: (xs: T[]) => Promise<ItemResult<R>[]>) {
    const results: ItemResult<R>[] = new Array<ItemResult<R>>(items.length);
    let pending = items.map((_, i) => i);
    for (let round = 0; pending.length > 0; round++) {
      const answers = await send(pending.map((i) => items[i]));
      const again: number[] = [];
      answers.forEach((a, k) => {
        const i = pending[k];
        results[i] = a;
        if (!a.ok && a.error.code === 'STORAGE_ERROR' && round < RETRIES) again.push(i);
      });
      report.retried += again.length;
      pending = again;
      if (pending.length > 0) await sleep(500);
    }
    return results;
  }

  for (const batch of batches) {
    if (batch.kind === 'create') {
      report.creates.sent += batch.events.length;
      const results = await untilAnswered(batch.events, (es) => store.createMany(es.map((e) => ({ tx: e.hex }))));
      results.forEach((r, i) => {
        if (r.ok) report.creates.ok++;
        else if (r.error.code === 'TX_EXISTS') report.creates.exists++;
        else report.failures.push({ kind: 'create', id: batch.events[i].txid, code: r.error.code });
      });
    } else if (batch.kind === 'spend') {
      report.spends.sent += batch.events.length;
      const results = await untilAnswered(batch.events, (es) => store.spendMany(es.map((e) => ({ tx: e.hex }))));
      results.forEach((r, i) => {
        if (r.ok) report.spends.ok++;
        else report.failures.push({ kind: 'spend', id: batch.events[i].spender, code: r.error.code });
      });
    } else {
      const e = batch.events[0];
      report.blocks.sent++;
      const [r] = await untilAnswered([e], async () => {
        try {
          await store.setMined({ txids: e.txids, blockId: e.blockId, blockHeight: e.blockHeight, subtreeIdx: 0 });
          return [{ ok: true as const, value: undefined }];
        } catch (err) {
          if (err instanceof UtxoStoreError) return [{ ok: false as const, error: err }];
          return [{ ok: false as const, error: new UtxoStoreError('STORAGE_ERROR', codeOf(err)) }];
        }
      });
      if (r.ok) report.blocks.ok++;
      else report.failures.push({ kind: 'setMined', id: `block ${e.blockId}`, code: r.error.code });
    }
  }
  report.ms = Date.now() - started;
  return report;
}
