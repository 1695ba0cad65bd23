/**
 * Reads (docs/operations.md): get (bins, `tx` from the record or the blob, `utxos` across pagination records),
 * getSpend (the spendability of one output) and the unmined query.
 */
import type { BinValue, EngineRecord } from '../engine/port';
import { BIN, RECORD_BINS } from '../domain/bins';
import { InvalidArgumentError, StorageError, TxNotFoundError } from '../domain/errors';
import { locateOutput, masterKey, paginationKey, recordKey } from '../domain/keys';
import { decodeOutputsBlob } from '../domain/outputs-blob';
import { decodeSlot } from '../domain/slots';
import { assembleTx, serializeOutput } from '../domain/tx';
import { txidOf, txidToHex } from '../domain/txid';
import { hashArg, intArg, listArg, optionalIntArg, txidArg } from './args';
import type { StoreContext } from './context';
import { spenderOf } from './spend-items';
import { keepUnminedPage, resolveUnminedCursor, saveUnminedCursor } from './unmined-cursor';
import {
  DEFAULT_GET_FIELDS,
  type SpendStatus,
  type TxView,
  type UnminedPage,
  type UnminedQuery,
  type UtxoView,
} from './types';
import { storageError } from './udf-call';
import { binView, slotView } from './view';

function toInt(v: BinValue | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

async function read(
  ctx: StoreContext,
  key: Buffer,
  bins: string[] | undefined,
  txid: string,
): Promise<EngineRecord | null> {
  try {
    return await ctx.engine.get(key, bins);
  } catch (err) {
    throw storageError('reading the record failed', err, { txid });
  }
}

async function readPages(ctx: StoreContext, txid: Buffer, count: number, bins: string[], txidHex: string) {
  if (count === 0) return [];
  const keys = [];
  for (let n = 1; n <= count; n++) keys.push(paginationKey(txid, n));
  try {
    return await ctx.engine.batchGet(keys, bins);
  } catch (err) {
    throw storageError('reading the pagination records failed', err, { txid: txidHex });
  }
}

function validateFields(fields: unknown): string[] {
  if (fields === undefined) return [...DEFAULT_GET_FIELDS];
  const list = listArg<unknown>(fields, 'fields', true);
  for (const f of list) {
    if (typeof f !== 'string' || (f !== 'tx' && f !== 'utxos' && !RECORD_BINS.includes(f))) {
      throw new InvalidArgumentError('fields', `unknown field ${JSON.stringify(f)}`);
    }
  }
  return [...new Set(list as string[])];
}

export async function get(ctx: StoreContext, txidValue: string, fieldsValue?: string[]): Promise<TxView> {
  const txid = txidArg(txidValue, 'txid');
  const txidHex = txidToHex(txid);
  const fields = validateFields(fieldsValue);
  const wantTx = fields.includes('tx');
  const wantUtxos = fields.includes('utxos');
  const bins = new Set(fields.filter((f) => f !== 'tx'));
  if (wantTx)
    [BIN.external, BIN.inputs, BIN.outputs, BIN.version, BIN.locktime, BIN.isCoinbase].forEach((b) => bins.add(b));
  if (wantUtxos) [BIN.totalExtraRecs, BIN.totalUtxos].forEach((b) => bins.add(b));
  const master = await read(ctx, masterKey(txid), [...bins], txidHex);
  if (!master) throw new TxNotFoundError(txidHex);

  const view: TxView = { txid: txidHex };
  for (const f of fields) {
    if (f === 'tx' || f === 'utxos') continue;
    const value = binView(f, master.bins[f]);
    if (value !== undefined) view[f] = value;
  }
  if (wantTx) view.tx = await txHex(ctx, master, txidHex);
  if (wantUtxos) view.utxos = await utxosOf(ctx, txid, txidHex, master);
  return view;
}

async function txHex(ctx: StoreContext, master: EngineRecord, txidHex: string): Promise<string> {
  const bins = master.bins;
  if (!bins[BIN.external]) {
    const inputs = (bins[BIN.inputs] as Buffer[] | undefined) ?? [];
    const outputs = (bins[BIN.outputs] as Buffer[] | undefined) ?? [];
    const extended = inputs.length > 0 && !bins[BIN.isCoinbase];
    return assembleTx({
      version: toInt(bins[BIN.version]) ?? 1,
      locktime: toInt(bins[BIN.locktime]) ?? 0,
      inputs,
      outputs,
      extended,
    }).toString('hex');
  }
  let rebuilt: Buffer | undefined;
  try {
    const tx = await ctx.blobs.get(txidHex, 'tx');
    if (tx) return tx.toString('hex');
    const outputs = await ctx.blobs.get(txidHex, 'outputs');
    if (outputs) {
      const decoded = decodeOutputsBlob(outputs);
      rebuilt = assembleTx({
        version: toInt(bins[BIN.version]) ?? 1,
        locktime: toInt(bins[BIN.locktime]) ?? 0,
        inputs: [],
        outputs: decoded.outputs.map((o) => serializeOutput(o)),
        extended: false,
      });
    }
  } catch (err) {
    throw storageError('reading the transaction blob failed', err, { txid: txidHex });
  }
  if (rebuilt) {
    // the .outputs blob holds only the stored outputs: a tx with an output that has no slot cannot be rebuilt
    if (txidToHex(txidOf(rebuilt)) === txidHex) return rebuilt.toString('hex');
    throw new StorageError(
      `transaction ${txidHex} cannot be rebuilt from its .outputs blob (it has outputs that are not stored)`,
      { txid: txidHex },
    );
  }
  throw new StorageError(`the blob of external transaction ${txidHex} is missing`, { txid: txidHex });
}

async function utxosOf(
  ctx: StoreContext,
  txid: Buffer,
  txidHex: string,
  master: EngineRecord,
): Promise<(UtxoView | null)[]> {
  const extra = toInt(master.bins[BIN.totalExtraRecs]) ?? 0;
  const total = toInt(master.bins[BIN.totalUtxos]);
  const pages = await readPages(ctx, txid, extra, [BIN.utxos], txidHex);
  const slots: BinValue[] = [...((master.bins[BIN.utxos] as BinValue[] | undefined) ?? [])];
  const B = ctx.settings.utxoBatchSize;
  pages.forEach((page, i) => {
    const list = (page?.bins[BIN.utxos] as BinValue[] | undefined) ?? [];
    const base = (i + 1) * B;
    list.forEach((slot, offset) => (slots[base + offset] = slot));
  });
  const length = total ?? slots.length;
  const out: (UtxoView | null)[] = [];
  for (let vout = 0; vout < length; vout++) out.push(slotView(slots[vout] ?? null));
  return out;
}

/** Spendability of one output at H + 1, as a spend would see it. */
export async function getSpend(
  ctx: StoreContext,
  ref: { txid: string; vout: number; utxoHash?: string },
): Promise<SpendStatus> {
  if (ref === null || typeof ref !== 'object') throw new InvalidArgumentError('ref', 'expected an object');
  const txid = txidArg(ref.txid, 'txid');
  const txidHex = txidToHex(txid);
  const vout = intArg(ref.vout, 'vout');
  const expected = ref.utxoHash === undefined ? undefined : hashArg(ref.utxoHash, 'utxoHash');
  const { recordNumber, offset } = locateOutput(vout, ctx.settings.utxoBatchSize);
  const flags = [BIN.creating, BIN.conflicting, BIN.locked, BIN.spendingHeight, BIN.deleting];
  const keys = [masterKey(txid)];
  if (recordNumber > 0) keys.push(recordKey(txid, recordNumber));
  let records: (EngineRecord | null)[];
  try {
    records = await ctx.engine.batchGet(keys, [...flags, BIN.utxos, BIN.utxoSpendableIn]);
  } catch (err) {
    throw storageError('reading the record failed', err, { txid: txidHex, vout });
  }
  const master = records[0];
  const record = records[records.length - 1];
  if (!master || !record) return { status: 'NOT_FOUND' };
  const slot = ((record.bins[BIN.utxos] as BinValue[] | undefined) ?? [])[offset];
  if (!Buffer.isBuffer(slot)) return { status: 'NOT_FOUND' };
  const decoded = decodeSlot(slot);
  if (decoded.state === 'none') return { status: 'NOT_FOUND' };
  if (expected && !slot.subarray(0, 32).equals(expected)) return { status: 'NOT_FOUND' };
  if (decoded.state === 'spent') return { status: 'SPENT', ...spenderOf(slot.subarray(32, 68)) };
  if (decoded.state === 'frozen') return { status: 'FROZEN' };

  const height = (await ctx.tip()) + 1;
  const spendingHeight = toInt(master.bins[BIN.spendingHeight]);
  const spendableIn = (record.bins[BIN.utxoSpendableIn] ?? {}) as Record<string, BinValue>;
  const reassignedAt = toInt(spendableIn[String(offset)]);
  const spendableAt = Math.max(spendingHeight ?? 0, reassignedAt ?? 0) || undefined;
  const withAt = (s: SpendStatus): SpendStatus => (spendableAt !== undefined ? { ...s, spendableAt } : s);
  if (master.bins[BIN.creating] || record.bins[BIN.creating]) return withAt({ status: 'CREATING' });
  if (master.bins[BIN.deleting]) return { status: 'NOT_FOUND' };
  if (master.bins[BIN.conflicting]) return withAt({ status: 'CONFLICTING' });
  if (master.bins[BIN.locked]) return withAt({ status: 'LOCKED' });
  if (spendingHeight !== undefined && spendingHeight > height) return withAt({ status: 'IMMATURE' });
  if (reassignedAt !== undefined && reassignedAt > height) return withAt({ status: 'FROZEN' });
  return withAt({ status: 'OK' });
}

/** Page size of the unmined query when the caller gives none. */
export const DEFAULT_UNMINED_LIMIT = 1000;

/**
 * Masters with unminedSince <= cutoff, paged by the engine's cursor (kept in a cursor record: unmined-cursor.ts). A
 * cursor's page is fixed by its first read: reading it again returns the same txids and next cursor.
 */
export async function queryUnmined(ctx: StoreContext, query: UnminedQuery): Promise<UnminedPage> {
  if (query === null || typeof query !== 'object') throw new InvalidArgumentError('query', 'expected an object');
  const cutoff = intArg(query.cutoff, 'cutoff');
  const limit = optionalIntArg(query.limit, 'limit', 1, 10000) ?? DEFAULT_UNMINED_LIMIT;
  if (query.cursor !== undefined && typeof query.cursor !== 'string') {
    throw new InvalidArgumentError('cursor', 'expected the cursor of the previous page');
  }
  if (query.cursor === undefined) return unminedPage(ctx, cutoff, limit);
  const state = await resolveUnminedCursor(ctx, query.cursor, cutoff);
  if (state.page) {
    if (state.limit !== limit) {
      throw new InvalidArgumentError('limit', `this cursor's page was read with limit ${String(state.limit)}`);
    }
    return state.page;
  }
  const page = await unminedPage(ctx, cutoff, limit, state.engineCursor);
  return keepUnminedPage(ctx, query.cursor, state, page, limit);
}

/** One page of the engine's range query, its next paging state saved in a new cursor record. */
async function unminedPage(ctx: StoreContext, cutoff: number, limit: number, engineCursor?: string) {
  let page;
  try {
    page = await ctx.engine.queryRange({
      bin: 'unminedSince',
      min: 0,
      max: cutoff,
      bins: [BIN.txID, BIN.totalExtraRecs],
      limit,
      cursor: engineCursor,
    });
  } catch (err) {
    throw storageError('querying unmined transactions failed', err);
  }
  const txids = page.records
    .filter((r) => r.bins[BIN.totalExtraRecs] !== undefined)
    .map((r) => txidToHex(Buffer.isBuffer(r.bins[BIN.txID]) ? (r.bins[BIN.txID] as Buffer) : r.key));
  return page.cursor ? { txids, cursor: await saveUnminedCursor(ctx, page.cursor, cutoff) } : { txids };
}
