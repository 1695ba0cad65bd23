/**
 * Cursors of the unmined query. The engine's paging state is large on Aerospike (the saved query covers all 4096
 * partitions: tens of kilobytes), too large for a URL query parameter or API Gateway's 10 KB request line. The store
 * keeps it in a cursor record with a TTL and hands out the record's 16-byte id as 32 hex characters. A cursor is
 * tied to its query's cutoff.
 *
 * Aerospike's query pages are not repeatable: the same saved state run twice returns different records. So the
 * first read of a cursor stores the page it produced (txids and the next cursor) in the cursor record, and every
 * later read of that cursor (a retried request) returns exactly that page: paging, retries included, returns every
 * txid of a stable set once.
 */
import { randomBytes } from 'crypto';
import { BIN } from '../domain/bins';
import { InvalidArgumentError } from '../domain/errors';
import type { Bins } from '../engine/port';
import { txidToBytes, txidToHex } from '../domain/txid';
import { unminedCursorKey } from '../domain/keys';
import type { StoreContext } from './context';
import type { UnminedPage } from './types';
import { isEngineError, storageError } from './udf-call';

/** Seconds a cursor stays valid. */
export const UNMINED_CURSOR_TTL_SECONDS = 3600;

/** A cursor's record: the engine state of its page, and the page once it was read. */
export interface UnminedCursorState {
  engineCursor: string;
  generation: number;
  /** the page this cursor produced on its first read, and the limit it was read with */
  page?: UnminedPage;
  limit?: number;
}

function keyOf(cursor: string) {
  return unminedCursorKey(Buffer.from(cursor, 'hex'));
}

async function readRecord(ctx: StoreContext, cursor: string) {
  try {
    return await ctx.engine.get(keyOf(cursor));
  } catch (err) {
    throw storageError('reading the unmined cursor failed', err);
  }
}

function storedPage(bins: Record<string, unknown>): UnminedPage | undefined {
  const ids = bins.pageTxids;
  if (!Buffer.isBuffer(ids)) return undefined;
  const txids: string[] = [];
  for (let i = 0; i + 32 <= ids.length; i += 32) txids.push(txidToHex(ids.subarray(i, i + 32)));
  const next = bins.pageNext;
  return typeof next === 'string' && next !== '' ? { txids, cursor: next } : { txids };
}

/** The state behind a cursor handed out for the same cutoff; INVALID_ARGUMENT for anything else. */
export async function resolveUnminedCursor(
  ctx: StoreContext,
  cursor: string,
  cutoff: number,
): Promise<UnminedCursorState> {
  if (!/^[0-9a-f]{32}$/.test(cursor)) {
    throw new InvalidArgumentError('cursor', 'expected the cursor of the previous page (32 hex characters)');
  }
  const record = await readRecord(ctx, cursor);
  const state = record?.bins.engineCursor;
  if (!record || typeof state !== 'string') {
    throw new InvalidArgumentError(
      'cursor',
      `not a cursor returned by a previous page, or expired (cursors live ${UNMINED_CURSOR_TTL_SECONDS} s)`,
    );
  }
  if (record.bins.cutoff !== cutoff) {
    throw new InvalidArgumentError(
      'cursor',
      `this cursor belongs to a query with cutoff ${String(record.bins.cutoff)}`,
    );
  }
  const page = storedPage(record.bins);
  const limit = typeof record.bins.pageLimit === 'number' ? record.bins.pageLimit : undefined;
  return { engineCursor: state, generation: record.generation, ...(page ? { page, limit } : {}) };
}

/** Stores the engine's paging state; answers the cursor for the next page. */
export async function saveUnminedCursor(ctx: StoreContext, engineCursor: string, cutoff: number): Promise<string> {
  const id = randomBytes(16);
  try {
    await ctx.engine.create(unminedCursorKey(id), { engineCursor, cutoff }, { ttl: UNMINED_CURSOR_TTL_SECONDS });
  } catch (err) {
    throw storageError('saving the unmined cursor failed', err);
  }
  return id.toString('hex');
}

/**
 * Records the page a cursor produced on its first read. Two first reads racing (a request and its retry): the
 * first to write wins (generation check) and the other answers the winner's page, so both callers see one page.
 */
export async function keepUnminedPage(
  ctx: StoreContext,
  cursor: string,
  state: UnminedCursorState,
  page: UnminedPage,
  limit: number,
): Promise<UnminedPage> {
  const bins = {
    pageTxids: Buffer.concat(page.txids.map((t) => txidToBytes(t))),
    pageNext: page.cursor ?? '',
    pageLimit: limit,
  };
  try {
    await ctx.engine.update(keyOf(cursor), bins, { generation: state.generation });
    return page;
  } catch (err) {
    if (!isEngineError(err, 'GENERATION_MISMATCH')) throw storageError('saving the unmined page failed', err);
  }
  const record = await readRecord(ctx, cursor);
  const kept = record ? storedPage(record.bins) : undefined;
  if (!kept) throw storageError('saving the unmined page failed', new Error('the cursor record changed'));
  return kept;
}

/**
 * One page of the unminedSince index (unminedSince from 0 to `max`): the masters only (a pagination record has no
 * totalExtraRecs), each with its txid from the txID bin (a query may answer a record by its digest alone) and the
 * `bins` asked for; the engine's paging state for the next page.
 */
export async function unminedIndexPage(
  ctx: StoreContext,
  max: number,
  bins: string[],
  limit: number,
  engineCursor?: string,
): Promise<{ masters: { txid: Buffer; bins: Bins }[]; cursor?: string }> {
  let page;
  try {
    page = await ctx.engine.queryRange({
      bin: 'unminedSince',
      min: 0,
      max,
      bins: [BIN.txID, ...bins, BIN.totalExtraRecs],
      limit,
      cursor: engineCursor,
    });
  } catch (err) {
    throw storageError('querying unmined transactions failed', err);
  }
  const masters = page.records
    .filter((r) => r.bins[BIN.totalExtraRecs] !== undefined)
    .map((r) => ({
      txid: Buffer.isBuffer(r.bins[BIN.txID]) ? (r.bins[BIN.txID] as Buffer) : r.key.subarray(0, 32),
      bins: r.bins,
    }));
  return { masters, cursor: page.cursor };
}
