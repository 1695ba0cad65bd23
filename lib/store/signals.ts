/**
 * Forwarding UDF signals to the signal queue (docs/signals.md): one message {txid, signal, height} per signal,
 * txid being the master's display hex even when a pagination record raised it.
 */
import type { Signal, SignalName } from '../signals/port';
import { masterKey } from '../domain/keys';
import type { UdfFunction, UdfResponse } from '../domain/udf';
import type { BinValue } from '../engine/port';
import type { StoreContext } from './context';
import { callUdfBatch, storageError, udfError, type UdfBatchItem } from './udf-call';

export class SignalBuffer {
  private readonly pending: Signal[] = [];
  /** keys of the pending signals: a batch of many txs adds thousands, each checked for a duplicate */
  private readonly keys = new Set<string>();

  add(txid: string, signal: SignalName, height: number): void {
    const key = `${txid}:${signal}:${height}`;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    this.pending.push({ txid, signal, height });
  }

  /** Records the response's signal, if any. */
  addFrom(txid: string, response: UdfResponse, height: number): void {
    if (response.signal) this.add(txid, response.signal, height);
  }

  get size(): number {
    return this.pending.length;
  }

  /** Sends everything collected. The state changes were applied; a failed send is a StorageError to retry. */
  async flush(ctx: StoreContext): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.pending.length);
    this.keys.clear();
    try {
      await ctx.signals.send(batch);
    } catch (err) {
      throw storageError('state changed but its follow-up signals were not sent (retry the request)', err, {
        txid: batch[0].txid,
      });
    }
  }
}

/**
 * Runs `calls` (each on a record of tx `txid`) as one batch and forwards the signals of those that succeeded; then
 * throws the first failure (`earlier`, else the first failed call's: its StorageError or the UDF's typed error), so
 * every other tx is changed before a failure is reported.
 */
export async function callUdfBatchAndSignal(
  ctx: StoreContext,
  calls: (UdfBatchItem & { txid: string })[],
  height: number,
  earlier?: Error,
): Promise<void> {
  let firstError = earlier;
  const results = await callUdfBatch(ctx, calls);
  const signals = new SignalBuffer();
  results.forEach((r, i) => {
    if (!r.ok) firstError ??= r.error;
    else if (r.response.status !== 'OK') firstError ??= udfError(r.response, { txid: calls[i].txid });
    else signals.addFrom(calls[i].txid, r.response, height);
  });
  await signals.flush(ctx);
  if (firstError) throw firstError;
}

/**
 * Runs `fn(...args, tip, retention)` on the master record of each tx as one batch and forwards the signals
 * (callUdfBatchAndSignal): the per-tx flag changes that need no other record.
 */
export async function callOnMastersAndSignal(
  ctx: StoreContext,
  txids: { hex: string; bytes: Buffer }[],
  fn: UdfFunction,
  args: BinValue[],
): Promise<void> {
  const height = await ctx.tip();
  const R = ctx.settings.blockHeightRetention;
  await callUdfBatchAndSignal(
    ctx,
    txids.map((t) => ({ txid: t.hex, key: masterKey(t.bytes), fn, args: [...args, height, R] })),
    height,
  );
}
