/**
 * SignalQueue: follow-up work the UDFs ask for (docs/signals.md), consumed by the reconciler.
 */
export const SIGNALS = ['DAHSET', 'DAHUNSET', 'ALLSPENT', 'NOTALLSPENT', 'PRESERVE', 'CREATING'] as const;
export type SignalName = (typeof SIGNALS)[number];

export interface Signal {
  /** display hex txid of the transaction (master record) concerned */
  txid: string;
  signal: SignalName;
  /** the height the operation was evaluated at */
  height: number;
}

export interface SignalQueue {
  /** 'inline' or 'sqs' */
  readonly kind: string;
  /** Sends signals; resolves once every signal was accepted (SQS: batched in tens). */
  send(signals: Signal[]): Promise<void>;
  /** Liveness check for /v1/health. */
  ping(): Promise<void>;
}

export interface SignalHandler {
  handle(signal: Signal): Promise<void>;
}
