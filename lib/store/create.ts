/**
 * Create steps (docs/operations.md; create-many.ts runs them): one record, or the two-phase multi-record protocol (lock record -> blob ->
 * all records with `creating` -> clear `creating` on pagination records, then the master -> release the lock).
 */
import { hostname } from 'os';
import type { BatchCreateItem, BatchWriteResult, Bins } from '../engine/port';
import { BIN } from '../domain/bins';
import { InvalidArgumentError, TxExistsError, type UtxoStoreError } from '../domain/errors';
import { lockKey, masterKey, paginationKey } from '../domain/keys';
import { decodeOutputsBlob, encodeOutputsBlob } from '../domain/outputs-blob';
import { parseTx, type ParsedTx } from '../domain/tx';
import { BlobConflictError } from '../blob/port';
import { optionalBoolArg, optionalIntArg } from './args';
import { callUdfChunked, chunk, engineBatchSize, inChunks } from './batch';
import type { StoreContext } from './context';
import type { RecordPlan } from './records';
import { SignalBuffer } from './signals';
import type { CreateOptions, MinedBlock } from './types';
import { isEngineError, storageError } from './udf-call';

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

/** One multi-record tx of a batch: what the two-phase protocol needs, and its outcome. */
export interface PaginatedCreate {
  parsed: ParsedTx;
  plan: RecordPlan;
  height: number;
  error?: UtxoStoreError;
  /** the creation lock is ours (released at the end) */
  locked?: boolean;
}

/**
 * Phase 0 of the two-phase protocol for many txs, in engine batches: one batch read of the masters (a complete one
 * is TX_EXISTS), one batch of lock creates, then the blobs. The txs still without an error go on to writeRecords.
 */
export async function lockPaginated(ctx: StoreContext, txs: PaginatedCreate[]): Promise<void> {
  if (txs.length === 0) return;
  let masters;
  try {
    masters = await inChunks(
      ctx,
      txs.map((t) => masterKey(t.parsed.txid)),
      (part) => ctx.engine.batchGet(part, [BIN.creating]),
    );
  } catch (err) {
    for (const t of txs) t.error = storageError('reading the master record failed', err, { txid: t.parsed.txidHex });
    return;
  }
  txs.forEach((t, i) => {
    if (masters[i] && !masters[i]!.bins[BIN.creating]) t.error = new TxExistsError(t.parsed.txidHex);
  });
  const open = txs.filter((t) => !t.error);
  const locks = await createChunked(
    ctx,
    open.map((t) => ({
      key: lockKey(t.parsed.txid),
      bins: {
        [BIN.lockCreatedAt]: ctx.now(),
        [BIN.lockType]: LOCK_TYPE,
        [BIN.lockProcessId]: process.pid,
        [BIN.lockHostname]: hostname(),
        [BIN.lockExpectedRecs]: t.plan.records.length,
      },
      policy: { ttl: lockTtl(t.plan.records.length) },
    })),
  );
  locks.forEach((r, i) => {
    const t = open[i];
    if (r.ok) t.locked = true;
    else if (r.error.code === 'RECORD_EXISTS') t.error = new TxExistsError(t.parsed.txidHex);
    else t.error = storageError('taking the creation lock failed', r.error, { txid: t.parsed.txidHex });
  });
  await Promise.all(
    txs
      .filter((t) => !t.error)
      .map(async (t) => {
        try {
          await putBlob(ctx, t.parsed.txidHex, t.plan);
        } catch (err) {
          t.error = err as UtxoStoreError;
        }
      }),
  );
}

/** The pagination records (n >= 1) of the locked txs: they go in the same create batches as the single records. */
export function paginationRecords(txs: PaginatedCreate[]): { tx: PaginatedCreate; key: Buffer; bins: Bins }[] {
  return txs
    .filter((t) => !t.error)
    .flatMap((t) =>
      t.plan.records.slice(1).map((bins, i) => ({ tx: t, key: paginationKey(t.parsed.txid, i + 1), bins })),
    );
}

/** An existing record (from an earlier attempt) counts as done; any other failure fails its tx. */
export function settlePaginationWrites(
  records: { tx: PaginatedCreate }[],
  results: BatchWriteResult[],
  what = 'creating a record of a multi-record transaction failed',
): void {
  results.forEach((r, i) => {
    const t = records[i].tx;
    if (r.ok || r.error.code === 'RECORD_EXISTS') return;
    t.error ??= storageError(what, r.error, { txid: t.parsed.txidHex });
  });
}

