/**
 * The production RecordEngine over the `aerospike` client (docs/decisions/0001-one-lua-module-two-engines.md). Records live in one namespace and set;
 * keys are Buffer user keys, always sent and stored (policy.key = SEND) so that query results carry them.
 *
 * - create: exists = CREATE (create-only); update: exists = UPDATE (update-only, bins merged, null removes a bin);
 *   a given generation is checked with gen = EQ. create without ttl never expires; update without ttl keeps the
 *   record's ttl (DONT_UPDATE).
 * - apply: client.apply; batchApply: client.batchWrite with one BATCH_APPLY record per item, so every item can have
 *   its own function and arguments in one round trip, with a status per record.
 * - queryRange (query.ts): a secondary-index range query (filter.range), paged with the client's paginated queries;
 *   the cursor is the saved query state. The three integer indexes are created on first use (ensureIndexes, schema.ts).
 * - ensureModule (schema.ts): registers `<name>.lua` (udfRegister of a temporary file) unless every node lists it.
 * - clusterState (cluster-state.ts): the spend acknowledgement guard's cluster check.
 * - remove writes a tombstone (port.ts TOMBSTONE_BIN): a replace-only put of `{tombstone: <seconds>}` with the
 *   tombstone TTL, filtered to live records. Reads drop tombstones; create replaces one (a put filtered to
 *   tombstones); update is filtered to live records; the Lua module skips them (isLive); range queries never see one
 *   (it has no indexed bin).
 * - batchUpdate / batchRemove: client.batchWrite with one BATCH_WRITE record per item (the update's or the tombstone's
 *   write, same policies and filter). An item with a generation is sent as update() / remove() instead: the node
 *   client cannot give a batch write record its expected generation (its binding leaves the C client's
 *   as_operations.gen at 0, which a batch write's gen = EQ checks), so such items run as single commands, side by side.
 */
import type { AerospikeRecord, Client, Key } from 'aerospike';
import { DEFAULT_TOMBSTONE_TTL_SECONDS, EngineError, TOMBSTONE_BIN, isTombstone } from '../port';
import type * as port from '../port';
import { AS_STATUS, mapAerospikeError, statusOf } from './errors';
import { retryBusy, retryNotSent } from './retry';
import { loadAerospike, type AerospikeModule } from './native';
import { fromAerospikeBins, toAerospikeBins, toAerospikeValue, udfResultMap } from './values';
import {
  BATCH_CHUNK,
  batchApplyChunk,
  batchCreateChunk,
  batchGetChunk,
  batchOrSingle,
  batchRemoveChunk,
  batchUpdateChunk,
  keyHex,
  withTombstoneBin,
  type BatchContext,
} from './batch-commands';
import { clusterState, clusterView, rawInfoAllowed, Seeds, CLUSTER_STATE_TIMEOUT_MS } from './cluster-state';
import { parseHosts } from './connect';
import { InfoSockets } from './info-socket';
import { withDeadline } from '../deadline';
import { configuredQueryTimeout, queryRange, QUERY_DEADLINE_GRACE_MS } from './query';
import { createIndexes, registerModule, SCHEMA_DEADLINE_MS, type SchemaOptions } from './schema';
import { chunk, settleAll } from './settle';

export { indexName, legacyIndexName, parseSindexList, parseUdfList, SCHEMA_DEADLINE_MS } from './schema';
export { CLUSTER_STATE_TIMEOUT_MS } from './cluster-state';
export { BATCH_CHUNK, SINGLE_COMMANDS_AT_ONCE } from './batch-commands';
export { QUERY_DEADLINE_GRACE_MS } from './query';

