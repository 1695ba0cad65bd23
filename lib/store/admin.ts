/**
 * Flag and per-UTXO administration (docs/operations.md): setLocked and setConflicting (master and pagination records),
 * freeze, unfreeze, reassign, preserve. Evaluated at H.
 */
import { BIN } from '../domain/bins';
import { InvalidArgumentError, TxNotFoundError, UtxoStateError, type ItemOutcome } from '../domain/errors';
import { locateOutput, masterKey, paginationKey, recordKey } from '../domain/keys';
import { REASSIGN_SPENDABLE_AFTER, type UdfFunction } from '../domain/udf';
import { boolArg, hashArg, intArg, listArg, optionalIntArg, txidArg, txidListArg } from './args';
import { checkCallerHeight, type StoreContext } from './context';
import { readMasters } from './record-reads';
import { callOnMastersAndSignal, callUdfBatchAndSignal, SignalBuffer } from './signals';
import type { OutpointRef, ReassignRequest } from './types';
import { callUdfBatch, callUdfOk, storageError, udfError, type UdfBatchItem } from './udf-call';

function toInt(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return 0;
}

/** Applies setLocked / setConflicting to every record of each tx. TX_NOT_FOUND after the others were changed. */
async function setFlag(
  ctx: StoreContext,
  fn: 'setLocked' | 'setConflicting',
  txidsValue: unknown,
  value: unknown,
): Promise<void> {
  const field = fn === 'setLocked' ? 'locked' : 'conflicting';
  const setValue = boolArg(value, field);
  const txids = txidListArg(txidsValue, 'txids');
  const height = await ctx.tip();
  const R = ctx.settings.blockHeightRetention;
  let masters;
  try {
    masters = await ctx.engine.batchGet(
      txids.map((t) => masterKey(t.bytes)),
      [BIN.totalExtraRecs],
    );
  } catch (err) {
    throw storageError('reading the transactions failed', err);
  }
  let firstError: Error | undefined;
  const calls: (UdfBatchItem & { txid: string })[] = [];
  txids.forEach((t, i) => {
    const master = masters[i];
    if (!master) {
      firstError ??= new TxNotFoundError(t.hex);
      return;
    }
    const extra = toInt(master.bins[BIN.totalExtraRecs]);
    for (let n = 1; n <= extra; n++)
      calls.push({ txid: t.hex, key: paginationKey(t.bytes, n), fn, args: [setValue, height, R] });
    calls.push({ txid: t.hex, key: masterKey(t.bytes), fn, args: [setValue, height, R] });
  });
  await callUdfBatchAndSignal(ctx, calls, height, firstError);
}

export function setLocked(ctx: StoreContext, txids: string[], locked: boolean): Promise<void> {
  return setFlag(ctx, 'setLocked', txids, locked);
}

export function setConflicting(ctx: StoreContext, txids: string[], conflicting: boolean): Promise<void> {
  return setFlag(ctx, 'setConflicting', txids, conflicting);
}

interface ResolvedRef {
  txid: string;
  txidBytes: Buffer;
  vout: number;
  utxoHash: Buffer;
  key: Buffer;
  offset: number;
}

function resolveRef(ref: OutpointRef, field: string, B: number): ResolvedRef {
  if (ref === null || typeof ref !== 'object') throw new InvalidArgumentError(field, 'expected an object');
  const txidBytes = txidArg(ref.txid, `${field}.txid`);
  const vout = intArg(ref.vout, `${field}.vout`);
  const { recordNumber, offset } = locateOutput(vout, B);
  return {
    txid: ref.txid.toLowerCase(),
    txidBytes,
    vout,
    utxoHash: hashArg(ref.utxoHash, `${field}.utxoHash`),
    key: recordKey(txidBytes, recordNumber),
    offset,
  };
}

/**
 * freeze / unfreeze: each UTXO independently. If any fails, the others stay applied and the error (the first
 * failure's code) lists every UTXO's outcome in details.utxos.
 */
