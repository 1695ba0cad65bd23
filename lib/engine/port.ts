/**
 * RecordEngine: the few record operations the store needs (docs/decisions/0001-one-lua-module-two-engines.md). Two implementations:
 * the embedded engine (SQLite + wasmoon Lua) and the Aerospike engine (the `aerospike` client).
 *
 * Value model, shared by both engines and by the Lua module:
 * - integers: JS `number` when within Number.MAX_SAFE_INTEGER, else `bigint` (Lua keeps 64-bit integers exact);
 * - booleans, strings;
 * - bytes: `Buffer` (Lua `bytes`, 1-based);
 * - lists: arrays, elements may be `null` (Lua nil inside an Aerospike list);
 * - maps: plain objects; integer map keys appear as decimal strings on the JS side.
 * A bin set to `null` in an update removes the bin.
 */
import type { IndexedBin } from '../domain/bins';

export type BinValue = null | boolean | number | bigint | string | Buffer | BinValue[] | BinMap;
export interface BinMap {
  [key: string]: BinValue;
}
export type Bins = Record<string, BinValue>;

/**
 * The bin of a tombstone: remove() replaces a record with `{tombstone: <unix seconds>}` and a TTL instead of deleting
 * it. Aerospike Community Edition writes no tombstone for a delete, so on a cold restart the device still holds the
 * record's last version and it comes back; the tombstone is that last version instead, and the cold start keeps the
 * newest version of a key. Both engines treat a tombstone as a missing record for every read, query, UDF (the Lua
 * module's isLive) and create. docs/decisions explains the TTL.
 */
export const TOMBSTONE_BIN = 'tombstone';

/** Default seconds a tombstone lives (TOMBSTONE_TTL_SECONDS): 30 days. */
export const DEFAULT_TOMBSTONE_TTL_SECONDS = 30 * 24 * 3600;

/** True when a record's bins are a tombstone's. */
export function isTombstone(bins: Bins): boolean {
  return bins[TOMBSTONE_BIN] !== undefined && bins[TOMBSTONE_BIN] !== null;
}

/** Aerospike user key: txid bytes (internal order), optionally followed by a uint32 LE record number. */
export type RecordKey = Buffer;

export interface EngineRecord {
  key: RecordKey;
  bins: Bins;
  generation: number;
  /** seconds until expiry, or -1 when the record never expires */
  ttl: number;
}

export interface WritePolicy {
  /** seconds until the record expires, -1 never; omitted: create never expires, update keeps the record's expiry */
  ttl?: number;
  /** expected current generation: the write fails with GENERATION_MISMATCH if it differs */
  generation?: number;
}

export interface UdfCall {
  /** registered module name (see ensureModule) */
  module: string;
  fn: string;
  args: BinValue[];
}

export type EngineErrorCode =
  | 'RECORD_EXISTS'
  | 'RECORD_NOT_FOUND'
  | 'GENERATION_MISMATCH'
  | 'RECORD_TOO_BIG'
  | 'UDF_ERROR'
  | 'TIMEOUT'
  | 'UNAVAILABLE'
  | 'INVALID'
  | 'UNKNOWN';

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EngineError';
  }
}

export interface BatchApplyItem extends UdfCall {
  key: RecordKey;
}

/** Outcome of one UDF call in a batch: the map the UDF returned, or the engine error for that record. */
export type BatchApplyResult = { ok: true; result: BinMap } | { ok: false; error: EngineError };

export interface BatchCreateItem {
  key: RecordKey;
  bins: Bins;
  policy?: WritePolicy;
}

/** Outcome of one create or update in a batch: done, or the engine error for that record (RECORD_EXISTS, ...). */
export type BatchWriteResult = { ok: true } | { ok: false; error: EngineError };

export interface BatchUpdateItem {
  key: RecordKey;
  bins: Bins;
  policy?: WritePolicy;
}

export interface BatchRemoveItem {
  key: RecordKey;
  policy?: Pick<WritePolicy, 'generation'>;
}

/** Outcome of one remove in a batch: whether a live record was removed (remove()'s answer), or the engine error. */
export type BatchRemoveResult = { ok: true; existed: boolean } | { ok: false; error: EngineError };

/**
 * The key space is split into PARTITION_COUNT partitions: on Aerospike the server's own partitions (by the key's
 * digest), on the embedded engine by the key's first 12 bits (txids are hashes, so both spread evenly). A pass that
 * reads an index whole splits it into partition ranges and runs them in parallel, each resumable by its cursor.
 */
export const PARTITION_COUNT = 4096;

/** Partitions [begin, begin + count). */
export interface PartitionRange {
  begin: number;
  count: number;
}

/** `n` contiguous ranges covering every partition once (n is clamped to [1, PARTITION_COUNT]). */
export function splitPartitions(n: number): PartitionRange[] {
  const parts = Math.max(1, Math.min(PARTITION_COUNT, Math.floor(n)));
  const out: PartitionRange[] = [];
  for (let i = 0; i < parts; i++) {
    const begin = Math.floor((i * PARTITION_COUNT) / parts);
    const end = Math.floor(((i + 1) * PARTITION_COUNT) / parts);
    out.push({ begin, count: end - begin });
  }
  return out;
}