/**
 * After every pagination record exists: the masters (one batch; an existing master implies every record exists),
 * phase 2 (clear `creating`), and the locks released. A failure in phase 2 still means the tx is stored.
 */
export async function completePaginated(ctx: StoreContext, txs: PaginatedCreate[]): Promise<void> {
  try {
    const ready = txs.filter((t) => !t.error);
    const masters = ready.map((t) => ({ tx: t, key: masterKey(t.parsed.txid), bins: t.plan.records[0] }));
    settlePaginationWrites(masters, await createChunked(ctx, masters));
    await finishCreatingMany(
      ctx,
      txs
        .filter((t) => !t.error)
        .map((t) => ({
          txid: t.parsed.txid,
          txidHex: t.parsed.txidHex,
          extraRecords: t.plan.records.length - 1,
          height: t.height,
        })),
    );
  } finally {
    // the locks in engine batches; a lock left behind expires by its TTL
    const locks = txs.filter((t) => t.locked).map((t) => ({ key: lockKey(t.parsed.txid) }));
    await Promise.all(chunk(locks, engineBatchSize(ctx)).map((part) => ctx.engine.batchRemove(part).catch(() => [])));
  }
}

/** Create-only writes in engine batches, all in flight; a batch that fails as a whole fails each of its records. */
export async function createChunked(
  ctx: StoreContext,
  records: { key: Buffer; bins: Bins; policy?: BatchCreateItem['policy'] }[],
): Promise<BatchWriteResult[]> {
  const parts = chunk(
    records.map(({ key, bins, policy }) => (policy ? { key, bins, policy } : { key, bins })),
    engineBatchSize(ctx),
  );
  const settled = await Promise.allSettled(parts.map((part) => ctx.engine.batchCreate(part)));
  return settled.flatMap((s, n): BatchWriteResult[] =>
    s.status === 'fulfilled' ? s.value : parts[n].map(() => ({ ok: false, error: s.reason as never })),
  );
}

/** The two-phase protocol for one tx (create.ts's batch steps with a batch of one). */
export async function createPaginated(
  ctx: StoreContext,
  parsed: ParsedTx,
  plan: RecordPlan,
  height: number,
): Promise<void> {
  const t: PaginatedCreate = { parsed, plan, height };
  await lockPaginated(ctx, [t]);
  try {
    const pages = paginationRecords([t]);
    settlePaginationWrites(pages, await createChunked(ctx, pages));
  } finally {
    await completePaginated(ctx, [t]);
  }
  if (t.error) throw t.error;
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
  const [done] = await finishCreatingMany(ctx, [{ txid, txidHex, extraRecords, height }]);
  return done;
}

/** finishCreating for many txs: one chunked UDF batch for all pagination records, then one for the masters. */
export async function finishCreatingMany(
  ctx: StoreContext,
  txs: { txid: Buffer; txidHex: string; extraRecords: number; height: number }[],
): Promise<boolean[]> {
  if (txs.length === 0) return [];
  const signals = new SignalBuffer();
  const R = ctx.settings.blockHeightRetention;
  const failed = new Set<number>();
  const pages = txs.flatMap((t, i) => {
    const out = [];
    for (let n = 1; n <= t.extraRecords; n++) {
      out.push({ i, key: paginationKey(t.txid, n), fn: 'clearCreating' as const, args: [t.height, R] });
    }
    return out;
  });
  const settle = (items: { i: number }[], results: Awaited<ReturnType<typeof callUdfChunked>>) =>
    results.forEach((r, n) => {
      const i = items[n].i;
      if (!r.ok || r.response.status !== 'OK') failed.add(i);
      else signals.addFrom(txs[i].txidHex, r.response, txs[i].height);
    });
  settle(pages, await callUdfChunked(ctx, pages));
  const masters = txs
    .map((t, i) => ({ i, key: masterKey(t.txid), fn: 'clearCreating' as const, args: [t.height, R] }))
    .filter((m) => !failed.has(m.i));
  settle(masters, await callUdfChunked(ctx, masters));
  for (const i of failed) signals.add(txs[i].txidHex, 'CREATING', txs[i].height);
  try {
    await signals.flush(ctx);
  } catch {
    // nothing more to do here: retry and setMined finish the create
    return txs.map(() => false);
  }
  return txs.map((_, i) => !failed.has(i));
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
