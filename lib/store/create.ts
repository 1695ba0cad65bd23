/**
 * Create steps (docs/operations.md; create-many.ts runs them): one record, or the two-phase multi-record protocol (lock record -> blob ->
 * all records with `creating` -> clear `creating` on pagination records, then the master -> release the lock).
 */
import { hostname } from 'os';
import type { Bins } from '../engine/port';
import { BIN } from '../domain/bins';
import { InvalidArgumentError, TxExistsError, type UtxoStoreError } from '../domain/errors';
import { lockKey, masterKey, paginationKey } from '../domain/keys';
import { decodeOutputsBlob, encodeOutputsBlob } from '../domain/outputs-blob';
import { parseTx, type ParsedTx } from '../domain/tx';
import { BlobConflictError } from '../blob/port';
import { optionalBoolArg, optionalIntArg } from './args';
import { callUdfChunked } from './batch';
import type { StoreContext } from './context';
import type { RecordPlan } from './records';
import { SignalBuffer } from './signals';
import type { CreateOptions, MinedBlock } from './types';
import { callUdf, callUdfBatch, isEngineError, storageError } from './udf-call';

export const LOCK_TYPE = 'tx_creation';

/** Lock record TTL: min(30 + 2 x records, 300) seconds. */
export function lockTtl(records: number): number {
  return Math.min(30 + 2 * records, 300);
}

export function minedBlocksArg(value: unknown): MinedBlock[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidArgumentError('minedBlocks', 'expected a list');
  return value.map((m: Partial<MinedBlock>, i) => ({
    blockId: optionalIntArg(m?.blockId, `minedBlocks[${i}].blockId`) ?? missing(`minedBlocks[${i}].blockId`),
    blockHeight:
      optionalIntArg(m?.blockHeight, `minedBlocks[${i}].blockHeight`) ?? missing(`minedBlocks[${i}].blockHeight`),
    subtreeIdx:
      optionalIntArg(m?.subtreeIdx, `minedBlocks[${i}].subtreeIdx`) ?? missing(`minedBlocks[${i}].subtreeIdx`),
  }));
}

function missing(field: string): never {
  throw new InvalidArgumentError(field, 'required');
}

export function parseForCreate(tx: string | Buffer, options: CreateOptions): { parsed: ParsedTx; isCoinbase: boolean } {
  const parsed = parseTx(tx, 'tx');
  const claimed = optionalBoolArg(options.isCoinbase, 'isCoinbase');
  if (claimed === true && !parsed.isCoinbase) {
    throw new InvalidArgumentError('isCoinbase', 'the tx is not a coinbase (one input spending the null outpoint)');
  }
  const isCoinbase = parsed.isCoinbase;
  if (parsed.outputs.length === 0)
    throw new InvalidArgumentError('tx', 'a transaction without outputs cannot be stored');
  if (parsed.inputs.length > 0 && !parsed.isExtended && !isCoinbase) {
    throw new InvalidArgumentError('tx', 'extended format (EF, BIP-239) is required for a transaction with inputs');
  }
  return { parsed, isCoinbase };
}

export async function putBlob(ctx: StoreContext, txidHex: string, plan: RecordPlan): Promise<void> {
  if (!plan.blob) return;
  try {
    await ctx.blobs.put(txidHex, plan.blob.kind, plan.blob.data);
  } catch (err) {
    if (err instanceof BlobConflictError) {
      if (await isEarlierOutputsBlob(ctx, txidHex, plan.blob)) return;
      throw new TxExistsError(txidHex);
    }
    throw storageError(`writing the ${plan.blob.kind} blob failed`, err, { txid: txidHex });
  }
}

/**
 * An `.outputs` blob holds the creation height: a retry at another height (after a crash that left the blob but no
 * record) finds the earlier attempt's blob. Same txid, coinbase flag and outputs -> it is this tx's blob; keep it.
 */
async function isEarlierOutputsBlob(
  ctx: StoreContext,
  txidHex: string,
  blob: { kind: string; data: Buffer },
): Promise<boolean> {
  if (blob.kind !== 'outputs') return false;
  let existing;
  try {
    existing = await ctx.blobs.get(txidHex, 'outputs');
  } catch (err) {
    throw storageError('reading the existing outputs blob failed', err, { txid: txidHex });
  }
  if (existing === null) return false;
  // equal once the earlier attempt's height is replaced by this one's
  let earlier;
  try {
    earlier = decodeOutputsBlob(existing);
  } catch {
    return false;
  }
  const { height } = decodeOutputsBlob(blob.data);
  return encodeOutputsBlob({ ...earlier, height }).equals(blob.data);
}

export async function createSingle(
  ctx: StoreContext,
  key: Buffer,
  bins: Bins,
  txidHex: string,
): Promise<'ok' | 'too-big'> {
  try {
    await ctx.engine.create(key, bins);
    return 'ok';
  } catch (err) {
    if (isEngineError(err, 'RECORD_EXISTS')) throw new TxExistsError(txidHex);
    if (isEngineError(err, 'RECORD_TOO_BIG')) return 'too-big';
    throw storageError('creating the record failed', err, { txid: txidHex });
  }
}