export interface AerospikeEngineOptions {
  client: Client;
  namespace: string;
  set: string;
  /** close() also closes the client (default false: a shared client outlives the engine) */
  ownsClient?: boolean;
  /** poll interval while waiting for UDF registration and index builds, ms (default 200) */
  jobPollMs?: number;
  /** ms the UDF registration or one index build may take before it fails with TIMEOUT (default SCHEMA_DEADLINE_MS) */
  schemaDeadlineMs?: number;
  /** seconds a remove's tombstone lives (default DEFAULT_TOMBSTONE_TTL_SECONDS) */
  tombstoneTtlSeconds?: number;
  /**
   * ms a query page may take before the engine gives up on it (TIMEOUT), whatever the client does (default: the
   * client's query totalTimeout + QUERY_DEADLINE_GRACE_MS)
   */
  queryDeadlineMs?: number;
  /**
   * The deployment's nodes, "h1:3000,h2:3000" (AEROSPIKE_HOSTS, every node in the CDK's connection string): the
   * guard's view asks each one the client does not know (decision 0009). Default: only the nodes the client knows.
   */
  seeds?: string;
}

/** ms a ping (GET /v1/health) waits for a node's answer */
export const PING_DEADLINE_MS = 5000;
/** ms the cluster check may take in all, past the info timeout each node's answer has (a hung client: unstable) */
export const CLUSTER_CHECK_DEADLINE_MS = CLUSTER_STATE_TIMEOUT_MS + 2000;

export class AerospikeEngine implements port.RecordEngine {
  readonly kind = 'aerospike';
  readonly namespace: string;
  readonly set: string;
  private readonly client: Client;
  private readonly as: AerospikeModule;
  private readonly ownsClient: boolean;
  private readonly schema: SchemaOptions;
  private readonly tombstoneTtlSeconds: number;
  private indexes: Promise<void> | undefined;
  private readonly seeds?: Seeds;

  constructor(options: AerospikeEngineOptions) {
    if (!options?.client) throw new TypeError('AerospikeEngine: options.client is required');
    if (!options.namespace) throw new TypeError('AerospikeEngine: options.namespace is required');
    if (!options.set) throw new TypeError('AerospikeEngine: options.set is required');
    this.client = options.client;
    this.namespace = options.namespace;
    this.set = options.set;
    this.ownsClient = options.ownsClient ?? false;
    this.schema = {
      client: this.client,
      pollMs: options.jobPollMs ?? 200,
      deadlineMs: options.schemaDeadlineMs ?? SCHEMA_DEADLINE_MS,
    };
    this.seeds = options.seeds
      ? new Seeds(parseHosts(options.seeds).map((h) => (h.addr.includes(':') ? `[${h.addr}]` : h.addr) + `:${h.port}`))
      : undefined;
    this.tombstoneTtlSeconds = options.tombstoneTtlSeconds ?? DEFAULT_TOMBSTONE_TTL_SECONDS;
    if (!Number.isInteger(this.tombstoneTtlSeconds) || this.tombstoneTtlSeconds < 1) {
      throw new TypeError('AerospikeEngine: options.tombstoneTtlSeconds must be a positive integer');
    }
    this.as = loadAerospike();
    this.queryDeadlineMs = options.queryDeadlineMs ?? configuredQueryTimeout(this.client) + QUERY_DEADLINE_GRACE_MS;
    this.batch = {
      client: this.client,
      as: this.as,
      key: (key) => this.key(key),
      liveRecord: (key, record, bins) => this.liveRecord(key, record, bins),
      // built on the configured policy: a policy passed to a command replaces it entirely (configured())
      liveOnlyBatchPolicy: { ...this.configured('batchParentWrite'), filterExpression: this.tombstoneFilter(false) },
      tombstoneTtlSeconds: this.tombstoneTtlSeconds,
      budget: this.budget('batchParentWrite'),
      udf: (call) => this.udf(call),
    };
  }

  private readonly queryDeadlineMs: number;

  /** What the batch commands (batch-commands.ts) use of this engine. */
  private readonly batch: BatchContext;

  /**
   * The client's configured default policy of a command type (timeouts, retries; connect.ts). A policy passed to a
   * command replaces the configured one entirely (the native layer starts from the C client's built-in defaults,
   * e.g. aerospike_key_put uses config.policies.write only when no policy is given), so per-call policies are
   * built on it.
   */
  private configured(type: 'write' | 'remove' | 'apply' | 'batchParentWrite'): Record<string, unknown> {
    const policies = (this.client.config as unknown as { policies?: Record<string, object | undefined> } | undefined)
      ?.policies;
    return { ...(policies?.[type] ?? {}) };
  }

