/**
 * Test plumbing for the cleanup tests: the embedded engine (':memory:') with the real UDF module registered, an
 * in-memory BlobStore (a correct BlobStore: create-only puts are not needed by cleanup, deletes are real), and a
 * delegating RecordEngine / BlobStore pair that fails a chosen call, for fault injection (killed passes, failed
 * reads, races between read and delete).
 */
import type { BlobKind, BlobStore } from '../../lib/blob/port';
import { isCleanupLockKey } from '../../lib/cleanup/pass-lock';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import { EngineError } from '../../lib/engine/port';
import type * as port from '../../lib/engine/port';
import { loadUdfSource, udfModuleName } from '../../lib/store/udf-module';

const udfSource = loadUdfSource();
/** the real module's content-versioned name (lua/utxo.lua, or $UTXO_UDF_PATH) */
export const MODULE_NAME = udfModuleName(udfSource);

/** The embedded engine on ':memory:' with the UDF module registered under MODULE_NAME. */
export async function openUdfEngine(): Promise<port.RecordEngine> {
  const engine = await openEmbeddedEngine({ path: ':memory:' });
  await engine.ensureModule(MODULE_NAME, udfSource);
  return engine;
}

export class MemoryBlobs implements BlobStore {
  readonly kind = 'memory';
  readonly blobs = new Map<string, { data: Buffer; dah: number | null }>();
  private id(txid: string, kind: BlobKind): string {
    return `${txid}.${kind}`;
  }
  async put(txid: string, kind: BlobKind, data: Buffer): Promise<void> {
    const existing = this.blobs.get(this.id(txid, kind));
    if (existing && !existing.data.equals(data)) throw new Error(`blob ${this.id(txid, kind)} conflicts`);
    if (!existing) this.blobs.set(this.id(txid, kind), { data: Buffer.from(data), dah: null });
  }
  async get(txid: string, kind: BlobKind): Promise<Buffer | null> {
    const b = this.blobs.get(this.id(txid, kind));
    return b ? Buffer.from(b.data) : null;
  }
  async exists(txid: string, kind: BlobKind): Promise<boolean> {
    return this.blobs.has(this.id(txid, kind));
  }
  async delete(txid: string, kind: BlobKind): Promise<boolean> {
    return this.blobs.delete(this.id(txid, kind));
  }
  async setDeleteAtHeight(txid: string, kind: BlobKind, height: number | null): Promise<boolean> {
    const b = this.blobs.get(this.id(txid, kind));
    if (!b) return false;
    b.dah = height;
    return true;
  }
  async getDeleteAtHeight(txid: string, kind: BlobKind): Promise<number | null> {
    return this.blobs.get(this.id(txid, kind))?.dah ?? null;
  }
  async ping(): Promise<void> {}
}

/** Per-call overrides of a DelegatingEngine; each gets the inner engine as its last argument. */
export interface EngineOverrides {
  get?: (
    key: port.RecordKey,
    bins: string[] | undefined,
    inner: port.RecordEngine,
  ) => Promise<port.EngineRecord | null>;
  batchGet?: (
    keys: port.RecordKey[],
    bins: string[] | undefined,
    inner: port.RecordEngine,
  ) => Promise<(port.EngineRecord | null)[]>;
  create?: (
    key: port.RecordKey,
    bins: port.Bins,
    policy: port.WritePolicy | undefined,
    inner: port.RecordEngine,
  ) => Promise<void>;
  batchCreate?: (items: port.BatchCreateItem[], inner: port.RecordEngine) => Promise<port.BatchWriteResult[]>;
  update?: (
    key: port.RecordKey,
    bins: port.Bins,
    policy: port.WritePolicy | undefined,
    inner: port.RecordEngine,
  ) => Promise<void>;
  remove?: (
    key: port.RecordKey,
    policy: Pick<port.WritePolicy, 'generation'> | undefined,
    inner: port.RecordEngine,
  ) => Promise<boolean>;
  batchUpdate?: (items: port.BatchUpdateItem[], inner: port.RecordEngine) => Promise<port.BatchWriteResult[]>;
  batchRemove?: (items: port.BatchRemoveItem[], inner: port.RecordEngine) => Promise<port.BatchRemoveResult[]>;
  apply?: (key: port.RecordKey, call: port.UdfCall, inner: port.RecordEngine) => Promise<port.BinMap>;
  batchApply?: (items: port.BatchApplyItem[], inner: port.RecordEngine) => Promise<port.BatchApplyResult[]>;
  queryRange?: (query: port.RangeQuery, inner: port.RecordEngine) => Promise<port.RangePage>;
  /** an engine whose indexes are built on a cluster (Aerospike); absent: the inner engine's, if any */
  ensureIndexes?: (inner: port.RecordEngine) => Promise<void>;
}

