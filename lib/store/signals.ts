/**
 * Forwarding UDF signals to the signal queue (docs/signals.md): one message {txid, signal, height} per signal,
 * txid being the master's display hex even when a pagination record raised it.
 */
import type { Signal, SignalName } from '../signals/port';
import type { UdfResponse } from '../domain/udf';
import type { StoreContext } from './context';
import { storageError } from './udf-call';

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
