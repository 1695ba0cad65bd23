/**
 * Unmined iteration for block-assembly recovery (Teranode's unmined iterator): every unmined tx with what block
 * assembly needs to reload it (txid, fee, size, parents' txids, createdAt, locked, conflicting), in createdAt order.
 *
 * The first request (no cursor) runs the unminedSince query to its end and keeps the sorted (createdAt, txid) pairs
 * as a snapshot: chunk records of SNAPSHOT_CHUNK entries and a header, all with a TTL. A cursor is the snapshot id and
 * an offset, so a retried request with the same cursor and limit reads the same txids; each page reads the masters
 * afresh (one batch) and lists the snapshot's txs that are still stored and unmined, with their current flags.
 * Limit: the first request reads every unmined tx's master index entry (about 40 bytes each kept in memory); at
 * millions of unmined txs it needs the Lambda's full time budget.
 */
import { randomBytes } from 'crypto';
import type { BinValue, EngineRecord } from '../engine/port';
import { BIN } from '../domain/bins';
import { InvalidArgumentError } from '../domain/errors';
import { masterKey, unminedSnapshotKey } from '../domain/keys';
import { parseTx } from '../domain/tx';
import { txidToHex } from '../domain/txid';
import { optionalIntArg } from './args';
import type { StoreContext } from './context';
import { BLOB_READ_CONCURRENCY, batchRead, mapLimited } from './tx-graph';
import type { UnminedIterationPage, UnminedIterationQuery, UnminedTx } from './types';
import { storageError } from './udf-call';

/** Entries per snapshot chunk record (40 bytes each: createdAt uint64 BE || txid). */
export const SNAPSHOT_CHUNK = 4096;
/** Seconds a snapshot (and so its cursors) stays valid. */
export const UNMINED_SNAPSHOT_TTL_SECONDS = 3600;
export const DEFAULT_ITERATION_LIMIT = 1000;
export const MAX_ITERATION_LIMIT = 10000;
const ENTRY = 40;
const QUERY_PAGE = 10000;
const CURSOR = /^([0-9a-f]{32})-(\d{1,10})$/;

function toInt(v: BinValue | undefined): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return 0;
}

interface Entry {
  createdAt: number;
  txid: Buffer;
}

export async function iterateUnmined(
  ctx: StoreContext,
  query: UnminedIterationQuery = {},
): Promise<UnminedIterationPage> {
  if (query === null || typeof query !== 'object') throw new InvalidArgumentError('query', 'expected an object');
  const limit = optionalIntArg(query.limit, 'limit', 1, MAX_ITERATION_LIMIT) ?? DEFAULT_ITERATION_LIMIT;
  if (query.cursor === undefined) {
    const { id, count } = await takeSnapshot(ctx);
    return page(ctx, id, count, 0, limit);
  }
  const match = typeof query.cursor === 'string' ? CURSOR.exec(query.cursor) : null;
  if (!match) throw new InvalidArgumentError('cursor', 'expected the cursor of the previous page');
  const id = Buffer.from(match[1], 'hex');
  let header: EngineRecord | null;
  try {
    header = await ctx.engine.get(unminedSnapshotKey(id), ['count']);
  } catch (err) {
    throw storageError('reading the unmined snapshot failed', err);
  }
  if (!header) {
    throw new InvalidArgumentError(
      'cursor',
      `not a cursor of a previous page, or expired (cursors live ${UNMINED_SNAPSHOT_TTL_SECONDS} s)`,
    );
  }
  const count = toInt(header.bins.count);
  const offset = Number(match[2]);
  if (offset > count) throw new InvalidArgumentError('cursor', 'offset beyond the end of its snapshot');
  return page(ctx, id, count, offset, limit);
}

