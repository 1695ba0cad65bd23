/**
 * Unspend (docs/operations.md): clears each slot that holds exactly the given spender (a different spender or an
 * unspent slot is a no-op), one engine batch. With flagAsLocked the parents are locked first (every record), so the
 * freed outputs are never spendable until unlocked; only the parents with an output that holds its given spender
 * (read first): a request that would clear nothing of a parent does not lock it (security review N3: a made-up
 * spender locked any tx).
 */
import { optionalBoolArg, optionalIntArg } from './args';
import { missingRecordError, setLocked } from './admin';
import { heightOf, type StoreContext } from './context';
import { SignalBuffer } from './signals';
import { recordKeyOf, resolveSpendItems, type ResolvedSpend } from './spend-items';
import { followUp } from './spend-judge';
import type { SpendItem } from './types';
import { callUdfBatch, storageError, udfError } from './udf-call';
import { inChunks } from './batch';
import { BIN } from '../domain/bins';
import { decodeSlot } from '../domain/slots';
import { TxNotFoundError } from '../domain/errors';

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
    const parents = await parentsToLock(ctx, items);
    if (parents.length > 0) await setLocked(ctx, parents, true);
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

/**
 * The parents with at least one of the given outputs holding exactly its given spender: one batch read of the
 * records the items live in. A missing record fails the request before anything is written (TX_NOT_FOUND, or
 * UTXO_NOT_FOUND for an output beyond the last record), as the lock of a missing parent did. A retry after the slots
 * were cleared finds nothing to lock: the first attempt locked before it cleared.
 */
async function parentsToLock(ctx: StoreContext, items: ResolvedSpend[]): Promise<string[]> {
  const keys = new Map<string, Buffer>();
  for (const item of items) keys.set(`${item.txid}:${item.recordNumber}`, recordKeyOf(item));
  const refs = [...keys.keys()];
  let records;
  try {
    records = await inChunks(ctx, [...keys.values()], (part) => ctx.engine.batchGet(part, [BIN.utxos]));
  } catch (err) {
    throw storageError('reading the records to lock failed', err);
  }
  const byRef = new Map(refs.map((ref, i) => [ref, records[i]]));
  const parents = new Set<string>();
  for (const item of items) {
    const record = byRef.get(`${item.txid}:${item.recordNumber}`);
    if (!record) {
      throw await missingRecordError(ctx, { ...item, key: recordKeyOf(item) }, new TxNotFoundError(item.txid));
    }
    const slots = record.bins[BIN.utxos];
    const slot = decodeSlot(Array.isArray(slots) ? slots[item.offset] : undefined);
    if (slot.state === 'spent' && slot.utxoHash.equals(item.utxoHash) && slot.spendingData.equals(item.spendingData))
      parents.add(item.txid);
  }
  return [...parents];
}
