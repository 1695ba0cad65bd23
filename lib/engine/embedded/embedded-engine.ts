/**
 * The embedded RecordEngine: records in SQLite, UDFs run by the Lua runtime (docs/decisions/0001-one-lua-module-two-engines.md). Every operation is
 * one synchronous SQLite transaction (better-sqlite3), so a UDF's read, Lua run and write-back never interleave
 * with another operation of this process.
 */
import { INDEXED_BINS, type IndexedBin } from '../../domain/bins';
import {
  DEFAULT_TOMBSTONE_TTL_SECONDS,
  EngineError,
  PARTITION_COUNT,
  TOMBSTONE_BIN,
  checkPartitionRange,
  isTombstone,
} from '../port';
import type * as port from '../port';
import { decodeRecord, decodeValue, encodeRecord, encodeValue, mergeRecord, scanRecord } from './codec';
import { LuaModule, type UdfOutcome } from './lua-runtime';
import { KEY_SPACE_END, RecordsTable, type IndexValues, type RecordRow } from './records-table';

export interface EmbeddedEngineOptions {
  /** SQLite file path (parent directories are created) or ':memory:' */
  path: string;
  /** ms clock, for TTL tests */
  now?: () => number;
  /** bytes; writes above it fail with RECORD_TOO_BIG (default 1 MiB, like Aerospike) */
  maxRecordSize?: number;
  /** seconds a remove's tombstone lives (default DEFAULT_TOMBSTONE_TTL_SECONDS), as on Aerospike */
  tombstoneTtlSeconds?: number;
}

const DEFAULT_MAX_RECORD_SIZE = 1024 * 1024;
const DEFAULT_PAGE = 1000;
/** a tombstone's encoded bins are a few bytes: a row above this size is never one (no decode needed) */
const MAX_TOMBSTONE_BYTES = 64;
/** expired rows are deleted at open and after this many writes */
const PURGE_EVERY_WRITES = 1000;

/** Aerospike's special TTL values. */
const TTL_NEVER = -1;
const TTL_KEEP = -2;

export async function openEmbeddedEngine(options: EmbeddedEngineOptions): Promise<EmbeddedEngine> {
  return new EmbeddedEngine(options);
}

export class EmbeddedEngine implements port.RecordEngine {
  readonly kind = 'embedded';
  private readonly table: RecordsTable;
  private readonly now: () => number;
  private readonly maxRecordSize: number;
  private readonly tombstoneTtlSeconds: number;
  private readonly modules = new Map<string, Promise<LuaModule>>();
  /** better-sqlite3 transaction wrapper, built once (building one per call is measurable) */
  private readonly inTransaction: (fn: () => unknown) => unknown;
  private writes = 0;
  private closed = false;

  constructor(options: EmbeddedEngineOptions) {
    this.table = new RecordsTable(options.path);
    this.now = options.now ?? Date.now;
    this.maxRecordSize = options.maxRecordSize ?? DEFAULT_MAX_RECORD_SIZE;
    this.tombstoneTtlSeconds = options.tombstoneTtlSeconds ?? DEFAULT_TOMBSTONE_TTL_SECONDS;
    this.inTransaction = this.table.db.transaction((fn: () => unknown) => fn());
    this.table.purgeExpired(this.now());
  }

  async ensureModule(name: string, source: string): Promise<void> {
    this.checkOpen();
    if (!name) throw new EngineError('INVALID', 'module name is empty');
    if (this.table.moduleSource(name) !== undefined) return;
    const mod = await LuaModule.load(name, source);
    if (this.closed || !this.table.addModule(name, source) || this.modules.has(name)) {
      mod.close();
      return;
    }
    this.modules.set(name, Promise.resolve(mod));
  }

  async get(key: port.RecordKey, bins?: string[]): Promise<port.EngineRecord | null> {
    this.checkOpen();
    checkKey(key);
    const now = this.now();
    return this.toRecord(this.live(key, now), now, bins);
  }

  async batchGet(keys: port.RecordKey[], bins?: string[]): Promise<(port.EngineRecord | null)[]> {
    this.checkOpen();
    keys.forEach(checkKey);
    const now = this.now();
    return this.transaction(() => keys.map((k) => this.toRecord(this.live(k, now), now, bins)));
  }

  async create(key: port.RecordKey, bins: port.Bins, policy: port.WritePolicy = {}): Promise<void> {
    this.checkOpen();
    this.transaction(() => this.createNow(key, bins, policy));
  }

