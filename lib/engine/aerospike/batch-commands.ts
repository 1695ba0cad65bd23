/**
 * The Aerospike engine's batch commands (engine.ts): one batchRead or batchWrite per chunk of BATCH_CHUNK records,
 * KEY_BUSY records sent again (retry.ts), a status per record mapped to that item's result; items that cannot go in a
 * batch command (a generation check) run as single commands, side by side (batchOrSingle).
 */
import type { AerospikeRecord, BatchResult, Client, Key } from 'aerospike';
import { mapLimited } from '../../domain/concurrency';
import { EngineError, TOMBSTONE_BIN } from '../port';
import type * as Port from '../port';
import { AS_STATUS, batchStatusError, mapAerospikeError } from './errors';
import type { AerospikeModule } from './native';
import { isBusy, retryBusyItems } from './retry';
import { chunk, settleAll } from './settle';
import { toAerospikeBins, toAerospikeValue, udfResultMap } from './values';

/** Records per batch command. */
export const BATCH_CHUNK = 1000;
/** Single commands a batch runs at once for its items that cannot go in a batch command (a generation check). */
export const SINGLE_COMMANDS_AT_ONCE = 64;

/** What the batch commands need of the engine. */
export interface BatchContext {
  client: Client;
  as: AerospikeModule;
  key(key: Port.RecordKey): Key;
  /** a read record, or null for a tombstone */
  liveRecord(key: Port.RecordKey, record: AerospikeRecord, bins?: string[]): Port.EngineRecord | null;
  /**
   * The batch policy (the configured batchParentWrite) with a filter expression admitting only live records, not
   * tombstones: a batch write's records without a filter of their own are filtered by it on the server (a
   * tombstone answers FILTERED_OUT), so the expression is converted and sent once per batch, not once per record.
   */
  liveOnlyBatchPolicy: object;
  tombstoneTtlSeconds: number;
  /** the KEY_BUSY retry budget of a batch */
  budget: { budgetMs: number };
  udf(call: Port.UdfCall): object;
}

let writeOp: { as: AerospikeModule; op: number } | undefined;

/**
 * The opcode of the client's write operation. A batch write's operations are built as `{op, bin, value}`, the fields
 * the client's `operations.write(bin, value)` sets and its native layer reads, without the Operation instance and
 * the Object.assign it costs per bin (a create writes about 20 bins per record).
 */
function writeOpcode(as: AerospikeModule): number {
  if (writeOp?.as !== as) writeOp = { as, op: as.operations.write('bin', 0).op };
  return writeOp.op;
}

export function keyHex(key: Port.RecordKey): string {
  return key.toString('hex');
}

/** A bin projection that also reads the tombstone bin, so that a tombstone is recognised. */
export function withTombstoneBin(bins: string[]): string[] {
  return bins.includes(TOMBSTONE_BIN) ? bins : [...bins, TOMBSTONE_BIN];
}

export async function batchGetChunk(
  ctx: BatchContext,
  keys: Port.RecordKey[],
  bins?: string[],
): Promise<(Port.EngineRecord | null)[]> {
  if (keys.length === 0) return [];
  const records = keys.map((key) => ({
    type: ctx.as.batchType.BATCH_READ,
    key: ctx.key(key),
    ...(bins ? { bins: withTombstoneBin(bins) } : { readAllBins: true }),
  }));
  let results: BatchResult[];
  try {
    results = await ctx.client.batchRead(records);
  } catch (err) {
    throw mapAerospikeError(err, `batch get of ${keys.length} records`);
  }
  return results.map((r, i) => {
    if (r.status === AS_STATUS.OK) return ctx.liveRecord(keys[i], r.record, bins);
    if (r.status === AS_STATUS.ERR_RECORD_NOT_FOUND) return null;
    throw batchStatusError(Number(r.status), `batch get ${keyHex(keys[i])}`);
  });
}

export async function batchCreateChunk(
  ctx: BatchContext,
  items: Port.BatchCreateItem[],
): Promise<Port.BatchWriteResult[]> {
  if (items.length === 0) return [];
  const { exists, key } = ctx.as.policy;
  const op = writeOpcode(ctx.as);
  const type = ctx.as.batchType.BATCH_WRITE;
  // the native layer reads each record's policy: records without a ttl of their own share one object
  const policyOf = (ttl: number) => ({ exists: exists.CREATE, key: key.SEND, ttl });
  const shared = policyOf(ctx.as.ttl.NEVER_EXPIRE);
  const records = items.map((item) => {
    // a null bin is not written (a create has nothing to remove)
    const ops = [];
    for (const bin of Object.keys(item.bins)) {
      const value = item.bins[bin];
      if (value !== undefined && value !== null) ops.push({ op, bin, value: toAerospikeValue(value, bin) });
    }
    const ttl = item.policy?.ttl;
    return { type, key: ctx.key(item.key), ops, policy: ttl === undefined ? shared : policyOf(ttl) };
  });
  const results = await batchWriteRecords(ctx, records, `batch create of ${items.length} records`);
  return results.map((r, i): Port.BatchWriteResult => {
    if (r.status === AS_STATUS.OK) return { ok: true };
    return { ok: false, error: batchStatusError(Number(r.status), `create ${keyHex(items[i].key)}`) };
  });
}

