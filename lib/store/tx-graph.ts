/**
 * Reading the spend graph around transactions, a batch per level: a tx's inputs (the parent outputs it spends, from
 * the stored `inputs` bin or the `.tx` blob of an external tx), the current state of those parent outputs, and a
 * tx's children (the spenders held in its output slots plus the conflicting children in `conflictingCs`).
 */
import { mapLimited } from '../domain/concurrency';
import type { BinValue, EngineRecord } from '../engine/port';
import { BIN } from '../domain/bins';
import { locateOutput, masterKey, paginationKey, recordKey } from '../domain/keys';
import { decodeSlot } from '../domain/slots';
import { assembleTx, parseTx } from '../domain/tx';
import { txidToHex } from '../domain/txid';
import { utxoHash } from '../domain/utxo-hash';
import type { StoreContext } from './context';
import { storageError } from './udf-call';

export interface TxRef {
  hex: string;
  bytes: Buffer;
}

export interface TxInput {
  parent: TxRef;
  vout: number;
  utxoHash: Buffer;
  vin: number;
}

/** A stored tx as the graph walks need it. */
export interface GraphTx {
  ref: TxRef;
  inputs: TxInput[];
  conflicting: boolean;
  locked: boolean;
}

/** Blob reads in flight at once per call (external txs): a page of 1000 does not open 1000 S3 requests at once. */
export const BLOB_READ_CONCURRENCY = 32;

export function refOf(bytes: Buffer): TxRef {
  return { hex: txidToHex(bytes), bytes };
}

/** A bin's integer (a bigint as a number), 0 when it is absent or not a number. */
export function toInt(v: BinValue | undefined): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return 0;
}

export async function batchRead(
  ctx: StoreContext,
  keys: Buffer[],
  bins: string[],
  what: string,
): Promise<(EngineRecord | null)[]> {
  if (keys.length === 0) return [];
  try {
    return await ctx.engine.batchGet(keys, bins);
  } catch (err) {
    throw storageError(`reading ${what} failed`, err);
  }
}

function inputsOfParsed(inputs: ReturnType<typeof parseTx>['inputs']): TxInput[] {
  return inputs.flatMap((input, vin) =>
    input.lockingScript !== undefined && input.satoshis !== undefined
      ? [
          {
            parent: { hex: input.prevTxidHex, bytes: input.prevTxid },
            vout: input.vout,
            utxoHash: utxoHash(input.prevTxid, input.vout, input.lockingScript, input.satoshis),
            vin,
          },
        ]
      : [],
  );
}

/** The stored txs (null when missing), in order: one batch for the masters, the blobs of external txs alongside. */
export async function loadTxs(ctx: StoreContext, refs: TxRef[]): Promise<(GraphTx | null)[]> {
  const masters = await batchRead(
    ctx,
    refs.map((r) => masterKey(r.bytes)),
    [BIN.external, BIN.inputs, BIN.isCoinbase, BIN.conflicting, BIN.locked, BIN.totalExtraRecs],
    'the transactions',
  );
  return mapLimited(refs, BLOB_READ_CONCURRENCY, async (ref, i): Promise<GraphTx | null> => {
    const bins = masters[i]?.bins;
    if (!bins || bins[BIN.totalExtraRecs] === undefined) return null;
    const base = { ref, conflicting: Boolean(bins[BIN.conflicting]), locked: Boolean(bins[BIN.locked]) };
    if (bins[BIN.isCoinbase]) return { ...base, inputs: [] };
    if (!bins[BIN.external]) {
      const stored = (bins[BIN.inputs] as Buffer[] | undefined) ?? [];
      if (stored.length === 0) return { ...base, inputs: [] };
      const tx = assembleTx({ version: 1, locktime: 0, inputs: stored, outputs: [], extended: true });
      return { ...base, inputs: inputsOfParsed(parseTx(tx).inputs) };
    }
    let blob;
    try {
      blob = await ctx.blobs.get(ref.hex, 'tx');
    } catch (err) {
      throw storageError('reading the transaction blob failed', err, { txid: ref.hex });
    }
    // an external tx without a .tx blob has no inputs (its blob is .outputs)
    return { ...base, inputs: blob ? inputsOfParsed(parseTx(blob).inputs) : [] };
  });
}

