/**
 * Automatic batching, as Teranode's batchers (go-batcher) do for its store calls: single calls made within a linger
 * window, or until a batch is full, go out as one batch request, and each caller gets its own item's outcome.
 *
 * - A batch is sent when it holds `maxBatchSize` items or `lingerMs` after its first item, whichever comes first.
 * - At most `maxInFlight` batches are in flight; formed batches wait their turn in order.
 * - At most `maxQueued` calls wait (not yet sent). Beyond that `submit` waits for room (backpressure: the caller's
 *   await slows the producer down), or with `whenFull: 'reject'` fails at once with QueueFullError.
 * - `sendBatch` answers one outcome per item, in order; a batch that fails as a whole (network, 503 after the
 *   retries) fails each of its calls with that error.
 *
 * Generic: it knows nothing of HTTP; the client gives it a function sending one batch request.
 */
import { QueueFullError } from './errors.js';

export type ItemResult<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface BatcherOptions {
  /** default 100 */
  maxBatchSize?: number;
  /** default 2 ms */
  lingerMs?: number;
  /** default 8 */
  maxInFlight?: number;
  /** calls waiting to be sent; default 10,000 */
  maxQueued?: number;
  /** default 'wait' */
  whenFull?: 'wait' | 'reject';
}

export type SendBatch<I, O> = (items: I[]) => Promise<ItemResult<O>[]>;

interface Entry<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export interface BatcherStats {
  /** batch requests sent */
  batches: number;
  /** items sent */
  items: number;
  /** the most batches in flight at once */
  peakInFlight: number;
  /** the most calls queued at once */
  peakQueued: number;
}

export class Batcher<I, O> {
  readonly maxBatchSize: number;
  readonly lingerMs: number;
  readonly maxInFlight: number;
  readonly maxQueued: number;
  private readonly whenFull: 'wait' | 'reject';

  private pending: Entry<I, O>[] = [];
  private readonly ready: Entry<I, O>[][] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private queuedCount = 0;
  private readonly waiters: (() => void)[] = [];
  private idle: (() => void)[] = [];
  readonly stats: BatcherStats = { batches: 0, items: 0, peakInFlight: 0, peakQueued: 0 };

  constructor(
    private readonly sendBatch: SendBatch<I, O>,
    options: BatcherOptions = {},
  ) {
    this.maxBatchSize = Math.max(1, options.maxBatchSize ?? 100);
    this.lingerMs = Math.max(0, options.lingerMs ?? 2);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 8);
    this.maxQueued = Math.max(this.maxBatchSize, options.maxQueued ?? 10_000);
    this.whenFull = options.whenFull ?? 'wait';
  }

  /** calls waiting to be sent */
  get queued(): number {
    return this.queuedCount;
  }

  /** batches in flight */
  get inFlightBatches(): number {
    return this.inFlight;
  }

  /** Adds one call; resolves with its item's outcome (rejects with its error). */
  async submit(item: I): Promise<O> {
    while (this.queuedCount >= this.maxQueued) {
      if (this.whenFull === 'reject') throw new QueueFullError(this.maxQueued);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.queuedCount++;
      this.stats.peakQueued = Math.max(this.stats.peakQueued, this.queuedCount);
      if (this.pending.length >= this.maxBatchSize) this.cut();
      else if (this.pending.length === 1) this.timer = setTimeout(() => this.cut(), this.lingerMs);
    });
  }

  /** Sends what is pending now, without waiting for the linger window. */
  flush(): void {
    if (this.pending.length > 0) this.cut();
  }

  /** Resolves when nothing is pending, queued or in flight (flushes first). */
  async drain(): Promise<void> {
    this.flush();
    while (this.inFlight > 0 || this.ready.length > 0 || this.pending.length > 0) {
      await new Promise<void>((resolve) => this.idle.push(resolve));
      this.flush();
    }
  }

  private cut(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    this.ready.push(this.pending);
    this.pending = [];
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.ready.length > 0) {
      const batch = this.ready.shift() as Entry<I, O>[];
      this.inFlight++;
      this.stats.peakInFlight = Math.max(this.stats.peakInFlight, this.inFlight);
      this.queuedCount -= batch.length;
      // room in the queue: wake as many waiting callers as there are free places
      for (let free = this.maxQueued - this.queuedCount; free > 0 && this.waiters.length > 0; free--) {
        (this.waiters.shift() as () => void)();
      }
      void this.dispatch(batch);
    }
  }

  private async dispatch(batch: Entry<I, O>[]): Promise<void> {
    this.stats.batches++;
    this.stats.items += batch.length;
    try {
      const results = await this.sendBatch(batch.map((e) => e.item));
      if (results.length !== batch.length) {
        throw new Error(`the batch answer has ${results.length} results for ${batch.length} items`);
      }
      batch.forEach((entry, i) => {
        const r = results[i];
        if (r.ok) entry.resolve(r.value);
        else entry.reject(r.error);
      });
    } catch (err) {
      for (const entry of batch) entry.reject(err);
    } finally {
      this.inFlight--;
      this.pump();
      if (this.inFlight === 0 && this.ready.length === 0) {
        const idle = this.idle;
        this.idle = [];
        for (const resolve of idle) resolve();
      }
    }
  }
}
