/**
 * Unmined iteration for block-assembly recovery (Teranode's unmined iterator): every unmined tx with what block
 * assembly needs to reload it (txid, fee, size, parents' txids, createdAt, locked, conflicting).
 *
 * Streamed in bounded pages: a page is one page of the engine's range query on unminedSince (every value: mined txs
 * have no unminedSince and are not in the index), so a request reads at most `limit` index entries and `limit`
 * masters whatever the store holds, and the process keeps no more than one page. The cursor is the unmined query's
 * (unmined-cursor.ts): a cursor record holding the engine's paging state; its first read fixes the page's txids in
 * it, so a retried request lists the same txids (those still unmined, with their current flags). The engine resumes
 * by position in the index (per partition on Aerospike, after the last (value, key) on the embedded engine), not by
 * a count of entries, so txs mined while the iteration runs (entries leaving the index around a page boundary) move
 * no other tx across the boundary: a tx unmined throughout is listed exactly once.
 *
 * Order: createdAt (then txid) within a page; across pages the engine's index order (Aerospike answers a query in
 * partition order, so no store-wide createdAt order exists without reading the index whole). Block assembly orders
 * what it reloads by createdAt itself.
 */
import type { BinValue } from '../engine/port';
import { BIN } from '../domain/bins';
import { InvalidArgumentError } from '../domain/errors';
import { masterKey } from '../domain/keys';
import { parseTx } from '../domain/tx';
import { txidToBytes, txidToHex } from '../domain/txid';
import { optionalIntArg } from './args';
import type { StoreContext } from './context';
import { mapLimited } from '../domain/concurrency';
import { BLOB_READ_CONCURRENCY, batchRead, toInt } from './tx-graph';
import type { UnminedIterationPage, UnminedIterationQuery, UnminedPage, UnminedTx } from './types';
import { storageError } from './udf-call';
import { keepUnminedPage, resolveUnminedCursor, saveUnminedCursor, unminedIndexPage } from './unmined-cursor';

export const DEFAULT_ITERATION_LIMIT = 1000;
export const MAX_ITERATION_LIMIT = 10000;
/** The unminedSince bound of an iteration: every height (a cursor of it is tied to this cutoff). */
export const ITERATION_CUTOFF = 0xffffffff;

export async function iterateUnmined(
  ctx: StoreContext,
  query: UnminedIterationQuery = {},
): Promise<UnminedIterationPage> {
  if (query === null || typeof query !== 'object') throw new InvalidArgumentError('query', 'expected an object');
  const limit = optionalIntArg(query.limit, 'limit', 1, MAX_ITERATION_LIMIT) ?? DEFAULT_ITERATION_LIMIT;
  if (query.cursor === undefined) return page(ctx, await indexPage(ctx, limit));
  if (typeof query.cursor !== 'string' || !/^[0-9a-f]{32}$/.test(query.cursor)) {
    throw new InvalidArgumentError('cursor', 'expected the cursor of the previous page');
  }
  const state = await resolveUnminedCursor(ctx, query.cursor, ITERATION_CUTOFF);
  if (state.page) {
    if (state.limit !== limit) {
      throw new InvalidArgumentError('limit', `this cursor's page was read with limit ${String(state.limit)}`);
    }
    return page(ctx, state.page);
  }
  const fresh = await indexPage(ctx, limit, state.engineCursor);
  return page(ctx, await keepUnminedPage(ctx, query.cursor, state, fresh, limit));
}

/** One page of the unminedSince index: the masters' txids in createdAt order, the next cursor saved. */
async function indexPage(ctx: StoreContext, limit: number, engineCursor?: string): Promise<UnminedPage> {
  const result = await unminedIndexPage(ctx, ITERATION_CUTOFF, [BIN.createdAt], limit, engineCursor);
  const entries = result.masters
    .map((m) => ({ createdAt: toInt(m.bins[BIN.createdAt]), txid: m.txid }))
    .filter((e) => e.txid.length === 32)
    // display hex once per entry: its order is the reversed bytes' order, so ties sort without copying buffers
    .map((e) => ({ createdAt: e.createdAt, hex: txidToHex(e.txid) }))
    .sort((a, b) => a.createdAt - b.createdAt || (a.hex < b.hex ? -1 : a.hex > b.hex ? 1 : 0));
  const txids = entries.map((e) => e.hex);
  if (!result.cursor) return { txids };
  return { txids, cursor: await saveUnminedCursor(ctx, result.cursor, ITERATION_CUTOFF) };
}

/** The page's txs read afresh (one batch): those mined or deleted since the page was fixed are left out. */
async function page(ctx: StoreContext, fixed: UnminedPage): Promise<UnminedIterationPage> {
  const masters = await batchRead(
    ctx,
    fixed.txids.map((t) => masterKey(txidToBytes(t))),
    [
      BIN.fee,
      BIN.sizeInBytes,
      BIN.createdAt,
      BIN.locked,
      BIN.conflicting,
      BIN.inputs,
      BIN.external,
      BIN.unminedSince,
      BIN.totalExtraRecs,
    ],
    'the unmined transactions',
  );
  const txs = await mapLimited(fixed.txids, BLOB_READ_CONCURRENCY, async (txid, i): Promise<UnminedTx | null> => {
    const bins = masters[i]?.bins;
    if (!bins || bins[BIN.unminedSince] === undefined || bins[BIN.totalExtraRecs] === undefined) return null;
    return {
      txid,
      fee: toInt(bins[BIN.fee]),
      sizeInBytes: toInt(bins[BIN.sizeInBytes]),
      parentTxids: await parentsOf(ctx, txid, bins),
      createdAt: toInt(bins[BIN.createdAt]),
      locked: Boolean(bins[BIN.locked]),
      conflicting: Boolean(bins[BIN.conflicting]),
    };
  });
  const result: UnminedIterationPage = { txs: txs.filter((t): t is UnminedTx => t !== null) };
  if (fixed.cursor) result.cursor = fixed.cursor;
  return result;
}

/** Unique parent txids: the first 32 bytes of each stored input, or the inputs of the `.tx` blob of an external tx. */
async function parentsOf(ctx: StoreContext, txid: string, bins: Record<string, BinValue>): Promise<string[]> {
  let prevTxids: Buffer[];
  if (!bins[BIN.external]) {
    prevTxids = ((bins[BIN.inputs] as BinValue[] | undefined) ?? [])
      .filter((i): i is Buffer => Buffer.isBuffer(i) && i.length >= 36)
      .map((i) => i.subarray(0, 32));
  } else {
    let blob;
    try {
      blob = await ctx.blobs.get(txid, 'tx');
    } catch (err) {
      throw storageError('reading the transaction blob failed', err, { txid });
    }
    prevTxids = blob ? parseTx(blob).inputs.map((i) => i.prevTxid) : [];
  }
  return [...new Set(prevTxids.map((p) => txidToHex(p)))];
}