export async function batchUpdateChunk(
  ctx: BatchContext,
  items: Port.BatchUpdateItem[],
): Promise<Port.BatchWriteResult[]> {
  const { exists, key } = ctx.as.policy;
  const records = items.map((item) => ({
    type: ctx.as.batchType.BATCH_WRITE,
    key: ctx.key(item.key),
    // a null value removes the bin, as in update()
    ops: Object.entries(toAerospikeBins(item.bins)).map(([bin, v]) => ctx.as.operations.write(bin, v as never)),
    policy: { exists: exists.UPDATE, key: key.SEND, ttl: item.policy?.ttl ?? ctx.as.ttl.DONT_UPDATE },
  }));
  const results = await batchWriteRecords(
    ctx,
    records,
    `batch update of ${items.length} records`,
    ctx.liveOnlyBatchPolicy,
  );
  return results.map((r, i): Port.BatchWriteResult => {
    const status = Number(r.status);
    if (status === AS_STATUS.OK) return { ok: true };
    const context = `update ${keyHex(items[i].key)}`;
    if (status === AS_STATUS.FILTERED_OUT) {
      return { ok: false, error: new EngineError('RECORD_NOT_FOUND', `aerospike ${context}: record not found`) };
    }
    return { ok: false, error: batchStatusError(status, context) };
  });
}

export async function batchRemoveChunk(
  ctx: BatchContext,
  items: Port.BatchRemoveItem[],
): Promise<Port.BatchRemoveResult[]> {
  const { exists, key } = ctx.as.policy;
  const tombstone = ctx.as.operations.write(TOMBSTONE_BIN, Math.floor(Date.now() / 1000));
  // a tombstone is left alone (FILTERED_OUT: removed already) by the batch policy's filter
  const policy = { exists: exists.REPLACE, key: key.SEND, ttl: ctx.tombstoneTtlSeconds };
  const records = items.map((item) => ({
    type: ctx.as.batchType.BATCH_WRITE,
    key: ctx.key(item.key),
    ops: [tombstone],
    policy,
  }));
  const results = await batchWriteRecords(
    ctx,
    records,
    `batch remove of ${items.length} records`,
    ctx.liveOnlyBatchPolicy,
  );
  return results.map((r, i): Port.BatchRemoveResult => {
    const status = Number(r.status);
    if (status === AS_STATUS.OK) return { ok: true, existed: true };
    if (status === AS_STATUS.ERR_RECORD_NOT_FOUND || status === AS_STATUS.FILTERED_OUT) {
      return { ok: true, existed: false };
    }
    return { ok: false, error: batchStatusError(status, `remove ${keyHex(items[i].key)}`) };
  });
}

/**
 * One result per item, in order: the items without a generation through `batch` (chunks of BATCH_CHUNK, each
 * settled before a failure is reported), the others through `single`, SINGLE_COMMANDS_AT_ONCE at a time; a single
 * command's failure is that item's error (`what` names the command in it).
 */
export async function batchOrSingle<
  I extends { key: Port.RecordKey; policy?: { generation?: number } },
  R extends { ok: true } | { ok: false; error: EngineError },
>(items: I[], batch: (part: I[]) => Promise<R[]>, single: (item: I) => Promise<R>, what: string): Promise<R[]> {
  const batched: number[] = [];
  const singles: number[] = [];
  items.forEach((item, i) => (item.policy?.generation === undefined ? batched : singles).push(i));
  const results = new Array<R>(items.length);
  const batches = settleAll(chunk(batched, BATCH_CHUNK).map((part) => batch(part.map((i) => items[i])))).then(
    (chunks) => chunks.flat().forEach((r, n) => (results[batched[n]] = r)),
  );
  const singleRuns = mapLimited(singles, SINGLE_COMMANDS_AT_ONCE, async (i) => {
    try {
      results[i] = await single(items[i]);
    } catch (err) {
      results[i] = { ok: false, error: mapAerospikeError(err, `${what} ${keyHex(items[i].key)}`) } as R;
    }
  });
  await settleAll<unknown>([batches, singleRuns]);
  return results;
}

/**
 * client.batchWrite of write or apply records (with `policy`, else the configured batchParentWrite); KEY_BUSY records
 * are sent again (retry.ts).
 */
async function batchWriteRecords(
  ctx: BatchContext,
  records: object[],
  context: string,
  policy?: object,
): Promise<BatchResult[]> {
  try {
    return await retryBusyItems(
      records,
      (part) => (policy ? ctx.client.batchWrite(part as never, policy as never) : ctx.client.batchWrite(part as never)),
      (r) => isBusy(Number(r.status)),
      ctx.budget,
    );
  } catch (err) {
    throw mapAerospikeError(err, context);
  }
}

export async function batchApplyChunk(
  ctx: BatchContext,
  items: Port.BatchApplyItem[],
): Promise<Port.BatchApplyResult[]> {
  if (items.length === 0) return [];
  const policy = { key: ctx.as.policy.key.SEND, ttl: ctx.as.ttl.DONT_UPDATE };
  const records = items.map((item) => ({
    type: ctx.as.batchType.BATCH_APPLY,
    key: ctx.key(item.key),
    udf: ctx.udf(item),
    policy,
  }));
  const results = await batchWriteRecords(ctx, records, `batch apply of ${items.length} records`);
  return results.map((r, i): Port.BatchApplyResult => {
    const item = items[i];
    // the error's context, built only for an item that failed (a spend batch has one item per record it touches)
    const context = () => `apply ${item.module}.${item.fn} on ${keyHex(item.key)}`;
    if (r.status !== AS_STATUS.OK) return { ok: false, error: batchStatusError(Number(r.status), context()) };
    try {
      const bins = (r.record?.bins ?? {}) as Record<string, unknown>;
      return { ok: true, result: udfResultMap(bins.SUCCESS, context) };
    } catch (err) {
      return { ok: false, error: mapAerospikeError(err, context()) };
    }
  });
}