/** Create-only; an existing record (from an earlier attempt) counts as done. */
async function createIfMissing(ctx: StoreContext, key: Buffer, bins: Bins, txidHex: string): Promise<void> {
  try {
    await ctx.engine.create(key, bins);
  } catch (err) {
    if (isEngineError(err, 'RECORD_EXISTS')) return;
    throw storageError('creating a record of a multi-record transaction failed', err, { txid: txidHex });
  }
}

export async function createPaginated(
  ctx: StoreContext,
  parsed: ParsedTx,
  plan: RecordPlan,
  height: number,
): Promise<void> {
  const txidHex = parsed.txidHex;
  const master = masterKey(parsed.txid);
  let existing;
  try {
    existing = await ctx.engine.get(master, [BIN.creating]);
  } catch (err) {
    throw storageError('reading the master record failed', err, { txid: txidHex });
  }
  if (existing && !existing.bins[BIN.creating]) throw new TxExistsError(txidHex);

  const lock = lockKey(parsed.txid);
  const records = plan.records.length;
  try {
    await ctx.engine.create(
      lock,
      {
        [BIN.lockCreatedAt]: ctx.now(),
        [BIN.lockType]: LOCK_TYPE,
        [BIN.lockProcessId]: process.pid,
        [BIN.lockHostname]: hostname(),
        [BIN.lockExpectedRecs]: records,
      },
      { ttl: lockTtl(records) },
    );
  } catch (err) {
    if (isEngineError(err, 'RECORD_EXISTS')) throw new TxExistsError(txidHex);
    throw storageError('taking the creation lock failed', err, { txid: txidHex });
  }

  try {
    await putBlob(ctx, txidHex, plan);
    // pagination records first: an existing master implies every record exists
    for (let n = 1; n < records; n++)
      await createIfMissing(ctx, paginationKey(parsed.txid, n), plan.records[n], txidHex);
    await createIfMissing(ctx, master, plan.records[0], txidHex);
    await finishCreating(ctx, parsed.txid, txidHex, records - 1, height);
  } finally {
    try {
      await ctx.engine.remove(lock);
    } catch {
      // the lock expires by its TTL
    }
  }
}

/**
 * Phase 2: clears `creating` on the pagination records, then on the master (the commit marker). A failure here
 * still means the tx is stored: a CREATING signal asks the reconciler to finish, and retry or setMined also do.
 */
export async function finishCreating(
  ctx: StoreContext,
  txid: Buffer,
  txidHex: string,
  extraRecords: number,
  height: number,
): Promise<boolean> {
  const signals = new SignalBuffer();
  const R = ctx.settings.blockHeightRetention;
  try {
    const pages = [];
    for (let n = 1; n <= extraRecords; n++)
      pages.push({ key: paginationKey(txid, n), fn: 'clearCreating' as const, args: [height, R] });
    const results = await callUdfBatch(ctx, pages);
    for (const r of results) {
      if (!r.ok) throw r.error;
      if (r.response.status !== 'OK') throw new Error(r.response.message ?? r.response.errorCode);
      signals.addFrom(txidHex, r.response, height);
    }
    const response = await callUdf(ctx, masterKey(txid), 'clearCreating', [height, R], { txid: txidHex });
    if (response.status !== 'OK') throw new Error(response.message ?? response.errorCode);
    signals.addFrom(txidHex, response, height);
    await signals.flush(ctx);
    return true;
  } catch {
    try {
      signals.add(txidHex, 'CREATING', height);
      await signals.flush(ctx);
    } catch {
      // nothing more to do here: retry and setMined finish the create
    }
    return false;
  }
}

/** Registers the child again only when the stored record is itself conflicting (registration is idempotent). */
export async function registerExistingConflicting(ctx: StoreContext, parsed: ParsedTx): Promise<void> {
  let existing;
  try {
    existing = await ctx.engine.get(masterKey(parsed.txid), [BIN.conflicting]);
  } catch (err) {
    throw storageError('reading the existing conflicting tx failed', err, { txid: parsed.txidHex });
  }
  if (existing?.bins[BIN.conflicting]) await registerConflictingChild(ctx, parsed);
}

/** A conflicting tx is registered in each parent's `conflictingCs` (a missing parent is skipped). */
export async function registerConflictingChild(ctx: StoreContext, parsed: ParsedTx): Promise<void> {
  const [error] = await registerConflictingChildren(ctx, [parsed]);
  if (error) throw error;
}

/** registerConflictingChild for many txs in one chunked engine batch; per tx its first error, or undefined. */
export async function registerConflictingChildren(
  ctx: StoreContext,
  txs: ParsedTx[],
): Promise<(UtxoStoreError | undefined)[]> {
  const calls = txs.flatMap((parsed, t) => {
    const parents = new Map<string, Buffer>();
    for (const input of parsed.inputs) parents.set(input.prevTxidHex, input.prevTxid);
    return [...parents.values()].map((p) => ({
      t,
      key: masterKey(p),
      fn: 'addConflictingChild' as const,
      args: [parsed.txid],
    }));
  });
  const results = await callUdfChunked(ctx, calls);
  const errors: (UtxoStoreError | undefined)[] = txs.map(() => undefined);
  results.forEach((r, n) => {
    if (!r.ok) errors[calls[n].t] ??= r.error;
  });
  return errors;
}