async function perUtxo(ctx: StoreContext, fn: 'freeze' | 'unfreeze', utxos: unknown): Promise<void> {
  const B = ctx.settings.utxoBatchSize;
  const refs = listArg<OutpointRef>(utxos, 'utxos').map((u, i) => resolveRef(u, `utxos[${i}]`, B));
  const height = await ctx.tip();
  const R = ctx.settings.blockHeightRetention;
  const results = await callUdfBatch(
    ctx,
    refs.map((r) => ({ key: r.key, fn: fn as UdfFunction, args: [r.offset, r.utxoHash, height, R] })),
  );
  const signals = new SignalBuffer();
  const outcomes: ItemOutcome[] = refs.map((r) => ({ txid: r.txid, vout: r.vout, status: 'OK' }));
  results.forEach((r, i) => {
    const o = outcomes[i];
    if (!r.ok) Object.assign(o, { status: 'ERROR', code: r.error.code, message: r.error.message });
    else if (r.response.status !== 'OK') {
      const error = udfError(r.response, { txid: refs[i].txid, vout: refs[i].vout });
      Object.assign(o, { status: 'ERROR', code: error.code, message: error.message });
    } else signals.addFrom(refs[i].txid, r.response, height);
  });
  await signals.flush(ctx);
  await refineMissingRecords(ctx, refs, outcomes);
  const first = outcomes.find((o) => o.status === 'ERROR');
  if (!first) return;
  if (first.code === 'TX_NOT_FOUND') throw new TxNotFoundError(first.txid);
  if (first.code === 'STORAGE_ERROR')
    throw storageError(`${fn} failed`, first.message, { txid: first.txid, vout: first.vout });
  throw new UtxoStateError(first.code as never, first.message ?? String(first.code), {
    txid: first.txid,
    vout: first.vout,
    utxos: outcomes,
  });
}

/**
 * An output beyond the last record of an existing tx lands in a pagination record that does not exist: that is
 * UTXO_NOT_FOUND, not TX_NOT_FOUND.
 */
async function refineMissingRecords(ctx: StoreContext, refs: ResolvedRef[], outcomes: ItemOutcome[]): Promise<void> {
  const missing = outcomes
    .map((o, i) => i)
    .filter((i) => outcomes[i].code === 'TX_NOT_FOUND' && refs[i].key.length !== 32);
  if (missing.length === 0) return;
  const masters = await readMasters(
    ctx,
    missing.map((i) => refs[i].txidBytes),
  );
  missing.forEach((i, n) => {
    if (masters[n] !== null) {
      outcomes[i].code = 'UTXO_NOT_FOUND';
      outcomes[i].message = `output ${refs[i].vout} of ${refs[i].txid} does not exist`;
    }
  });
}

/**
 * The error for a TX_NOT_FOUND answer of a pagination record: UTXO_NOT_FOUND when the tx's master exists (the output
 * lies beyond the tx's last record), else the TX_NOT_FOUND itself.
 */
export async function missingRecordError(
  ctx: StoreContext,
  ref: { txid: string; txidBytes: Buffer; vout: number; key: Buffer },
  error: Error,
): Promise<Error> {
  if (!(error instanceof TxNotFoundError) || ref.key.length === 32) return error;
  let master;
  try {
    [master] = await readMasters(ctx, [ref.txidBytes]);
  } catch (err) {
    return storageError('reading the master record failed', err, { txid: ref.txid, vout: ref.vout });
  }
  if (master === null) return error;
  return new UtxoStateError('UTXO_NOT_FOUND', `output ${ref.vout} of ${ref.txid} does not exist`, {
    txid: ref.txid,
    vout: ref.vout,
  });
}

export function freeze(ctx: StoreContext, utxos: OutpointRef[]): Promise<void> {
  return perUtxo(ctx, 'freeze', utxos);
}

export function unfreeze(ctx: StoreContext, utxos: OutpointRef[]): Promise<void> {
  return perUtxo(ctx, 'unfreeze', utxos);
}

/** Reassigns a frozen UTXO to a new hash; spendable REASSIGN_SPENDABLE_AFTER blocks after blockHeight (default H). */
export async function reassign(ctx: StoreContext, request: ReassignRequest): Promise<void> {
  const ref = resolveRef(request, 'request', ctx.settings.utxoBatchSize);
  const newHash = hashArg(request.newUtxoHash, 'newUtxoHash');
  const height = await ctx.tip();
  const blockHeight = optionalIntArg(request.blockHeight, 'blockHeight') ?? height;
  checkCallerHeight('blockHeight', blockHeight, height, ctx.settings.maxTipAdvance);
  const R = ctx.settings.blockHeightRetention;
  const response = await callUdfOk(
    ctx,
    ref.key,
    'reassign',
    [ref.offset, ref.utxoHash, newHash, blockHeight, REASSIGN_SPENDABLE_AFTER, height, R],
    { txid: ref.txid, vout: ref.vout },
  ).catch(async (err: Error) => {
    throw await missingRecordError(ctx, ref, err);
  });
  const signals = new SignalBuffer();
  signals.addFrom(ref.txid, response, height);
  await signals.flush(ctx);
}

/** Keeps each tx (its DAH removed) until untilHeight; the reconciler clears pagination and blob DAH (PRESERVE). */
export async function preserve(ctx: StoreContext, txidsValue: string[], untilHeight: number): Promise<void> {
  const txids = txidListArg(txidsValue, 'txids');
  await callOnMastersAndSignal(ctx, txids, 'preserveUntil', [intArg(untilHeight, 'untilHeight')]);
}