  /** create() inside a transaction. */
  private createNow(key: port.RecordKey, bins: port.Bins, policy: port.WritePolicy): void {
    checkKey(key);
    const blob = encodeRecord(bins);
    if (blob.length === 0) throw new EngineError('INVALID', 'a record needs at least one bin');
    this.checkSize(key, blob);
    const now = this.now();
    const row = this.stored(key, now);
    if (row && !isTombstoneRow(row)) throw new EngineError('RECORD_EXISTS', `record ${hex(key)} exists`);
    // over a tombstone the generation goes on, as Aerospike's replace of it does
    this.write(key, row ? row.gen + 1 : 1, expiresAt(policy.ttl, null, now), blob);
  }

  async batchCreate(items: port.BatchCreateItem[]): Promise<port.BatchWriteResult[]> {
    return this.eachInOneTransaction(items, (item) => {
      this.createNow(item.key, item.bins, item.policy ?? {});
      return { ok: true };
    });
  }

  /** A batch: every item in one transaction, one result per item (an item's engine error is its result). */
  private eachInOneTransaction<T, R>(items: T[], write: (item: T) => R): (R | { ok: false; error: EngineError })[] {
    this.checkOpen();
    return this.transaction(() =>
      items.map((item) => {
        try {
          return write(item);
        } catch (err) {
          return { ok: false as const, error: asEngineError(err) };
        }
      }),
    );
  }

  async update(key: port.RecordKey, bins: port.Bins, policy: port.WritePolicy = {}): Promise<void> {
    this.checkOpen();
    this.transaction(() => this.updateNow(key, bins, policy));
  }

  async batchUpdate(items: port.BatchUpdateItem[]): Promise<port.BatchWriteResult[]> {
    return this.eachInOneTransaction(items, (item) => {
      this.updateNow(item.key, item.bins, item.policy ?? {});
      return { ok: true };
    });
  }

  /** update() inside a transaction. */
  private updateNow(key: port.RecordKey, bins: port.Bins, policy: port.WritePolicy): void {
    checkKey(key);
    const now = this.now();
    const row = this.live(key, now);
    if (!row) throw new EngineError('RECORD_NOT_FOUND', `record ${hex(key)} not found`);
    checkGeneration(row, policy.generation);
    const blob = mergeRecord(row.bins, bins);
    // Aerospike deletes a record left without bins
    if (blob.length === 0) return void this.table.delete(key);
    this.checkSize(key, blob);
    this.write(key, row.gen + 1, expiresAt(policy.ttl ?? TTL_KEEP, row.expires_at, now), blob);
  }

  async remove(key: port.RecordKey, policy: Pick<port.WritePolicy, 'generation'> = {}): Promise<boolean> {
    this.checkOpen();
    return this.transaction(() => this.removeNow(key, policy));
  }

  async batchRemove(items: port.BatchRemoveItem[]): Promise<port.BatchRemoveResult[]> {
    return this.eachInOneTransaction(items, (item) => ({
      ok: true as const,
      existed: this.removeNow(item.key, item.policy ?? {}),
    }));
  }

  /** remove() inside a transaction. */
  private removeNow(key: port.RecordKey, policy: Pick<port.WritePolicy, 'generation'>): boolean {
    checkKey(key);
    const now = this.now();
    const row = this.live(key, now);
    if (!row) return false;
    checkGeneration(row, policy.generation);
    const tombstone = encodeRecord({ [TOMBSTONE_BIN]: Math.floor(now / 1000) });
    this.write(key, row.gen + 1, expiresAt(this.tombstoneTtlSeconds, null, now), tombstone);
    return true;
  }

  async apply(key: port.RecordKey, call: port.UdfCall): Promise<port.BinMap> {
    this.checkOpen();
    checkKey(key);
    const mod = await this.moduleFor(call.module);
    const args = encodeValue(call.args);
    return this.transaction(() => this.applyOne(mod, key, call.fn, args));
  }

  async batchApply(items: port.BatchApplyItem[]): Promise<port.BatchApplyResult[]> {
    this.checkOpen();
    const mods = new Map<string, LuaModule | EngineError>();
    for (const name of new Set(items.map((i) => i.module))) {
      mods.set(name, await this.moduleFor(name).catch((err: unknown) => asEngineError(err)));
    }
    return this.transaction(() =>
      items.map((item): port.BatchApplyResult => {
        try {
          const mod = mods.get(item.module)!;
          if (mod instanceof EngineError) throw mod;
          checkKey(item.key);
          return { ok: true, result: this.applyOne(mod, item.key, item.fn, encodeValue(item.args)) };
        } catch (err) {
          return { ok: false, error: asEngineError(err) };
        }
      }),
    );
  }

