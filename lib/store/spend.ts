/**
 * Spend and unspend (docs/operations.md). A spend is all-or-nothing per request: items are grouped per record into
 * one spendMulti each (one engine batch); if any item fails, every item this call spent is rolled back with
 * unspend (expected spender = this spend) and SpendFailedError lists each input's outcome.
 */
import { BIN } from '../domain/bins';
import { SpendFailedError, type ItemOutcome } from '../domain/errors';
import { masterKey } from '../domain/keys';
import { optionalBoolArg, optionalIntArg } from './args';
import { heightOf, type StoreContext } from './context';
import { missingRecordError, readMasters, setLocked } from './admin';
import { SignalBuffer } from './signals';
import type { SignalName } from '../signals/port';
import { outcome, resolveSpendItems, spenderOf, spendsOf, type ResolvedSpend } from './spend-items';
import type { SpendItem, SpendOptions, SpendRequest, SpendResult } from './types';
import { callUdfBatch, storageError, udfError, type UdfBatchItem } from './udf-call';

interface Group {
  key: Buffer;
  items: number[];
}

function groupByRecord(items: ResolvedSpend[]): Group[] {
  const groups = new Map<string, Group>();
  items.forEach((item, i) => {
    const id = item.key.toString('hex');
    const group = groups.get(id) ?? { key: item.key, items: [] };
    group.items.push(i);
    groups.set(id, group);
  });
  return [...groups.values()];
}