/** INVALID unless the range is whole partitions within [0, PARTITION_COUNT). */
export function checkPartitionRange(range: PartitionRange): void {
  const { begin, count } = range ?? ({} as PartitionRange);
  if (
    !Number.isInteger(begin) ||
    !Number.isInteger(count) ||
    begin < 0 ||
    count < 1 ||
    begin + count > PARTITION_COUNT
  ) {
    throw new EngineError('INVALID', `bad partition range ${JSON.stringify(range)}: within [0, ${PARTITION_COUNT})`);
  }
}

export interface RangeQuery {
  bin: IndexedBin;
  /** inclusive bounds */
  min: number;
  max: number;
  /** bins to return (default: all) */
  bins?: string[];
  /** page size (default 1000) */
  limit?: number;
  /** opaque cursor returned by the previous page (of the same query: bin, bounds and partitions) */
  cursor?: string;
  /** only records of these partitions (default: all) */
  partitions?: PartitionRange;
}

export interface RangePage {
  records: EngineRecord[];
  /** present when more records may follow */
  cursor?: string;
}

export interface ClusterState {
  stable: boolean;
  /** what each node answered, for the error message */
  detail: string;
}

/**
 * One node's answer to the spend acknowledgement guard's cluster check (SPEND_ACK_GUARD=refuse, lib/store/ack-guard.ts).
 * A member names its cluster key; `unstable`: the node answered that it is not a settled member (an orphan, or
 * between two clusters); `unreachable`: no answer in time; `down`: its host refused the connection (nothing listens:
 * its server is not running, so it serves nobody).
 */
export type NodeView =
  | { node: string; state: 'member'; key: string }
  | { node: string; state: 'unstable' | 'unreachable' | 'down'; detail: string };

export interface ClusterView {
  /** one entry per node the client knows */
  nodes: NodeView[];
}

export interface RecordEngine {
  /** 'embedded' or 'aerospike' */
  readonly kind: string;

  /** Register the UDF module under `name` unless a module of that name is already present. */
  ensureModule(name: string, source: string): Promise<void>;

  get(key: RecordKey, bins?: string[]): Promise<EngineRecord | null>;
  batchGet(keys: RecordKey[], bins?: string[]): Promise<(EngineRecord | null)[]>;

  /**
   * Create-only write: RECORD_EXISTS if a live record has the key (a tombstone is replaced); RECORD_TOO_BIG above the
   * engine's record size limit.
   */
  create(key: RecordKey, bins: Bins, policy?: WritePolicy): Promise<void>;
  /** Create-only writes of many records, as create() each; one result per item, in order. */
  batchCreate(items: BatchCreateItem[]): Promise<BatchWriteResult[]>;
  /** Update-only write (merges bins, null removes a bin): RECORD_NOT_FOUND, GENERATION_MISMATCH. */
  update(key: RecordKey, bins: Bins, policy?: WritePolicy): Promise<void>;
  /**
   * Removes the record by replacing it with a tombstone (TOMBSTONE_BIN) that expires after the engine's tombstone TTL;
   * false if it did not exist (or was a tombstone). GENERATION_MISMATCH when policy.generation differs.
   */
  remove(key: RecordKey, policy?: Pick<WritePolicy, 'generation'>): Promise<boolean>;
  /**
   * Update-only writes of many records, as update() each (a generation checked per item); one result per item, in
   * order: RECORD_NOT_FOUND, GENERATION_MISMATCH, ... for that item only.
   */
  batchUpdate(items: BatchUpdateItem[]): Promise<BatchWriteResult[]>;
  /** Removes many records, as remove() each (tombstones, a generation checked per item); one result per item, in order. */
  batchRemove(items: BatchRemoveItem[]): Promise<BatchRemoveResult[]>;

  /** Runs a UDF on one record atomically (the record may be missing: the UDF sees a non-existent record). */
  apply(key: RecordKey, call: UdfCall): Promise<BinMap>;
  /** Runs UDFs on many records; one result per item, in order. Each record's update is atomic. */
  batchApply(items: BatchApplyItem[]): Promise<BatchApplyResult[]>;

  /** Records whose integer bin is within [min, max], paged. */
  queryRange(query: RangeQuery): Promise<RangePage>;

  /**
   * The range queries' indexes exist and are ready (an engine that builds them on a cluster: Aerospike); a failure
   * says why no range query can run. Cleanup asks it at the start of every pass, so that a pass that could not query
   * fails loudly (docs/failure-modes.md) rather than reporting a quiet zero.
   */
  ensureIndexes?(): Promise<void>;

  /** Liveness check for /v1/health. */
  ping(): Promise<void>;
  /**
   * Whether the cluster is settled: every node the client knows agrees on one cluster (of `expectedSize` nodes when
   * given) and no migration is pending. A replicated engine only; an engine without it is always settled.
   */
  clusterState?(expectedSize?: number): Promise<ClusterState>;
  /**
   * What every node the client knows says about its cluster, migrations ignored (the guard of
   * SPEND_ACK_GUARD=refuse). A replicated engine only. Never rejects: a node that cannot be asked is `unreachable`.
   */
  clusterView?(): Promise<ClusterView>;
  close(): Promise<void>;
}

/** The engine calls that read or write records (not module registration, liveness or cluster state). */
export const RECORD_OPERATIONS = [
  'get',
  'batchGet',
  'create',
  'batchCreate',
  'update',
  'remove',
  'batchUpdate',
  'batchRemove',
  'apply',
  'batchApply',
  'queryRange',
] as const satisfies readonly (keyof RecordEngine)[];
export type RecordOperation = (typeof RECORD_OPERATIONS)[number];
