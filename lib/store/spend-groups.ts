/**
 * Spend steps 1-3: resolve each tx's inputs (a bad tx fails alone), refuse inputs of txs still being created, and
 * group every remaining input of the batch per record.
 */
import type { SpendRequest } from './types';
import { asItemError } from './batch';
import type { StoreContext } from './context';
import { txidsCreating } from './record-reads';
import { recordKeyOf, spendsOf } from './spend-items';
import { fail, inputFailed, isLive, outcomeAt, type RecordGroup, type TxSpend } from './spend-state';

export function resolveTxs(ctx: StoreContext, requests: SpendRequest[]): TxSpend[] {
  return requests.map((request): TxSpend => {
    try {
      return { items: spendsOf(request, ctx.settings.utxoBatchSize), outcomes: [] };
    } catch (err) {
      return { items: [], outcomes: [], error: asItemError(err) };
    }
  });
}

/**
 * A pagination record's outputs are spendable only once the master (the commit marker) is committed: inputs of a
 * page whose master is still `creating` fail CREATING (one batch read for the whole batch).
 */
export async function refuseCreating(ctx: StoreContext, txs: TxSpend[]): Promise<void> {
  const parents = new Map<string, Buffer>();
  for (const tx of txs.filter(isLive))
    for (const item of tx.items) if (item.recordNumber > 0) parents.set(item.txid, item.txidBytes);
  const creating = await txidsCreating(ctx, parents);
  if (creating.size === 0) return;
  for (const tx of txs.filter(isLive)) {
    tx.items.forEach((item, i) => {
      if (item.recordNumber > 0 && creating.has(item.txid)) {
        fail(outcomeAt(tx, i), 'CREATING', 'TX is being created and cannot be spent yet');
      }
    });
  }
}

/** Every input not failed yet, grouped per record key, in batch order. */
export function groupByRecord(txs: TxSpend[]): RecordGroup[] {
  const groups = new Map<string, RecordGroup>();
  txs.forEach((tx, t) => {
    if (!isLive(tx)) return;
    tx.items.forEach((item, i) => {
      if (inputFailed(tx, i)) return;
      // the record's identity from strings the input already has (its parent's canonical hex and record number):
      // no key text made per input
      const id = item.recordNumber === 0 ? item.txid : `${item.txid}:${item.recordNumber}`;
      let group = groups.get(id);
      if (!group) {
        group = { key: recordKeyOf(item), first: item, refs: [] };
        groups.set(id, group);
      }
      group.refs.push({ tx: t, item: i });
    });
  });
  return [...groups.values()];
}
