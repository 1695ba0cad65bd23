/**
 * Calling the UDF module and reading its answers: the engine returns plain maps; this turns them into
 * UdfResponse and turns record-level errors into the typed errors of lib/domain/errors.ts.
 */
import { EngineError, type BatchApplyItem, type BinMap, type BinValue, type RecordKey } from '../engine/port';
import {
  StorageError,
  TxNotFoundError,
  UDF_ERROR_CODES,
  UtxoStateError,
  UtxoStoreError,
  type ErrorDetails,
  type UdfErrorCode,
} from '../domain/errors';
import type { UdfFunction, UdfItemError, UdfResponse, UdfSignal } from '../domain/udf';
import type { StoreContext } from './context';

export type UdfOutcome = { ok: true; response: UdfResponse } | { ok: false; error: UtxoStoreError };

function asNumber(v: BinValue | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

function asCode(v: BinValue | undefined): UdfErrorCode | undefined {
  return typeof v === 'string' && (UDF_ERROR_CODES as readonly string[]).includes(v) ? (v as UdfErrorCode) : undefined;
}

function asMap(v: BinValue | undefined): BinMap | undefined {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v)
    ? (v as BinMap)
    : undefined;
}

/** The UDF's map as a UdfResponse; an unreadable map is reported as an engine-level failure. */
export function toUdfResponse(map: BinMap): UdfResponse {
  const status = map.status === 'OK' ? 'OK' : 'ERROR';
  const response: UdfResponse = { status };
  const code = asCode(map.errorCode);
  if (code) response.errorCode = code;
  else if (status === 'ERROR' && map.errorCode !== undefined && map.errorCode !== null) {
    response.errorCode = 'INVALID_PARAMETER';
  }
  if (typeof map.message === 'string') response.message = map.message;
  if (typeof map.signal === 'string') response.signal = map.signal as UdfSignal;
  if (Array.isArray(map.blockIDs)) {
    response.blockIDs = map.blockIDs.map((b) => asNumber(b)).filter((b): b is number => b !== undefined);
  }
  if (Array.isArray(map.unchanged)) {
    response.unchanged = map.unchanged.map((b) => asNumber(b)).filter((b): b is number => b !== undefined);
  }
  const childCount = asNumber(map.childCount);
  if (childCount !== undefined) response.childCount = childCount;
  const errors = asMap(map.errors);
  if (errors) {
    response.errors = {};
    for (const [index, raw] of Object.entries(errors)) {
      const item = asMap(raw);
      const itemError: UdfItemError = {
        errorCode: asCode(item?.errorCode) ?? 'INVALID_PARAMETER',
        message: typeof item?.message === 'string' ? item.message : String(item?.errorCode ?? 'error'),
      };
      if (item && Buffer.isBuffer(item.spendingData)) itemError.spendingData = item.spendingData;
      response.errors[index] = itemError;
    }
  }
  return response;
}

export function storageError(what: string, cause: unknown, details: ErrorDetails = {}): StorageError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new StorageError(`${what}: ${reason}`, details, cause);
}

/** A record-level UDF error as a typed error (TX_NOT_FOUND -> TxNotFoundError). */
export function udfError(response: UdfResponse, details: ErrorDetails): UtxoStoreError {
  const code = response.errorCode ?? 'INVALID_PARAMETER';
  const message = response.message ?? code;
  if (code === 'TX_NOT_FOUND' && details.txid) return new TxNotFoundError(details.txid);
  return new UtxoStateError(code, message, details);
}

/** Runs one UDF; engine failures become StorageError. Returns the response whatever its status. */
export async function callUdf(
  ctx: StoreContext,
  key: RecordKey,
  fn: UdfFunction,
  args: BinValue[],
  details: ErrorDetails,
): Promise<UdfResponse> {
  try {
    return toUdfResponse(await ctx.engine.apply(key, { module: ctx.moduleName, fn, args }));
  } catch (err) {
    throw storageError(`${fn} failed`, err, details);
  }
}

/** Runs one UDF and throws the typed error when it reports one. */
export async function callUdfOk(...call: Parameters<typeof callUdf>): Promise<UdfResponse> {
  const response = await callUdf(...call);
  if (response.status !== 'OK') throw udfError(response, call[4]);
  return response;
}

export interface UdfBatchItem {
  key: RecordKey;
  fn: UdfFunction;
  args: BinValue[];
}

/**
 * Runs many UDFs in one engine batch; one result per item, in order. A failed batch as a whole is a StorageError;
 * a failed item carries its own StorageError.
 */
export async function callUdfBatch(ctx: StoreContext, items: UdfBatchItem[]): Promise<UdfOutcome[]> {
  if (items.length === 0) return [];
  const batch: BatchApplyItem[] = items.map((i) => ({ key: i.key, module: ctx.moduleName, fn: i.fn, args: i.args }));
  let results;
  try {
    results = await ctx.engine.batchApply(batch);
  } catch (err) {
    throw storageError(`batch ${items[0].fn} failed`, err);
  }
  return results.map((r, i): UdfOutcome => {
    if (r.ok) return { ok: true, response: toUdfResponse(r.result) };
    return { ok: false, error: storageError(`${items[i].fn} failed`, r.error) };
  });
}

export function isEngineError(err: unknown, code: EngineError['code']): boolean {
  return err instanceof EngineError && err.code === code;
}