  private readonly budgets = new Map<'write' | 'apply' | 'batchParentWrite', { budgetMs: number }>();

  /**
   * The time budget of a command type for KEY_BUSY retries (retry.ts): its configured totalTimeout, read once (the
   * client's policies are fixed at connect) rather than on every command.
   */
  private budget(type: 'write' | 'apply' | 'batchParentWrite'): { budgetMs: number } {
    let budget = this.budgets.get(type);
    if (budget === undefined) {
      const total = this.configured(type).totalTimeout;
      budget = { budgetMs: typeof total === 'number' && total > 0 ? total : type === 'batchParentWrite' ? 5000 : 1000 };
      this.budgets.set(type, budget);
    }
    return budget;
  }

  private key(key: port.RecordKey): Key {
    if (!Buffer.isBuffer(key) || key.length === 0) {
      throw new EngineError('INVALID', 'aerospike: a record key must be a non-empty Buffer');
    }
    return new this.as.Key(this.namespace, this.set, key);
  }

  // ---- UDF module and indexes ------------------------------------------------------------------------------

  /** Registers `<name>.lua` unless every node lists it. */
  ensureModule(name: string, source: string): Promise<void> {
    return registerModule(this.schema, name, source);
  }

  /** Creates the integer indexes on deleteAtHeight, unminedSince and preserveUntil; existing ones are fine. */
  ensureIndexes(): Promise<void> {
    this.indexes ??= this.createIndexes().catch((err: unknown) => {
      this.indexes = undefined;
      throw err;
    });
    return this.indexes;
  }

  private createIndexes(): Promise<void> {
    return createIndexes(this.schema, this.namespace, this.set);
  }

  // ---- reads ---------------------------------------------------------------------------------------------------

  async get(key: port.RecordKey, bins?: string[]): Promise<port.EngineRecord | null> {
    const k = this.key(key);
    try {
      const record = bins ? await this.client.select(k, withTombstoneBin(bins)) : await this.client.get(k);
      return this.liveRecord(key, record, bins);
    } catch (err) {
      if (statusOf(err) === AS_STATUS.ERR_RECORD_NOT_FOUND) return null;
      throw mapAerospikeError(err, `get ${keyHex(key)}`);
    }
  }

  async batchGet(keys: port.RecordKey[], bins?: string[]): Promise<(port.EngineRecord | null)[]> {
    const chunks = await settleAll(chunk(keys, BATCH_CHUNK).map((part) => batchGetChunk(this.batch, part, bins)));
    return chunks.flat();
  }

  /** A read record, or null for a tombstone; the tombstone bin is dropped unless it was asked for. */
  private liveRecord(key: port.RecordKey, record: AerospikeRecord, bins?: string[]): port.EngineRecord | null {
    const out = this.toRecord(key, record);
    if (isTombstone(out.bins)) return null;
    if (bins && !bins.includes(TOMBSTONE_BIN)) delete out.bins[TOMBSTONE_BIN];
    return out;
  }

  private toRecord(key: port.RecordKey, record: AerospikeRecord): port.EngineRecord {
    return {
      key,
      bins: fromAerospikeBins(record.bins as Record<string, unknown>),
      generation: record.gen,
      ttl: record.ttl,
    };
  }

  // ---- writes --------------------------------------------------------------------------------------------------