export async function spend(
  ctx: StoreContext,
  request: SpendRequest,
  options: SpendOptions = {},
): Promise<SpendResult> {
  const items = spendsOf(request, ctx.settings.utxoBatchSize);
  const height = (await heightOf(ctx, optionalIntArg(options.blockHeight, 'blockHeight'))) + 1;
  const R = ctx.settings.blockHeightRetention;
  const ignoreConflicting = optionalBoolArg(options.ignoreConflicting, 'ignoreConflicting');
  const ignoreLocked = optionalBoolArg(options.ignoreLocked, 'ignoreLocked');
  const signals = new SignalBuffer();

  const all = groupByRecord(items);
  const outcomes: ItemOutcome[] = items.map((item) => outcome(item, 'OK'));
  // a pagination record's outputs are spendable only once the master (the commit marker) is committed
  const uncommitted = await mastersCreating(ctx, items, all);
  const groups: Group[] = [];
  for (const g of all) {
    if (!uncommitted.has(items[g.items[0]].txid)) groups.push(g);
    else for (const i of g.items) fail(outcomes[i], 'CREATING', 'TX is being created and cannot be spent yet');
  }
  let results;
  try {
    results = await callUdfBatch(
      ctx,
      groups.map((g): UdfBatchItem => ({
        key: g.key,
        fn: 'spendMulti',
        args: [
          g.items.map((i) => ({
            offset: items[i].offset,
            utxoHash: items[i].utxoHash,
            spendingData: items[i].spendingData,
          })),
          ignoreConflicting,
          ignoreLocked,
          height,
          R,
        ],
      })),
    );
  } catch (err) {
    // The batch failed as a whole: some records may have been written, and which slots this call wrote (rather than
    // an earlier call of the same spender) is unknown. Undo what the spender holds only when the spending tx is not
    // stored: a stored (accepted) tx keeps its inputs, and an unknown answer keeps them too (never spendable by
    // another tx; a retry of the spend completes it).
    const message = err instanceof Error ? err.message : String(err);
    for (const o of outcomes) fail(o, 'STORAGE_ERROR', message);
    for (const g of groups) followUp(signals, items[g.items[0]], height);
    const undo = await itemsOfUnstoredSpenders(ctx, items);
    if (undo.length > 0) await rollback(ctx, items, undo, outcomes, height, signals, true);
    await signals.flush(ctx).catch(() => undefined);
    throw new SpendFailedError(outcomes[0], outcomes);
  }

  /** items whose slot this call wrote (not those an earlier call of the same spender wrote: a rollback keeps them) */
  const spent = new Set<number>();
  /** items of records whose answer was lost: this call may have written them */
  const inDoubt: number[] = [];
  const storedSpenders = new Map<string, Promise<boolean>>();
  const spenderStored = (item: ResolvedSpend): Promise<boolean> => {
    let known = storedSpenders.get(item.spendingTxid);
    if (!known) {
      known = ctx.engine.get(masterKey(item.spendingTxidBytes), [BIN.txID]).then(
        (r) => r !== null,
        () => false,
      );
      storedSpenders.set(item.spendingTxid, known);
    }
    return known;
  };

  for (let g = 0; g < groups.length; g++) {
    const group = groups[g];
    const result = results[g];
    if (!result.ok) {
      for (const i of group.items) fail(outcomes[i], result.error.code, result.error.message);
      inDoubt.push(...group.items);
      followUp(signals, items[group.items[0]], height);
      continue;
    }
    const response = result.response;
    const parent = items[group.items[0]];
    signals.addFrom(parent.txid, response, height);
    const unchanged = new Set(response.unchanged ?? []);
    // a replay (items already spent by this spender): the earlier call's ALLSPENT may not have been sent, and the
    // master's spentExtraRecs depends on it (a master's own DAH follows its own state; only pages are followed up)
    if (unchanged.size > 0 && parent.recordNumber > 0) followUp(signals, parent, height);
    if (response.status === 'OK') {
      group.items.forEach((i, position) => {
        if (!unchanged.has(position)) spent.add(i);
      });
      continue;
    }
    if (!response.errors) {
      // record-level error: nothing was written to this record
      const master =
        response.errorCode === 'TX_NOT_FOUND' && parent.recordNumber > 0 ? await masterOf(ctx, parent) : null;
      if (master !== null) {
        // the tx exists but has no record for this output (the output does not exist), or the read failed
        for (const i of group.items) {
          if (master === 'stands') {
            fail(outcomes[i], 'UTXO_NOT_FOUND', `output ${items[i].vout} of ${items[i].txid} does not exist`);
          } else fail(outcomes[i], 'STORAGE_ERROR', master.message);
        }
        continue;
      }
      if (response.errorCode === 'TX_NOT_FOUND' && (await allSpendersStored(group, items, spenderStored))) continue;
      const error = udfError(response, { txid: parent.txid });
      for (const i of group.items) fail(outcomes[i], error.code, error.message);
      continue;
    }
    group.items.forEach((i, position) => {
      const itemError = response.errors?.[String(position)];
      if (!itemError) {
        if (!unchanged.has(position)) spent.add(i);
        return;
      }
      fail(outcomes[i], itemError.errorCode, itemError.message);
      if (itemError.spendingData) Object.assign(outcomes[i], spenderOf(itemError.spendingData));
    });
  }

  if (outcomes.every((o) => o.status === 'OK')) {
    await signals.flush(ctx);
    return { spends: outcomes };
  }

  await rollback(ctx, items, [...spent], outcomes, height, signals);
  if (inDoubt.length > 0) {
    // as when the whole batch fails: undo what an unstored spender holds in those records (a stored tx keeps them)
    const unstored = new Set(await itemsOfUnstoredSpenders(ctx, items));
    const undo = inDoubt.filter((i) => unstored.has(i));
    if (undo.length > 0) await rollback(ctx, items, undo, outcomes, height, signals, true);
  }
  try {
    await signals.flush(ctx);
  } catch {
    // the spend failed anyway; the reconciler state converges on the next signal of these records
  }
  const first = outcomes.find((o) => o.status === 'ERROR') ?? outcomes[0];
  throw new SpendFailedError(first, outcomes);
}

/** Txids still `creating` among the parents whose pagination records this spend touches. */
async function mastersCreating(ctx: StoreContext, items: ResolvedSpend[], groups: Group[]): Promise<Set<string>> {
  const parents = new Map<string, Buffer>();
  for (const g of groups) {
    const item = items[g.items[0]];
    if (item.recordNumber > 0) parents.set(item.txid, item.txidBytes);
  }
  const creating = new Set<string>();
  if (parents.size === 0) return creating;
  let masters;
  try {
    masters = await ctx.engine.batchGet(
      [...parents.values()].map((t) => masterKey(t)),
      [BIN.creating],
    );
  } catch (err) {
    throw storageError('reading the masters of the spent pagination records failed', err);
  }
  [...parents.keys()].forEach((txid, n) => {
    if (masters[n]?.bins[BIN.creating]) creating.add(txid);
  });
  return creating;
}

/**
 * 'stands' when the parent's master exists and is not being deleted (cleanup removes pagination records before the
 * master), null when it is gone, or the read error (never thrown: other records may already hold this spend).
 */
