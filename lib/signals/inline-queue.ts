/**
 * The in-process signal queue (SIGNAL_QUEUE=inline; local runs and tests). send() hands every signal to the handler
 * (the reconciler) in order, one at a time, and resolves when they were handled, so the follow-up happens right
 * after the caller's write.
 *
 * It never throws into the store: the state change that raised the signal has already been applied, and the
 * reconciler is state-based, so a later signal (or the cleanup pass) converges. Hence a handler error is logged and
 * swallowed, and signals sent before a handler is set are dropped with a warning.
 *
 * Signals of concurrent sends are handled strictly one after another in send order. A send from inside the handler
 * (re-entrant) is queued behind the signal being handled and returns at once, instead of waiting for itself.
 */
import { AsyncLocalStorage } from 'async_hooks';
import type { Signal, SignalHandler, SignalQueue } from './port';

/**
 * The little logging the queue does (a handler failure, signals without a handler): compatible with `console` and
 * with the Powertools Logger (`warn(message, ...extra)`).
 */
export interface SignalLogger {
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

export const consoleLogger: SignalLogger = {
  warn: (message, details) => console.warn(message, details ?? ''),
  error: (message, details) => console.error(message, details ?? ''),
};

export interface InlineQueueOptions {
  handler?: SignalHandler;
  logger?: SignalLogger;
}

export class InlineQueue implements SignalQueue {
  readonly kind = 'inline';
  private handler: SignalHandler | undefined;
  private readonly logger: SignalLogger;
  private readonly pending: Signal[] = [];
  private draining: Promise<void> | undefined;
  private readonly insideHandler = new AsyncLocalStorage<true>();

  constructor(options: InlineQueueOptions = {}) {
    this.handler = options.handler;
    this.logger = options.logger ?? consoleLogger;
  }

  setHandler(handler: SignalHandler): void {
    this.handler = handler;
  }

  async send(signals: Signal[]): Promise<void> {
    if (signals.length === 0) return;
    if (!this.handler) {
      this.logger.warn('inline signal queue has no handler: signals dropped', {
        count: signals.length,
        signals: signals.map((s) => `${s.signal} ${s.txid} @${s.height}`),
      });
      return;
    }
    this.pending.push(...signals);
    if (this.insideHandler.getStore()) return;
    this.draining ??= this.drain();
    await this.draining;
  }

  async ping(): Promise<void> {}

  /**
   * Handles pending signals until none is left. `draining` is cleared in the same synchronous step that finds the
   * queue empty, so a signal pushed by a later send is never left behind by a finishing drain.
   */
  private async drain(): Promise<void> {
    await Promise.resolve(); // never finish synchronously: send() assigns `draining` after this call returns
    for (let signal = this.pending.shift(); signal; signal = this.pending.shift()) {
      const handler = this.handler!;
      try {
        await this.insideHandler.run(true, () => handler.handle(signal));
      } catch (err) {
        this.logger.error('signal handler failed; the signal is dropped (state-based: a later signal converges)', {
          txid: signal.txid,
          signal: signal.signal,
          height: signal.height,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    this.draining = undefined;
    // an enabled AsyncLocalStorage makes every promise of the process pay for async hooks (about 0.3 us each on
    // Node 20): they are on only while a drain runs (run() enables them again)
    this.insideHandler.disable();
  }
}
