/**
 * What every batched operation shares: per-item results (each item succeeds or fails on its own, with the error a
 * single call would have raised) and the chunking of engine calls (ENGINE_BATCH_SIZE records per engine batch, the
 * chunks of one operation in flight together).
 */
import { StorageError, UtxoStoreError } from '../domain/errors';
import type { StoreContext } from './context';
import { callUdfBatch, storageError, type UdfBatchItem, type UdfOutcome } from './udf-call';

/** Records per engine batch when the settings give none (Teranode sends about 100 a batch, many in flight). */
export const DEFAULT_ENGINE_BATCH_SIZE = 100;

import type { ItemResult } from './types';

export type { ItemResult };

/** Any thrown value as the typed error of one item (an unexpected one is a StorageError). */
export function asItemError(err: unknown): UtxoStoreError {
  if (err instanceof UtxoStoreError) return err;
  return new StorageError(err instanceof Error ? err.message : String(err), {}, err);
}

/** Runs `fn`, turning a throw into a failed item. */
export async function settleItem<T>(fn: () => T | Promise<T>): Promise<ItemResult<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: asItemError(err) };
  }
}

/** The value of a one-item result, or its error thrown (the single-item operations). */
export function unwrap<T>(result: ItemResult<T>): T {
  if (!result.ok) throw result.error;
  return result.value;
}

export function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function engineBatchSize(ctx: StoreContext): number {
  return ctx.settings.engineBatchSize ?? DEFAULT_ENGINE_BATCH_SIZE;
}

/**
 * UDF calls in chunks of ENGINE_BATCH_SIZE, all in flight at once, settled before returning; one outcome per item,
 * in order. A chunk that fails as a whole gives each of its items that chunk's StorageError (the records may or may
 * not have been written: the caller treats them as in doubt).
 */
export async function callUdfChunked(ctx: StoreContext, items: UdfBatchItem[]): Promise<UdfOutcome[]> {
  const parts = chunk(items, engineBatchSize(ctx));
  const settled = await Promise.allSettled(parts.map((part) => callUdfBatch(ctx, part)));
  return settled.flatMap((s, n): UdfOutcome[] => {
    if (s.status === 'fulfilled') return s.value;
    const error = s.reason instanceof UtxoStoreError ? s.reason : storageError('engine batch failed', s.reason);
    return parts[n].map(() => ({ ok: false, error }));
  });
}

/** Engine batch reads in chunks, all in flight at once; the first failure is thrown after all settle. */
export async function inChunks<K, R>(ctx: StoreContext, keys: K[], read: (part: K[]) => Promise<R[]>): Promise<R[]> {
  if (keys.length === 0) return [];
  const settled = await Promise.allSettled(chunk(keys, engineBatchSize(ctx)).map(read));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.flatMap((s) => (s as PromiseFulfilledResult<R[]>).value);
}