  async queryRange(query: port.RangeQuery): Promise<port.RangePage> {
    this.checkOpen();
    if (!(INDEXED_BINS as readonly string[]).includes(query.bin)) {
      throw new EngineError('INVALID', `bin ${String(query.bin)} has no index`);
    }
    const limit = query.limit ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1) throw new EngineError('INVALID', `bad page size ${limit}`);
    const now = this.now();
    if (query.partitions !== undefined) checkPartitionRange(query.partitions);
    const range = query.partitions ?? { begin: 0, count: PARTITION_COUNT };
    const after = query.cursor === undefined ? undefined : parseCursor(query.cursor, range);
    const rows = this.table.range(query.bin, query.min, query.max, now, limit + 1, after, partitionKeys(range));
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page[page.length - 1];
    return {
      records: page.map((r) => this.toRecord(r, now, query.bins)!),
      ...(more && last ? { cursor: makeCursor(last.v, last.key, range) } : {}),
    };
  }

  async ping(): Promise<void> {
    this.checkOpen();
    this.table.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const mods = await Promise.allSettled(this.modules.values());
    for (const m of mods) if (m.status === 'fulfilled') m.value.close();
    this.modules.clear();
    this.table.close();
  }

  /** Reads, runs the UDF and writes back; the caller holds the transaction. */
  private applyOne(mod: LuaModule, key: Buffer, fn: string, args: Buffer): port.BinMap {
    const now = this.now();
    // a tombstone is passed on as the record it is on Aerospike: the Lua module treats it as missing (isLive)
    const row = this.stored(key, now);
    const outcome = mod.call({
      fn,
      exists: row !== undefined,
      generation: row?.gen ?? 0,
      ttl: row ? ttlOf(row, now) : 0,
      key,
      bins: row?.bins ?? Buffer.alloc(0),
      args,
    });
    const result = decodeValue(outcome.result);
    if (!isMap(result)) {
      throw new EngineError('UDF_ERROR', `${mod.name}.${fn} returned ${describe(result)}, expected a map`);
    }
    this.commit(key, row, outcome, now);
    return result;
  }

  private commit(key: Buffer, row: RecordRow | undefined, outcome: UdfOutcome, now: number): void {
    if (outcome.op === 'remove' || (outcome.op === 'write' && outcome.bins.length === 0)) {
      if (row) this.table.delete(key);
      return;
    }
    if (outcome.op !== 'write') return;
    this.checkSize(key, outcome.bins);
    // a UDF write without record.set_ttl takes the namespace default TTL (0: never expires)
    const ttl = outcome.ttl === undefined || outcome.ttl === 0 ? TTL_NEVER : outcome.ttl;
    this.write(key, row ? row.gen + 1 : 1, expiresAt(ttl, row?.expires_at ?? null, now), Buffer.from(outcome.bins));
  }

  private write(key: Buffer, gen: number, expires: number | null, bins: Buffer): void {
    this.table.put({ key, gen, expires_at: expires, bins }, indexValues(bins));
    if (++this.writes % PURGE_EVERY_WRITES === 0) this.table.purgeExpired(this.now());
  }

  /** The unexpired row of a key, tombstone or not. */
  private stored(key: Buffer, now: number): RecordRow | undefined {
    const row = this.table.get(key);
    if (!row || (row.expires_at !== null && row.expires_at <= now)) return undefined;
    return row;
  }

  /** The record of a key as every read sees it: unexpired and not a tombstone. */
  private live(key: Buffer, now: number): RecordRow | undefined {
    const row = this.stored(key, now);
    return row && !isTombstoneRow(row) ? row : undefined;
  }

  private toRecord(row: RecordRow | undefined, now: number, bins?: string[]): port.EngineRecord | null {
    if (!row) return null;
    return { key: row.key, bins: decodeRecord(row.bins, bins), generation: row.gen, ttl: ttlOf(row, now) };
  }

  private checkSize(key: Buffer, bins: Buffer): void {
    const size = key.length + bins.length;
    if (size > this.maxRecordSize) {
      throw new EngineError('RECORD_TOO_BIG', `record ${hex(key)} is ${size} bytes, above ${this.maxRecordSize}`);
    }
  }

  private transaction<T>(fn: () => T): T {
    try {
      return this.inTransaction(fn) as T;
    } catch (err) {
      throw asEngineError(err);
    }
  }

  private moduleFor(name: string): Promise<LuaModule> {
    this.checkOpen();
    let mod = this.modules.get(name);
    if (!mod) {
      const source = this.table.moduleSource(name);
      if (source === undefined) {
        return Promise.reject(new EngineError('UDF_ERROR', `UDF module ${name} is not registered`));
      }
      mod = LuaModule.load(name, source).catch((err: unknown) => {
        this.modules.delete(name);
        throw new EngineError('UDF_ERROR', asEngineError(err).message, { cause: err });
      });
      this.modules.set(name, mod);
    }
    return mod;
  }

  private checkOpen(): void {
    if (this.closed) throw new EngineError('UNAVAILABLE', 'the embedded engine is closed');
  }
}