async function takeSnapshot(ctx: StoreContext): Promise<{ id: Buffer; count: number }> {
  const entries: Entry[] = [];
  let cursor: string | undefined;
  do {
    let result;
    try {
      result = await ctx.engine.queryRange({
        bin: 'unminedSince',
        min: 0,
        max: 0xffffffff,
        bins: [BIN.txID, BIN.createdAt, BIN.totalExtraRecs],
        limit: QUERY_PAGE,
        cursor,
      });
    } catch (err) {
      throw storageError('querying unmined transactions failed', err);
    }
    for (const r of result.records) {
      // masters only; the txid from the txID bin (a query may answer a record by its digest alone)
      const txid = Buffer.isBuffer(r.bins[BIN.txID]) ? (r.bins[BIN.txID] as Buffer) : r.key;
      if (r.bins[BIN.totalExtraRecs] === undefined || txid.length !== 32) continue;
      entries.push({ createdAt: toInt(r.bins[BIN.createdAt]), txid });
    }
    cursor = result.cursor;
  } while (cursor);
  // a query may return a record twice across pages (records moving while it runs): keep one
  const unique = new Map<string, Entry>();
  for (const e of entries) unique.set(e.txid.toString('hex'), e);
  const sorted = [...unique.values()].sort(
    (a, b) => a.createdAt - b.createdAt || Buffer.compare(Buffer.from(a.txid).reverse(), Buffer.from(b.txid).reverse()),
  );

  const id = randomBytes(16);
  const ttl = UNMINED_SNAPSHOT_TTL_SECONDS;
  try {
    for (let c = 0; c * SNAPSHOT_CHUNK < sorted.length; c++) {
      const chunk = sorted.slice(c * SNAPSHOT_CHUNK, (c + 1) * SNAPSHOT_CHUNK);
      const data = Buffer.alloc(chunk.length * ENTRY);
      chunk.forEach((e, i) => {
        data.writeBigUInt64BE(BigInt(Math.max(0, Math.trunc(e.createdAt))), i * ENTRY);
        e.txid.copy(data, i * ENTRY + 8);
      });
      await ctx.engine.create(unminedSnapshotKey(id, c), { entries: data }, { ttl });
    }
    // the header last: a cursor is only handed out for a complete snapshot
    await ctx.engine.create(unminedSnapshotKey(id), { count: sorted.length }, { ttl });
  } catch (err) {
    throw storageError('saving the unmined snapshot failed', err);
  }
  return { id, count: sorted.length };
}

async function readEntries(ctx: StoreContext, id: Buffer, from: number, to: number): Promise<Entry[]> {
  if (from >= to) return [];
  const first = Math.floor(from / SNAPSHOT_CHUNK);
  const last = Math.floor((to - 1) / SNAPSHOT_CHUNK);
  const keys = [];
  for (let c = first; c <= last; c++) keys.push(unminedSnapshotKey(id, c));
  const chunks = await batchRead(ctx, keys, ['entries'], 'the unmined snapshot');
  const entries: Entry[] = [];
  for (let n = from; n < to; n++) {
    const data = chunks[Math.floor(n / SNAPSHOT_CHUNK) - first]?.bins.entries;
    if (!Buffer.isBuffer(data)) throw storageError('reading the unmined snapshot failed', new Error('a chunk expired'));
    const at = (n % SNAPSHOT_CHUNK) * ENTRY;
    entries.push({ createdAt: Number(data.readBigUInt64BE(at)), txid: Buffer.from(data.subarray(at + 8, at + ENTRY)) });
  }
  return entries;
}

async function page(ctx: StoreContext, id: Buffer, count: number, offset: number, limit: number) {
  const end = Math.min(count, offset + limit);
  const entries = await readEntries(ctx, id, offset, end);
  const masters = await batchRead(
    ctx,
    entries.map((e) => masterKey(e.txid)),
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
  const txs = await mapLimited(entries, BLOB_READ_CONCURRENCY, async (e, i): Promise<UnminedTx | null> => {
    const bins = masters[i]?.bins;
    // mined or deleted since the snapshot
    if (!bins || bins[BIN.unminedSince] === undefined || bins[BIN.totalExtraRecs] === undefined) return null;
    const txid = txidToHex(e.txid);
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
  if (end < count) result.cursor = `${id.toString('hex')}-${end}`;
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