  async create(key: port.RecordKey, bins: port.Bins, policy: port.WritePolicy = {}): Promise<void> {
    const values = toAerospikeBins(bins);
    for (const name of Object.keys(values)) if (values[name] === null) delete values[name];
    const meta = { ttl: policy.ttl ?? this.as.ttl.NEVER_EXPIRE, generation: policy.generation };
    const { exists } = this.as.policy;
    // A tombstone holds the key: replace it (only it: the put is filtered to tombstones). A tombstone expiring
    // between the two puts makes the replace NOT_FOUND, and the create is tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.put('create', key, values, exists.CREATE, meta);
      } catch (err) {
        if (!(err instanceof EngineError && err.code === 'RECORD_EXISTS')) throw err;
      }
      try {
        return await this.put('create', key, values, exists.REPLACE, meta, this.tombstoneFilter(true));
      } catch (err) {
        const status = statusOf((err as Error).cause);
        if (status === AS_STATUS.FILTERED_OUT) {
          throw new EngineError('RECORD_EXISTS', `aerospike create ${keyHex(key)}: the record exists`, { cause: err });
        }
        if (status !== AS_STATUS.ERR_RECORD_NOT_FOUND || attempt >= 3) throw err;
      }
    }
  }

  /**
   * batchWrite of create-only puts (exists = CREATE), one round trip per chunk. A key the server answers
   * RECORD_EXISTS for may hold a tombstone: that item is retried with create(), which replaces one.
   */
  async batchCreate(items: port.BatchCreateItem[]): Promise<port.BatchWriteResult[]> {
    const chunks = await settleAll(chunk(items, BATCH_CHUNK).map((part) => batchCreateChunk(this.batch, part)));
    const results = chunks.flat();
    await Promise.all(
      results.map(async (r, i) => {
        if (r.ok || r.error.code !== 'RECORD_EXISTS') return;
        try {
          await this.create(items[i].key, items[i].bins, items[i].policy);
          results[i] = { ok: true };
        } catch (err) {
          results[i] = { ok: false, error: mapAerospikeError(err, `create ${keyHex(items[i].key)}`) };
        }
      }),
    );
    return results;
  }

  async update(key: port.RecordKey, bins: port.Bins, policy: port.WritePolicy = {}): Promise<void> {
    const meta = { ttl: policy.ttl ?? this.as.ttl.DONT_UPDATE, generation: policy.generation };
    try {
      await this.put(
        'update',
        key,
        toAerospikeBins(bins),
        this.as.policy.exists.UPDATE,
        meta,
        this.tombstoneFilter(false),
      );
    } catch (err) {
      if (statusOf((err as Error).cause) !== AS_STATUS.FILTERED_OUT) throw err;
      throw new EngineError('RECORD_NOT_FOUND', `aerospike update ${keyHex(key)}: record not found`, { cause: err });
    }
  }

  /** A filter expression admitting only tombstones (true) or only live records (false). */
  private tombstoneFilter(tombstone: boolean): unknown {
    const { exp } = this.as;
    const isTomb = exp.binExists(TOMBSTONE_BIN);
    return tombstone ? isTomb : exp.not(isTomb);
  }

  private async put(
    op: string,
    key: port.RecordKey,
    bins: Record<string, unknown>,
    exists: number,
    meta: { ttl: number; generation?: number },
    filterExpression?: unknown,
  ): Promise<void> {
    const { policy } = this.as;
    const checkGen = meta.generation !== undefined;
    const writePolicy = new this.as.WritePolicy({
      ...this.configured('write'),
      exists,
      key: policy.key.SEND,
      gen: checkGen ? policy.gen.EQ : policy.gen.IGNORE,
      ...(filterExpression === undefined ? {} : { filterExpression: filterExpression as never }),
    });
    const recordMeta = checkGen ? { ttl: meta.ttl, gen: meta.generation } : { ttl: meta.ttl };
    try {
      await retryBusy(
        () => retryNotSent(() => this.client.put(this.key(key), bins as never, recordMeta, writePolicy)),
        this.budget('write'),
      );
    } catch (err) {
      throw mapAerospikeError(err, `${op} ${keyHex(key)}`);
    }
  }

  /**
   * Replaces a live record with a tombstone (replace-only, filtered to live records). The server checks the
   * generation before the filter, so a stale generation against a tombstone is re-read to answer false.
   */
  async remove(key: port.RecordKey, policy: Pick<port.WritePolicy, 'generation'> = {}): Promise<boolean> {
    const tombstone = { [TOMBSTONE_BIN]: Math.floor(Date.now() / 1000) };
    const meta = { ttl: this.tombstoneTtlSeconds, generation: policy.generation };
    try {
      await this.put('remove', key, tombstone, this.as.policy.exists.REPLACE, meta, this.tombstoneFilter(false));
      return true;
    } catch (err) {
      const status = statusOf((err as Error).cause);
      if (status === AS_STATUS.ERR_RECORD_NOT_FOUND || status === AS_STATUS.FILTERED_OUT) return false;
      if (status === AS_STATUS.ERR_RECORD_GENERATION && (await this.get(key, [TOMBSTONE_BIN])) === null) return false;
      throw err;
    }
  }

  /** update() of many records: the items without a generation in batch commands, the others one by one. */
  async batchUpdate(items: port.BatchUpdateItem[]): Promise<port.BatchWriteResult[]> {
    return batchOrSingle(
      items,
      (part) => batchUpdateChunk(this.batch, part),
      async (item) => {
        await this.update(item.key, item.bins, item.policy);
        return { ok: true };
      },
      'update',
    );
  }

  /** remove() of many records: the items without a generation in batch commands, the others one by one. */
  async batchRemove(items: port.BatchRemoveItem[]): Promise<port.BatchRemoveResult[]> {
    return batchOrSingle(
      items,
      (part) => batchRemoveChunk(this.batch, part),
      async (item) => ({ ok: true, existed: await this.remove(item.key, item.policy) }),
      'remove',
    );
  }

  // ---- UDFs ----------------------------------------------------------------------------------------------------

  private udf(call: port.UdfCall) {
    return {
      module: call.module,
      funcname: call.fn,
      args: call.args.map((a, i) => toAerospikeValue(a, `${call.fn} argument ${i + 1}`)),
    };
  }

  async apply(key: port.RecordKey, call: port.UdfCall): Promise<port.BinMap> {
    const context = `apply ${call.module}.${call.fn} on ${keyHex(key)}`;
    const applyPolicy = new this.as.ApplyPolicy({
      ...this.configured('apply'),
      key: this.as.policy.key.SEND,
      ttl: this.as.ttl.DONT_UPDATE,
    });
    let result: unknown;
    try {
      result = await retryBusy(
        () => retryNotSent(() => this.client.apply(this.key(key), this.udf(call) as never, applyPolicy)),
        this.budget('apply'),
      );
    } catch (err) {
      throw mapAerospikeError(err, context);
    }
    return udfResultMap(result, context);
  }

  async batchApply(items: port.BatchApplyItem[]): Promise<port.BatchApplyResult[]> {
    // every chunk settles before a failure is reported: a caller that rolls back on it must not race a chunk that is
    // still writing
    const chunks = await settleAll(chunk(items, BATCH_CHUNK).map((part) => batchApplyChunk(this.batch, part)));
    return chunks.flat();
  }

  // ---- range queries -------------------------------------------------------------------------------------------

  queryRange(query: port.RangeQuery): Promise<port.RangePage> {
    return queryRange(
      {
        client: this.client,
        as: this.as,
        namespace: this.namespace,
        set: this.set,
        deadlineMs: this.queryDeadlineMs,
        ensureIndexes: () => this.ensureIndexes(),
        toRecord: (key, record) => this.toRecord(key, record),
      },
      query,
    );
  }

  // ---- health --------------------------------------------------------------------------------------------------

  async ping(): Promise<void> {
    if (!this.client.isConnected(false)) {
      throw new EngineError('UNAVAILABLE', 'aerospike: the client is not connected to the cluster');
    }
    try {
      await withDeadline(this.client.infoAny('status'), PING_DEADLINE_MS, 'aerospike ping');
    } catch (err) {
      throw mapAerospikeError(err, 'ping');
    }
  }

  /** The spend acknowledgement guard's cluster check (cluster-state.ts). */
  async clusterState(expectedSize?: number): Promise<port.ClusterState> {
    try {
      return await withDeadline(clusterState(this.client, expectedSize), CLUSTER_CHECK_DEADLINE_MS, 'cluster-stable');
    } catch (err) {
      return { stable: false, detail: (err as Error).message };
    }
  }

  private infoSockets?: InfoSockets;

  /** The guard's per-node view of the cluster (cluster-state.ts), over kept info sockets where allowed. */
  clusterView(): Promise<port.ClusterView> {
    if (this.infoSockets === undefined && rawInfoAllowed(this.client)) this.infoSockets = new InfoSockets();
    return clusterView(this.client, this.infoSockets, this.seeds);
  }

  async close(): Promise<void> {
    this.infoSockets?.close();
    if (this.ownsClient) this.client.close();
  }
}
