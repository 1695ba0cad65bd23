/**
 * A signal queue opened on its first use. The SQS queue needs the AWS SDK's SQS client, whose code is a large part
 * of what a function compiles when it loads; the functions that never send a signal (get, getUtxo, signals, cleanup)
 * never open it, and their bundles leave the SQS client out (cdk/bundling.ts). An open that fails fails the send
 * that needed the queue, and the next send tries again.
 */
import type { Signal, SignalQueue } from './port';

export class LazyQueue implements SignalQueue {
  private opened: SignalQueue | undefined;

  constructor(
    readonly kind: string,
    private readonly open: () => SignalQueue,
  ) {}

  /** whether the queue was opened (a send or ping needed it) */
  get isOpen(): boolean {
    return this.opened !== undefined;
  }

  private queue(): SignalQueue {
    return (this.opened ??= this.open());
  }

  async send(signals: Signal[]): Promise<void> {
    // nothing to send needs no queue (most store calls end with an empty signal buffer)
    if (signals.length === 0) return;
    return this.queue().send(signals);
  }

  async ping(): Promise<void> {
    return this.queue().ping();
  }
}
