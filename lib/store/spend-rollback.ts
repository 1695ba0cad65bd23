/**
 * Spend step 6: every tx with a failed input gives back what this call spent for it (unspend with the tx as the
 * expected spender, so nothing another spender holds is touched), all losers in one chunked engine batch. Inputs in
 * doubt are given back only when the spending tx is not stored: a stored (accepted) tx keeps its inputs, and an
 * unknown answer keeps them too (never spendable by another tx; a retry of the spend completes it).
 */
import { callUdfChunked } from './batch';
import type { StoreContext } from './context';
import { txidsStored } from './record-reads';
import type { SignalBuffer } from './signals';
import { recordKeyOf } from './spend-items';
import { fail, hasFailed, outcomeAt, type TxSpend } from './spend-state';
import { storageError } from './udf-call';

interface Undo {
  tx: number;
  item: number;
  /** in doubt: keep the input's error outcome whatever the unspend answers */
  inDoubt: boolean;
}

export async function rollBackLosers(
  ctx: StoreContext,
  txs: TxSpend[],
  height: number,
  signals: SignalBuffer,
): Promise<void> {
  const losers: { tx: TxSpend; t: number }[] = [];
  txs.forEach((tx, t) => {
    if (tx.error === undefined && hasFailed(tx)) losers.push({ tx, t });
  });
  if (losers.length === 0) return;
  const undo: Undo[] = [];
  for (const { tx, t } of losers) for (const item of tx.spent ?? []) undo.push({ tx: t, item, inDoubt: false });
  undo.push(...(await inDoubtOfUnstoredSpenders(ctx, txs, losers)));
  if (undo.length === 0) return;

  const R = ctx.settings.blockHeightRetention;
  const results = await callUdfChunked(
    ctx,
    undo.map(({ tx, item }) => {
      const input = txs[tx].items[item];
      return {
        key: recordKeyOf(input),
        fn: 'unspend' as const,
        args: [input.offset, input.utxoHash, input.spendingData, height, R],
      };
    }),
  );
  results.forEach((r, n) => {
    const { tx, item, inDoubt } = undo[n];
    const input = txs[tx].items[item];
    const o = outcomeAt(txs[tx], item);
    if (r.ok && r.response.status === 'OK') {
      if (!inDoubt) o.status = 'ROLLED_BACK';
      signals.addFrom(input.txid, r.response, height);
    } else if (!inDoubt) {
      const reason = r.ok ? (r.response.message ?? r.response.errorCode) : storageError('rollback', r.error).message;
      fail(o, 'STORAGE_ERROR', `spent, but the rollback failed: ${reason}`);
    }
  });
}

/** In-doubt inputs of losing txs whose spending tx is known not to be stored (a failed read keeps them out). */
async function inDoubtOfUnstoredSpenders(
  ctx: StoreContext,
  txs: TxSpend[],
  losers: { tx: TxSpend; t: number }[],
): Promise<Undo[]> {
  const doubtful = losers.flatMap(({ tx, t }) => (tx.inDoubt ? [{ tx, t, inDoubt: tx.inDoubt }] : []));
  if (doubtful.length === 0) return [];
  const spenders = new Map<string, Buffer>();
  for (const { tx, inDoubt } of doubtful) {
    for (const i of inDoubt) spenders.set(tx.items[i].spendingTxid, tx.items[i].spendingTxidBytes);
  }
  let stored: Set<string>;
  try {
    stored = await txidsStored(ctx, spenders);
  } catch {
    return [];
  }
  return doubtful.flatMap(({ tx, t, inDoubt }) =>
    inDoubt.filter((i) => !stored.has(tx.items[i].spendingTxid)).map((item) => ({ tx: t, item, inDoubt: true })),
  );
}
