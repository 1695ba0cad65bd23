/**
 * Range queries: a secondary-index range query (filter.range), paged with the client's paginated queries; the
 * cursor is the saved query state.
 */
import type { AerospikeRecord, Client, Query } from 'aerospike';
import { INDEXED_BINS } from '../../domain/bins';
import {
  EngineError,
  PARTITION_COUNT,
  checkPartitionRange,
  type EngineRecord,
  type RangePage,
  type RangeQuery,
  type RecordKey,
} from '../port';
import { checkQueryState, decodeCursor, encodeCursor } from './cursor';
import { withDeadline } from '../deadline';
import { mapAerospikeError } from './errors';
import type { AerospikeModule } from './native';

const DEFAULT_PAGE = 1000;
/** ms past the client's own query timeout before the engine abandons a page that has not answered */
export const QUERY_DEADLINE_GRACE_MS = 5000;

export interface QueryContext {
  client: Client;
  as: AerospikeModule;
  namespace: string;
  set: string;
  deadlineMs: number;
  /** the indexes exist (created on first use) */
  ensureIndexes(): Promise<void>;
  toRecord(key: RecordKey, record: AerospikeRecord): EngineRecord;
}

/** The client's configured query totalTimeout (30 s when none). */
export function configuredQueryTimeout(client: Client): number {
  const query = (client.config as unknown as { policies?: { query?: { totalTimeout?: unknown } } } | undefined)
    ?.policies?.query;
  const total = query?.totalTimeout;
  return typeof total === 'number' && total > 0 ? total : 30000;
}

export async function queryRange(ctx: QueryContext, query: RangeQuery): Promise<RangePage> {
  if (!(INDEXED_BINS as readonly string[]).includes(query.bin)) {
    throw new EngineError('INVALID', `aerospike query: "${query.bin}" is not an indexed bin`);
  }
  const limit = query.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1) throw new EngineError('INVALID', `aerospike query: bad limit ${limit}`);
  await ctx.ensureIndexes();

  if (query.partitions !== undefined) checkPartitionRange(query.partitions);
  const state = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (state) {
    checkQueryState(state, {
      namespace: ctx.namespace,
      set: ctx.set,
      bin: query.bin,
      partitions: query.partitions ?? { begin: 0, count: PARTITION_COUNT },
    });
  }

  let q: Query;
  let records: AerospikeRecord[];
  try {
    // client.query throws (synchronously) when the client is not connected
    q = ctx.client.query(ctx.namespace, ctx.set, { paginate: true, maxRecords: limit });
    q.where(ctx.as.filter.range(query.bin, query.min, query.max));
    if (query.bins) q.select(query.bins);
    if (state) q.queryState = state as never;
    // the saved state holds the partitions' progress; the C client wants the same filter on every page
    if (query.partitions) q.partitions(query.partitions.begin, query.partitions.count);
    // A page that has not answered by the deadline is abandoned (DeadlineError, TIMEOUT). Seen on a 2-node 8.1
    // cluster: a paginated query whose connection the server gave up on ("error sending ... Connection timed out" in
    // its log) never settled its promise, past the client's own totalTimeout. The page can be asked again from the
    // same cursor.
    records = await withDeadline(
      q.results(),
      ctx.deadlineMs,
      `aerospike query ${query.bin} in [${query.min}, ${query.max}]`,
      'ask the page again',
    );
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw mapAerospikeError(err, `query ${query.bin} in [${query.min}, ${query.max}]`);
  }
  // Aerospike returns a page in partition order; within the page, order by the queried value (then key).
  const page: RangePage = { records: records.map((r) => queriedRecord(ctx, r)).sort(byValue(query.bin)) };
  const cursor = encodeCursor(q.queryState);
  if (cursor !== undefined) page.cursor = cursor;
  return page;
}

function queriedRecord(ctx: QueryContext, record: AerospikeRecord): EngineRecord {
  const userKey = record.key?.key;
  if (!Buffer.isBuffer(userKey)) {
    const digest = record.key?.digest?.toString('hex') ?? 'unknown';
    throw new EngineError(
      'INVALID',
      `aerospike query: record with digest ${digest} in ${ctx.namespace}.${ctx.set} has no stored Buffer user key`,
    );
  }
  return ctx.toRecord(userKey, record);
}

function byValue(bin: string) {
  const num = (r: EngineRecord) => {
    const v = r.bins[bin];
    return typeof v === 'number' || typeof v === 'bigint' ? Number(v) : Number.NaN;
  };
  return (a: EngineRecord, b: EngineRecord) => num(a) - num(b) || Buffer.compare(a.key, b.key);
}