async function masterOf(ctx: StoreContext, item: ResolvedSpend): Promise<'stands' | null | Error> {
  try {
    const [master] = await readMasters(ctx, [item.txidBytes]);
    return master !== null && !master.bins[BIN.deleting] ? 'stands' : null;
  } catch (err) {
    return storageError('reading the master record failed', err, { txid: item.txid });
  }
}

async function allSpendersStored(
  group: Group,
  items: ResolvedSpend[],
  spenderStored: (item: ResolvedSpend) => Promise<boolean>,
): Promise<boolean> {
  for (const i of group.items) if (!(await spenderStored(items[i]))) return false;
  return true;
}

/**
 * A record whose answer was lost may have been written, and the signal its UDF raised (a page fully spent, a DAH set)
 * is lost with the answer; a retry finds nothing to change and raises none. The reconciler is state-based: ask it to
 * look at the tx (ALLSPENT for a pagination record, DAHSET for a master).
 */
function followUp(signals: SignalBuffer, item: ResolvedSpend, height: number, page: SignalName = 'ALLSPENT'): void {
  signals.add(item.txid, item.recordNumber > 0 ? page : 'DAHSET', height);
}

function fail(o: ItemOutcome, code: ItemOutcome['code'], message: string): void {
  o.status = 'ERROR';
  o.code = code;
  o.message = message;
}

/** Items whose spending tx is known not to be stored (a failed or unknown read keeps the item out). */
async function itemsOfUnstoredSpenders(ctx: StoreContext, items: ResolvedSpend[]): Promise<number[]> {
  const spenders = new Map<string, Buffer>();
  for (const item of items) spenders.set(item.spendingTxid, item.spendingTxidBytes);
  let records;
  try {
    records = await ctx.engine.batchGet(
      [...spenders.values()].map((t) => masterKey(t)),
      [BIN.txID],
    );
  } catch {
    return [];
  }
  const unstored = new Set([...spenders.keys()].filter((_, n) => records[n] === null));
  return items.flatMap((item, i) => (unstored.has(item.spendingTxid) ? [i] : []));
}

async function rollback(
  ctx: StoreContext,
  items: ResolvedSpend[],
  spent: number[],
  outcomes: ItemOutcome[],
  height: number,
  signals: SignalBuffer,
  /** keep the items' error outcomes (the spend failed before we knew which items were written) */
  keepErrors = false,
): Promise<void> {
  const R = ctx.settings.blockHeightRetention;
  let results;
  try {
    results = await callUdfBatch(
      ctx,
      spent.map((i) => ({
        key: items[i].key,
        fn: 'unspend' as const,
        args: [items[i].offset, items[i].utxoHash, items[i].spendingData, height, R],
      })),
    );
  } catch (err) {
    const error = storageError('rolling back the spend failed', err);
    for (const i of spent) fail(outcomes[i], 'STORAGE_ERROR', `the rollback failed: ${error.message}`);
    return;
  }
  results.forEach((r, n) => {
    const i = spent[n];
    if (r.ok && r.response.status === 'OK') {
      if (!keepErrors) outcomes[i].status = 'ROLLED_BACK';
      signals.addFrom(items[i].txid, r.response, height);
    } else if (keepErrors) {
      return;
    } else {
      const reason = r.ok ? (r.response.message ?? r.response.errorCode) : r.error.message;
      fail(outcomes[i], 'STORAGE_ERROR', `spent, but the rollback failed: ${reason}`);
    }
  });
}

/**
 * Clears each slot that holds exactly the given spender (a different spender or an unspent slot is a no-op). With
 * flagAsLocked the parents are locked first (every record), so the freed outputs are never spendable until unlocked.
 */
export async function unspend(
  ctx: StoreContext,
  spends: SpendItem[],
  options: { blockHeight?: number; flagAsLocked?: boolean } = {},
): Promise<void> {
  const items = resolveSpendItems(spends, ctx.settings.utxoBatchSize);
  const blockHeight = optionalIntArg(options.blockHeight, 'blockHeight');
  if (optionalBoolArg(options.flagAsLocked, 'flagAsLocked')) {
    await setLocked(ctx, [...new Set(items.map((i) => i.txid))], true);
  }
  const height = await heightOf(ctx, blockHeight);
  const R = ctx.settings.blockHeightRetention;
  const signals = new SignalBuffer();
  let results;
  try {
    results = await callUdfBatch(
      ctx,
      items.map((item) => ({
        key: item.key,
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
  if (first) throw await missingRecordError(ctx, first.item, first.error);
}