export type SlotState =
  | { state: 'missing' }
  | { state: 'unspent' }
  | { state: 'frozen' }
  | { state: 'spent'; spendingData: Buffer; spender: TxRef };

/** The current state of each parent output an input spends (one batch); a hash mismatch counts as missing. */
export async function readInputSlots(ctx: StoreContext, inputs: TxInput[]): Promise<SlotState[]> {
  const B = ctx.settings.utxoBatchSize;
  const located = inputs.map((input) => ({ input, ...locateOutput(input.vout, B) }));
  const records = await batchRead(
    ctx,
    located.map((l) => recordKey(l.input.parent.bytes, l.recordNumber)),
    [BIN.utxos],
    'the parent outputs',
  );
  return located.map((l, i): SlotState => {
    const slots = (records[i]?.bins[BIN.utxos] as BinValue[] | undefined) ?? [];
    const decoded = decodeSlot(slots[l.offset]);
    if (decoded.state === 'none' || !decoded.utxoHash.equals(l.input.utxoHash)) return { state: 'missing' };
    if (decoded.state === 'spent') {
      return {
        state: 'spent',
        spendingData: Buffer.from(decoded.spendingData),
        spender: refOf(Buffer.from(decoded.spendingData.subarray(0, 32))),
      };
    }
    return { state: decoded.state };
  });
}

/**
 * Each tx's children: the spenders of its outputs (every record) and its `conflictingCs`; null for a tx that is not
 * stored. Two batches.
 */
export async function childrenOf(ctx: StoreContext, refs: TxRef[]): Promise<(TxRef[] | null)[]> {
  const masters = await batchRead(
    ctx,
    refs.map((r) => masterKey(r.bytes)),
    [BIN.utxos, BIN.totalExtraRecs, BIN.conflictingCs],
    'the transactions',
  );
  const pageKeys: { owner: number; key: Buffer }[] = [];
  refs.forEach((r, i) => {
    const extra = toInt(masters[i]?.bins[BIN.totalExtraRecs]);
    for (let n = 1; n <= extra; n++) pageKeys.push({ owner: i, key: paginationKey(r.bytes, n) });
  });
  const pages = await batchRead(
    ctx,
    pageKeys.map((p) => p.key),
    [BIN.utxos],
    'the pagination records',
  );
  const children = refs.map(() => new Map<string, TxRef>());
  const addSpenders = (owner: number, record: EngineRecord | null) => {
    for (const slot of (record?.bins[BIN.utxos] as BinValue[] | undefined) ?? []) {
      const decoded = decodeSlot(slot);
      if (decoded.state !== 'spent') continue;
      const child = refOf(Buffer.from(decoded.spendingData.subarray(0, 32)));
      children[owner].set(child.hex, child);
    }
  };
  masters.forEach((m, i) => {
    addSpenders(i, m);
    for (const c of (m?.bins[BIN.conflictingCs] as BinValue[] | undefined) ?? []) {
      if (!Buffer.isBuffer(c) || c.length !== 32) continue;
      const child = refOf(Buffer.from(c));
      children[i].set(child.hex, child);
    }
  });
  pages.forEach((p, n) => addSpenders(pageKeys[n].owner, p));
  return children.map((m, i) => (masters[i] ? [...m.values()] : null));
}

/** Every descendant of the given txs (breadth first, one level per round), excluding the txs in `exclude`. */
export async function descendantsOf(ctx: StoreContext, roots: TxRef[], exclude: Set<string>): Promise<TxRef[]> {
  const seen = new Set<string>([...exclude, ...roots.map((r) => r.hex)]);
  const found: TxRef[] = [];
  let level = roots;
  let isRoot = true;
  while (level.length > 0) {
    const next: TxRef[] = [];
    const kidsOfLevel = await childrenOf(ctx, level);
    kidsOfLevel.forEach((kids, i) => {
      // a child that is not stored (a dangling spender reference) has nothing to mark
      if (kids === null) return;
      if (!isRoot) found.push(level[i]);
      for (const kid of kids) {
        if (seen.has(kid.hex)) continue;
        seen.add(kid.hex);
        next.push(kid);
      }
    });
    isRoot = false;
    level = next;
  }
  return found;
}