/** A port.RecordEngine that forwards every call to `inner`, except the ones overridden. */
export class DelegatingEngine implements port.RecordEngine {
  constructor(
    readonly inner: port.RecordEngine,
    private readonly overrides: EngineOverrides = {},
  ) {}
  get kind(): string {
    return this.inner.kind;
  }
  ensureModule(name: string, source: string): Promise<void> {
    return this.inner.ensureModule(name, source);
  }
  get(key: port.RecordKey, bins?: string[]): Promise<port.EngineRecord | null> {
    return this.overrides.get ? this.overrides.get(key, bins, this.inner) : this.inner.get(key, bins);
  }
  batchGet(keys: port.RecordKey[], bins?: string[]): Promise<(port.EngineRecord | null)[]> {
    return this.overrides.batchGet ? this.overrides.batchGet(keys, bins, this.inner) : this.inner.batchGet(keys, bins);
  }
  create(key: port.RecordKey, bins: port.Bins, policy?: port.WritePolicy): Promise<void> {
    return this.overrides.create
      ? this.overrides.create(key, bins, policy, this.inner)
      : this.inner.create(key, bins, policy);
  }
  batchCreate(items: port.BatchCreateItem[]): Promise<port.BatchWriteResult[]> {
    return this.overrides.batchCreate ? this.overrides.batchCreate(items, this.inner) : this.inner.batchCreate(items);
  }
  update(key: port.RecordKey, bins: port.Bins, policy?: port.WritePolicy): Promise<void> {
    return this.overrides.update
      ? this.overrides.update(key, bins, policy, this.inner)
      : this.inner.update(key, bins, policy);
  }
  remove(key: port.RecordKey, policy?: Pick<port.WritePolicy, 'generation'>): Promise<boolean> {
    return this.overrides.remove ? this.overrides.remove(key, policy, this.inner) : this.inner.remove(key, policy);
  }
  batchUpdate(items: port.BatchUpdateItem[]): Promise<port.BatchWriteResult[]> {
    return this.overrides.batchUpdate ? this.overrides.batchUpdate(items, this.inner) : this.inner.batchUpdate(items);
  }
  batchRemove(items: port.BatchRemoveItem[]): Promise<port.BatchRemoveResult[]> {
    return this.overrides.batchRemove ? this.overrides.batchRemove(items, this.inner) : this.inner.batchRemove(items);
  }
  apply(key: port.RecordKey, call: port.UdfCall): Promise<port.BinMap> {
    return this.overrides.apply ? this.overrides.apply(key, call, this.inner) : this.inner.apply(key, call);
  }
  batchApply(items: port.BatchApplyItem[]): Promise<port.BatchApplyResult[]> {
    return this.overrides.batchApply ? this.overrides.batchApply(items, this.inner) : this.inner.batchApply(items);
  }
  queryRange(query: port.RangeQuery): Promise<port.RangePage> {
    return this.overrides.queryRange ? this.overrides.queryRange(query, this.inner) : this.inner.queryRange(query);
  }
  get ensureIndexes(): (() => Promise<void>) | undefined {
    const { ensureIndexes } = this.overrides;
    if (ensureIndexes) return () => ensureIndexes(this.inner);
    return this.inner.ensureIndexes?.bind(this.inner);
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  /** the inner engine belongs to whoever opened it */
  async close(): Promise<void> {}
}

/**
 * Wraps the ports as a pass killed at step n would see them: the n-th mutating call (1-based: update, remove,
 * batchUpdate, batchRemove, batchApply, blob delete) and, when the process `dies` (default), every mutating call after it throw without
 * reaching the engine or blob store. With `dies: false` only the n-th call fails (a transient error).
 * The range locks are not counted and their release goes through, as if a new process had taken over once its TTL
 * expired (pass-lock.test.ts shows the lock of a dead pass holding off the next pass until then).
 */
export function failingAt(
  engine: port.RecordEngine,
  blobs: BlobStore,
  n: number,
  options: { dies?: boolean } = {},
): { engine: port.RecordEngine; blobs: BlobStore; steps: () => number } {
  const dies = options.dies ?? true;
  let count = 0;
  const step = (): void => {
    count++;
    if (count === n || (dies && count > n)) throw new EngineError('UNAVAILABLE', `killed at step ${n}`);
  };
  const e = new DelegatingEngine(engine, {
    update: async (key, bins, policy, inner) => (step(), inner.update(key, bins, policy)),
    remove: async (key, policy, inner) => (step(), inner.remove(key, policy)),
    batchUpdate: async (items, inner) => (step(), inner.batchUpdate(items)),
    batchRemove: async (items, inner) => (
      items.every((i) => isCleanupLockKey(i.key)) || step(),
      inner.batchRemove(items)
    ),
    batchApply: async (items, inner) => (step(), inner.batchApply(items)),
  });
  const b: BlobStore = {
    kind: blobs.kind,
    put: (...a) => blobs.put(...a),
    get: (...a) => blobs.get(...a),
    exists: (...a) => blobs.exists(...a),
    delete: async (...a) => (step(), blobs.delete(...a)),
    setDeleteAtHeight: (...a) => blobs.setDeleteAtHeight(...a),
    getDeleteAtHeight: (...a) => blobs.getDeleteAtHeight(...a),
    ping: () => blobs.ping(),
  };
  return { engine: e, blobs: b, steps: () => count };
}
