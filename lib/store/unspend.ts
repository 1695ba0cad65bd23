/**
 * Unspend (docs/operations.md): clears each slot that holds exactly the given spender (a different spender or an
 * unspent slot is a no-op), one engine batch. With flagAsLocked the parents are locked first (every record), so the
 * freed outputs are never spendable until unlocked.
 */
import { optionalBoolArg, optionalIntArg } from './args';
import { missingRecordError, setLocked } from './admin';
import { heightOf, type StoreContext } from './context';
import { SignalBuffer } from './signals';
import { recordKeyOf, resolveSpendItems, type ResolvedSpend } from './spend-items';
import { followUp } from './spend-judge';
import type { SpendItem } from './types';
import { callUdfBatch, udfError } from './udf-call';

export async function unspend(
  ctx: StoreContext,
  spends: SpendItem[],
  options: { blockHeight?: number; flagAsLocked?: boolean } = {},
): Promise<void> {
  const items = resolveSpendItems(spends, ctx.settings.utxoBatchSize);
  const blockHeight = optionalIntArg(options.blockHeight, 'blockHeight');
  // bounded (MAX_TIP_ADVANCE above H) before anything is written
  const height = await heightOf(ctx, blockHeight);
  if (optionalBoolArg(options.flagAsLocked, 'flagAsLocked')) {
    await setLocked(ctx, [...new Set(items.map((i) => i.txid))], true);
  }
  const R = ctx.settings.blockHeightRetention;
  const signals = new SignalBuffer();
  let results;
  try {
    results = await callUdfBatch(
      ctx,
      items.map((item) => ({
        key: recordKeyOf(item),
        fn: 'unspend' as const,
        args: [item.offset, item.utxoHash, item.spendingData, height, R],
      })),
    );
  } catch (err) {
    for (const item of items) followUp(signals, item, height, 'NOTALLSPENT');
    await signals.flush(ctx).catch(() => undefined);
    throw err;
  }
  let first: { error: Error; item: ResolvedSpend } | undefined;
  results.forEach((r, i) => {
    if (!r.ok) {
      first ??= { error: r.error, item: items[i] };
      followUp(signals, items[i], height, 'NOTALLSPENT');
    } else if (r.response.status !== 'OK') {
      first ??= { error: udfError(r.response, { txid: items[i].txid, vout: items[i].vout }), item: items[i] };
    } else {
      signals.addFrom(items[i].txid, r.response, height);
      // a no-op on a page may be the retry of an unspend whose NOTALLSPENT was not sent
      if (items[i].recordNumber > 0) followUp(signals, items[i], height, 'NOTALLSPENT');
    }
  });
  await signals.flush(ctx);
  if (first) throw await missingRecordError(ctx, { ...first.item, key: recordKeyOf(first.item) }, first.error);
}
