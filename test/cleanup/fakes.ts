/**
 * Test doubles for the cleanup tests: an in-memory RecordEngine (generations, create/update-only, range queries by
 * key order, the two UDFs cleanup calls) and an in-memory BlobStore. Used because the embedded engine and the
 * store were not in the repository when these tests were written; the ledger in ledger.ts plays the store.
 */
import type { BlobKind, BlobStore } from '../../lib/blob/port';
import {
  EngineError,
  type BatchApplyItem,
  type BatchApplyResult,
  type BinMap,
  type Bins,
  type EngineRecord,
  type RangePage,
  type RangeQuery,
  type RecordEngine,
  type RecordKey,
  type UdfCall,
  type WritePolicy,
} from '../../lib/engine/port';

interface Stored {
  key: Buffer;
  bins: Bins;
  generation: number;
}

function clone<T>(v: T): T {
  if (Buffer.isBuffer(v)) return Buffer.from(v) as T;
  if (Array.isArray(v)) return v.map(clone) as T;
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = clone(x);
    return out as T;
  }
  return v;
}

export class MemoryEngine implements RecordEngine {
  readonly kind = 'memory';
  readonly records = new Map<string, Stored>();
  /** extra UDFs (beyond setDeletedChild and expirePreserve) the ledger registers */
  onExpirePreserve?: (key: Buffer, tip: number) => void;

  async ensureModule(): Promise<void> {}

  async get(key: RecordKey, bins?: string[]): Promise<EngineRecord | null> {
    const r = this.records.get(key.toString('hex'));
    if (!r) return null;
    const out: Bins = {};
    for (const [k, v] of Object.entries(r.bins)) if (!bins || bins.includes(k)) out[k] = clone(v);
    return { key: Buffer.from(r.key), bins: out, generation: r.generation, ttl: -1 };
  }

  async batchGet(keys: RecordKey[], bins?: string[]): Promise<(EngineRecord | null)[]> {
    return Promise.all(keys.map((k) => this.get(k, bins)));
  }

  async create(key: RecordKey, bins: Bins): Promise<void> {
    const id = key.toString('hex');
    if (this.records.has(id)) throw new EngineError('RECORD_EXISTS', id);
    this.records.set(id, { key: Buffer.from(key), bins: clone(bins), generation: 1 });
  }

  async update(key: RecordKey, bins: Bins, policy?: WritePolicy): Promise<void> {
    const r = this.records.get(key.toString('hex'));
    if (!r) throw new EngineError('RECORD_NOT_FOUND', key.toString('hex'));
    if (policy?.generation !== undefined && policy.generation !== r.generation) {
      throw new EngineError('GENERATION_MISMATCH', key.toString('hex'));
    }
    for (const [k, v] of Object.entries(bins)) {
      if (v === null) delete r.bins[k];
      else r.bins[k] = clone(v);
    }
    r.generation++;
  }

  async remove(key: RecordKey): Promise<boolean> {
    return this.records.delete(key.toString('hex'));
  }

  async apply(key: RecordKey, call: UdfCall): Promise<BinMap> {
    const r = this.records.get(key.toString('hex'));
    if (!r) return { status: 'ERROR', errorCode: 'TX_NOT_FOUND', message: 'missing' };
    if (call.fn === 'setDeletedChild') {
      const map = (r.bins.deletedChildren as BinMap | undefined) ?? {};
      map[String(call.args[0])] = true;
      await this.update(key, { deletedChildren: map });
      return { status: 'OK' };
    }
    if (call.fn === 'expirePreserve') {
      const tip = Number(call.args[0]);
      const until = r.bins.preserveUntil;
      if (typeof until === 'number' && until <= tip) {
        await this.update(key, { preserveUntil: null });
        this.onExpirePreserve?.(key, tip);
      }
      return { status: 'OK' };
    }
    return { status: 'ERROR', errorCode: 'INVALID_PARAMETER', message: `unknown fn ${call.fn}` };
  }

  async batchApply(items: BatchApplyItem[]): Promise<BatchApplyResult[]> {
    const out: BatchApplyResult[] = [];
    for (const item of items) {
      try {
        out.push({ ok: true, result: await this.apply(item.key, item) });
      } catch (err) {
        out.push({ ok: false, error: err instanceof EngineError ? err : new EngineError('UNKNOWN', String(err)) });
      }
    }
    return out;
  }

  async queryRange(q: RangeQuery): Promise<RangePage> {
    const limit = q.limit ?? 1000;
    const ids = [...this.records.keys()].sort().filter((id) => q.cursor === undefined || id > q.cursor);
    const records: EngineRecord[] = [];
    let last: string | undefined;
    for (const id of ids) {
      const v = this.records.get(id)!.bins[q.bin];
      if (typeof v !== 'number' || v < q.min || v > q.max) continue;
      if (records.length === limit) return { records, cursor: last };
      records.push((await this.get(Buffer.from(id, 'hex'), q.bins))!);
      last = id;
    }
    return { records };
  }

  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

export class MemoryBlobs implements BlobStore {
  readonly kind = 'memory';
  readonly blobs = new Map<string, Buffer>();
  private id(txid: string, kind: BlobKind): string {
    return `${txid}.${kind}`;
  }
  async put(txid: string, kind: BlobKind, data: Buffer): Promise<void> {
    this.blobs.set(this.id(txid, kind), Buffer.from(data));
  }
  async get(txid: string, kind: BlobKind): Promise<Buffer | null> {
    return this.blobs.get(this.id(txid, kind)) ?? null;
  }
  async exists(txid: string, kind: BlobKind): Promise<boolean> {
    return this.blobs.has(this.id(txid, kind));
  }
  async delete(txid: string, kind: BlobKind): Promise<boolean> {
    return this.blobs.delete(this.id(txid, kind));
  }
  async setDeleteAtHeight(): Promise<boolean> {
    return true;
  }
  async getDeleteAtHeight(): Promise<number | null> {
    return null;
  }
  async ping(): Promise<void> {}
}

/** Wraps the ports so that the n-th mutating call (1-based) throws, as a pass killed at that step would. */
export function failingAt(
  engine: RecordEngine,
  blobs: BlobStore,
  n: number,
): { engine: RecordEngine; blobs: BlobStore; steps: () => number } {
  let count = 0;
  const step = (): void => {
    count++;
    if (count === n) throw new EngineError('UNAVAILABLE', `killed at step ${n}`);
  };
  const e: RecordEngine = Object.create(engine) as RecordEngine;
  e.update = async (...a) => (step(), engine.update(...a));
  e.remove = async (...a) => (step(), engine.remove(...a));
  e.batchApply = async (items) => (step(), engine.batchApply(items));
  const b: BlobStore = Object.create(blobs) as BlobStore;
  b.delete = async (...a) => (step(), blobs.delete(...a));
  return { engine: e, blobs: b, steps: () => count };
}