function isTombstoneRow(row: RecordRow): boolean {
  return row.bins.length <= MAX_TOMBSTONE_BYTES && isTombstone(decodeRecord(row.bins));
}

function checkKey(key: port.RecordKey): void {
  if (!Buffer.isBuffer(key) || key.length === 0) throw new EngineError('INVALID', 'a record key is a non-empty Buffer');
}

function checkGeneration(row: RecordRow, expected: number | undefined): void {
  if (expected !== undefined && row.gen !== expected) {
    throw new EngineError('GENERATION_MISMATCH', `record ${hex(row.key)} is at generation ${row.gen}, not ${expected}`);
  }
}

/** The expiry (ms) for a write's TTL: omitted, 0 or -1 never expire, -2 keeps the current expiry. */
function expiresAt(ttl: number | undefined, current: number | null, now: number): number | null {
  if (ttl === undefined || ttl === 0 || ttl === TTL_NEVER) return null;
  if (ttl === TTL_KEEP) return current;
  if (!Number.isInteger(ttl) || ttl < 0) throw new EngineError('INVALID', `bad ttl ${ttl}`);
  return now + ttl * 1000;
}

function ttlOf(row: RecordRow, now: number): number {
  if (row.expires_at === null) return -1;
  return Math.max(1, Math.ceil((row.expires_at - now) / 1000));
}

/** The indexed bins' values: integers within the safe range, others are not indexed. */
function indexValues(bins: Buffer): IndexValues {
  const out = {} as IndexValues;
  for (const b of INDEXED_BINS) out[b] = null;
  for (const e of scanRecord(bins)) {
    if (!(INDEXED_BINS as readonly string[]).includes(e.name)) continue;
    const v = decodeValue(e.value);
    if (typeof v === 'number' && Number.isSafeInteger(v)) out[e.name as IndexedBin] = v;
  }
  return out;
}

/** The keys of partitions [begin, begin + count): partition p holds the keys whose first 12 bits are p. */
export function partitionKeys(range: port.PartitionRange): { from: Buffer; to: Buffer } {
  const prefix = (p: number) => Buffer.from([p >> 4, (p & 0xf) << 4]);
  const end = range.begin + range.count;
  return { from: prefix(range.begin), to: end >= PARTITION_COUNT ? KEY_SPACE_END : prefix(end) };
}

/** The embedded engine's partition of a key (its first 12 bits). */
export function partitionOf(key: Buffer): number {
  return ((key[0] ?? 0) << 4) | ((key[1] ?? 0) >> 4);
}

function makeCursor(v: number, key: Buffer, range: port.PartitionRange): string {
  return Buffer.from(JSON.stringify([v, key.toString('hex'), range.begin, range.count])).toString('base64url');
}

function parseCursor(cursor: string, range: port.PartitionRange): { v: number; key: Buffer } {
  let parsed: unknown[] | undefined;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
  } catch {
    // reported below
  }
  if (Array.isArray(parsed)) {
    const [v, k, begin, count] = parsed;
    if (typeof v === 'number' && typeof k === 'string') {
      if (begin !== range.begin || count !== range.count) {
        throw new EngineError('INVALID', 'range query cursor of another partition range');
      }
      return { v, key: Buffer.from(k, 'hex') };
    }
  }
  throw new EngineError('INVALID', 'bad range query cursor');
}

function isMap(v: port.BinValue): v is port.BinMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}

function describe(v: port.BinValue): string {
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'a list';
  if (Buffer.isBuffer(v)) return 'bytes';
  return `a ${typeof v}`;
}

function hex(key: Buffer): string {
  return key.toString('hex');
}

function asEngineError(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new EngineError('UNKNOWN', message, { cause: err });
}
