/**
 * Test doubles around the real ports: a fault plan that makes the engine and blob store throw at step N (and, in
 * crash mode, at every later step, as a dead process would), and a queue that records signals.
 */
import type { BlobStore } from '../../lib/blob/port';
import {
  EngineError,
  RECORD_OPERATIONS,
  type RangePage,
  type RangeQuery,
  type RecordEngine,
} from '../../lib/engine/port';
import type { Signal, SignalHandler, SignalQueue } from '../../lib/signals/port';

export class FaultPlan {
  step = 0;
  readonly log: string[] = [];
  private failAt?: number;
  private crash = false;
  private down = false;

  /** Step N (1-based, counted from now) throws; in crash mode every later step throws too until disarm(). */
  arm(n: number, mode: 'crash' | 'once' = 'crash'): void {
    this.step = 0;
    this.log.length = 0;
    this.failAt = n;
    this.crash = mode === 'crash';
    this.down = false;
  }

  disarm(): void {
    this.failAt = undefined;
    this.down = false;
  }

  tick(op: string): void {
    if (this.failAt === undefined) return;
    this.step++;
    this.log.push(op);
    if (this.down) throw new EngineError('UNAVAILABLE', `injected: process down (${op})`);
    if (this.step === this.failAt) {
      if (this.crash) this.down = true;
      throw new EngineError('UNAVAILABLE', `injected failure at step ${this.step} (${op})`);
    }
  }
}

const BLOB_STEPS = ['put', 'get', 'exists', 'delete', 'setDeleteAtHeight', 'getDeleteAtHeight'];

function wrap<T extends object>(inner: T, steps: string[], prefix: string, plan: FaultPlan): T {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (typeof prop !== 'string' || !steps.includes(prop)) return value.bind(target);
      return async (...args: unknown[]) => {
        const detail =
          prop === 'apply'
            ? `:${(args[1] as { fn: string }).fn}`
            : prop === 'batchApply'
              ? `:${(args[0] as { fn: string }[])[0]?.fn}`
              : '';
        plan.tick(`${prefix}.${prop}${detail}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** `inner` with the given methods replaced; every other member is inner's own (its methods bound to it). */
export function overriding<T extends object>(inner: T, methods: Partial<T>): T {
  return new Proxy(inner, {
    get(target, prop) {
      if (Object.hasOwn(methods, prop)) return methods[prop as keyof T];
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

export function faultyEngine(inner: RecordEngine, plan: FaultPlan): RecordEngine {
  return wrap(inner, [...RECORD_OPERATIONS], 'engine', plan);
}

export function faultyBlobs(inner: BlobStore, plan: FaultPlan): BlobStore {
  return wrap(inner, BLOB_STEPS, 'blobs', plan);
}

/** Records every signal; forwards to the inner queue unless held. */
export class RecordingQueue implements SignalQueue {
  readonly kind: string;
  readonly sent: Signal[] = [];
  hold = false;

  constructor(private readonly inner: SignalQueue) {
    this.kind = inner.kind;
  }

  async send(signals: Signal[]): Promise<void> {
    this.sent.push(...signals);
    if (!this.hold) await this.inner.send(signals);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  clear(): void {
    this.sent.length = 0;
  }
}

export type HandledQueue = SignalQueue & { setHandler(handler: SignalHandler): void };

/**
 * Query paging as Aerospike does it: running the same saved paging state twice does not return the same records
 * (here, a second run of a state resumes where its previous run stopped). A query without a state starts afresh.
 */
export function nonRepeatablePaging(inner: RecordEngine): RecordEngine {
  const resumeFrom = new Map<string, string | null>();
  return overriding(inner, {
    async queryRange(query: RangeQuery): Promise<RangePage> {
      if (query.cursor === undefined) return inner.queryRange(query);
      const from = resumeFrom.has(query.cursor) ? resumeFrom.get(query.cursor) : query.cursor;
      if (from === null) return { records: [] };
      const page = await inner.queryRange({ ...query, cursor: from });
      resumeFrom.set(query.cursor, page.cursor ?? null);
      return page;
    },
  });
}

/** One harness per describe block: opened before the block, reset before each test, its target closed after it. */
export function perDescribe<T extends { target: { close(): Promise<void> } }>(
  open: () => Promise<T>,
  reset: (h: T) => Promise<void>,
): () => T {
  let h: T | undefined;
  beforeAll(async () => {
    h = await open();
  });
  beforeEach(async () => {
    await reset(h!);
  });
  afterAll(async () => {
    await h?.target.close();
  });
  return () => h!;
}
