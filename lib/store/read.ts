/**
 * Reads (docs/operations.md): get (bins, `tx` from the record or the blob, `utxos` across pagination records),
 * and the unmined query (getSpend: utxo-status.ts).
 */
import type { BinValue, EngineRecord } from '../engine/port';
import { BIN, RECORD_BINS } from '../domain/bins';
import {
  InvalidArgumentError,
  StorageError,
  TooManyOutputsError,
  TxNotFoundError,
  TxsTooLargeError,
} from '../domain/errors';
import { masterKey, paginationKey } from '../domain/keys';
import { decodeOutputsBlob } from '../domain/outputs-blob';
import { assembleTx, serializeOutput } from '../domain/tx';
import { txidOf, txidToHex } from '../domain/txid';
import { intArg, listArg, optionalIntArg, txidArg } from './args';
import { asItemError, inChunks, settleItem, unwrap, type ItemResult } from './batch';
import type { StoreContext } from './context';
import { keepUnminedPage, resolveUnminedCursor, saveUnminedCursor, unminedIndexPage } from './unmined-cursor';
import { DEFAULT_GET_FIELDS, type TxView, type UnminedPage, type UnminedQuery, type UtxoView } from './types';
import { storageError } from './udf-call';
import { binView, slotView } from './view';

function toInt(v: BinValue | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
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

/** What an answer's size is measured from: each master's output count and tx size. */
const SIZE_BINS = [BIN.totalUtxos, BIN.extendedSize, BIN.sizeInBytes];

/** The bins a view of `fields` reads from the master. */
function binsFor(fields: string[]): string[] {
  const bins = new Set(fields.filter((f) => f !== 'tx'));
  if (fields.includes('tx'))
    [BIN.external, BIN.inputs, BIN.outputs, BIN.version, BIN.locktime, BIN.isCoinbase, ...SIZE_BINS].forEach((b) =>
      bins.add(b),
    );
  if (fields.includes('utxos')) [BIN.totalExtraRecs, BIN.totalUtxos].forEach((b) => bins.add(b));
  return [...bins];
}

/**
 * get of many txids (Teranode's BatchDecorate): the masters in one chunked engine batch read, the pagination
 * records of every tx asking for `utxos` in another, blobs of external txs asking for `tx` in parallel. Each txid
 * succeeds or fails (TX_NOT_FOUND, INVALID_ARGUMENT, STORAGE_ERROR) on its own.
 */
export async function getMany(
  ctx: StoreContext,
  txidsValue: string[],
  fieldsValue?: string[],
): Promise<ItemResult<TxView>[]> {
  const list = listArg<unknown>(txidsValue, 'txids');
  const fields = validateFields(fieldsValue);
  const ids = list.map((t) => {
    try {
      const bytes = txidArg(t, 'txid');
      return { bytes, hex: txidToHex(bytes) };
    } catch (err) {
      return asItemError(err);
    }
  });
  const valid = ids.filter((id): id is { bytes: Buffer; hex: string } => !(id instanceof Error));
  const read = (bins: string[]) =>
    inChunks(ctx, valid, (part) =>
      ctx.engine.batchGet(
        part.map((id) => masterKey(id.bytes)),
        bins,
      ),
    );
  // a master asked for `tx` or `utxos` holds up to a record's size (the tx, B slots): many of them are measured
  // first from their counts alone (one more batch read), one is measured after its read
  const heavy = fields.includes('tx') || fields.includes('utxos');
  let masters: (EngineRecord | null)[];
  try {
    if (heavy && valid.length > 1) checkAnswer(ctx, fields, await read(SIZE_BINS));
    masters = await read(binsFor(fields));
  } catch (err) {
    if (err instanceof TooManyOutputsError || err instanceof TxsTooLargeError) throw err;
    const error = storageError('reading the record failed', err);
    return ids.map((id) => ({ ok: false, error: id instanceof Error ? id : error }));
  }
  if (heavy && valid.length <= 1) checkAnswer(ctx, fields, masters);
  const found = new Map(valid.map((id, i) => [id.hex, masters[i]]));
  const utxos = fields.includes('utxos') ? await utxosOfMany(ctx, valid, masters) : undefined;
  return Promise.all(
    ids.map(async (id): Promise<ItemResult<TxView>> => {
      if (id instanceof Error) return { ok: false, error: id };
      const master = found.get(id.hex);
      if (!master) return { ok: false, error: new TxNotFoundError(id.hex) };
      return settleItem(async () => {
        const view: TxView = { txid: id.hex };
        for (const f of fields) {
          if (f === 'tx' || f === 'utxos') continue;
          const value = binView(f, master.bins[f]);
          if (value !== undefined) view[f] = value;
        }
        if (fields.includes('tx')) view.tx = await txHex(ctx, master, id.hex);
        if (utxos) {
          const u = utxos.get(id.hex);
          if (u instanceof Error) throw u;
          view.utxos = u;
        }
        return view;
      });
    }),
  );
}

/**
 * The answer's size, from what the masters say, before it is built (security review N5: 8 copies of a
 * 330,000-output tx grew the process to 1.27 GB before the answer's size was checked): with `utxos` the outputs
 * (totalUtxos) against MAX_GET_OUTPUTS, before a pagination record is read or a view built; with `tx` the txs' bytes
 * (extendedSize: the EF form, the largest a tx is answered in) against MAX_GET_TX_BYTES, before a blob is read or a
 * tx assembled. A txid given twice counts twice: each copy is answered in full.
 */
function checkAnswer(ctx: StoreContext, fields: string[], masters: (EngineRecord | null)[]): void {
  const { maxGetOutputs, maxGetTxBytes } = ctx.settings;
  let outputs = 0;
  let bytes = 0;
  for (const m of masters) {
    if (!m) continue;
    outputs += toInt(m.bins[BIN.totalUtxos]) ?? 0;
    bytes += toInt(m.bins[BIN.extendedSize]) ?? toInt(m.bins[BIN.sizeInBytes]) ?? 0;
  }
  if (fields.includes('utxos') && maxGetOutputs !== undefined && outputs > maxGetOutputs)
    throw new TooManyOutputsError(outputs, maxGetOutputs);
  if (fields.includes('tx') && maxGetTxBytes !== undefined && bytes > maxGetTxBytes)
    throw new TxsTooLargeError(bytes, maxGetTxBytes);
}

export async function get(ctx: StoreContext, txid: string, fields?: string[]): Promise<TxView> {
  const [result] = await getMany(ctx, [txid], fields);
  return unwrap(result);
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

/** Every output's slot view of each found tx: the pagination records of all of them in one chunked batch read. */
async function utxosOfMany(
  ctx: StoreContext,
  ids: { bytes: Buffer; hex: string }[],
  masters: (EngineRecord | null)[],
): Promise<Map<string, (UtxoView | null)[] | Error>> {
  const pageKeys: Buffer[] = [];
  const pageRefs: { hex: string; n: number }[] = [];
  const pagesOf = new Map<string, number[]>();
  ids.forEach((id, i) => {
    const extra = toInt(masters[i]?.bins[BIN.totalExtraRecs]) ?? 0;
    for (let n = 1; n <= extra; n++) {
      pagesOf.set(id.hex, [...(pagesOf.get(id.hex) ?? []), pageKeys.length]);
      pageKeys.push(paginationKey(id.bytes, n));
      pageRefs.push({ hex: id.hex, n });
    }
  });
  const out = new Map<string, (UtxoView | null)[] | Error>();
  let pages: (EngineRecord | null)[] = [];
  try {
    pages = await inChunks(ctx, pageKeys, (part) => ctx.engine.batchGet(part, [BIN.utxos]));
  } catch (err) {
    for (const ref of pageRefs)
      out.set(ref.hex, storageError('reading the pagination records failed', err, { txid: ref.hex }));
  }
  const B = ctx.settings.utxoBatchSize;
  ids.forEach((id, i) => {
    const master = masters[i];
    if (!master || out.has(id.hex)) return;
    const slots: BinValue[] = [...((master.bins[BIN.utxos] as BinValue[] | undefined) ?? [])];
    (pagesOf.get(id.hex) ?? []).forEach((p) => {
      const ref = pageRefs[p];
      const list = (pages[p]?.bins[BIN.utxos] as BinValue[] | undefined) ?? [];
      list.forEach((slot, offset) => (slots[ref.n * B + offset] = slot));
    });
    const length = toInt(master.bins[BIN.totalUtxos]) ?? slots.length;
    const views: (UtxoView | null)[] = [];
    for (let vout = 0; vout < length; vout++) views.push(slotView(slots[vout] ?? null));
    out.set(id.hex, views);
  });
  return out;
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
  const page = await unminedIndexPage(ctx, cutoff, [], limit, engineCursor);
  const txids = page.masters.map((m) => txidToHex(m.txid));
  return page.cursor ? { txids, cursor: await saveUnminedCursor(ctx, page.cursor, cutoff) } : { txids };
}
