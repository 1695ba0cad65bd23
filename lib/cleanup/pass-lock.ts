/**
 * One cleanup pass at a time per partition range. Two overlapping passes over the same range (the schedule and
 * POST /v1/cleanup, or a retried scheduled invocation) would undo each other's two-phase delete: one pass clears the
 * `deleting` marks of a tx it keeps while the other is removing that tx's records, so an output unspent by a reorg in
 * between would be deleted. Passes over disjoint ranges do not meet: every step of a tx's delete is driven by its
 * master record, which lives in exactly one partition range (ranges already run side by side within one pass).
 *
 * A range's lock is a create-only record with a TTL (key rangeLockKey): whoever creates it runs the range; a pass that
 * dies leaves it until the TTL expires (the pass's time budget plus a grace period), and the pass after that takes
 * over. A pass takes the locks of all its ranges in one engine batch and releases those it owns in one.
 */
import { randomUUID } from 'crypto';
import { CLEANUP_PASS_LOCK_KEY } from '../domain/keys';
import { checkPartitionRange, EngineError, type PartitionRange, type RecordEngine } from '../engine/port';

/** Seconds a lock outlives its pass's deadline (covers a last engine call that overruns it). */
export const PASS_LOCK_GRACE_SECONDS = 30;
/** Longest budget a lock covers (a pass without a deadline), seconds. */
export const PASS_LOCK_MAX_SECONDS = 900;

/** The lock's TTL for a pass that must stop by `deadline` (epoch ms), started at `now`. */
export function passLockTtlSeconds(now: number, deadline: number): number {
  const budget = Number.isFinite(deadline) ? Math.max(0, Math.ceil((deadline - now) / 1000)) : PASS_LOCK_MAX_SECONDS;
  return Math.min(budget, PASS_LOCK_MAX_SECONDS) + PASS_LOCK_GRACE_SECONDS;
}

/**
 * Key of the lock of partitions [begin, begin + count): `cleanup-pass-lock:<begin>:<count>` (ASCII, at most 27
 * bytes: never a tx's 32 or 36). The key depends on how the key space is split (CLEANUP_PARTITION_RANGES): passes
 * splitting it differently do not see each other's locks (docs/cleanup.md, "Changing the partition ranges").
 */
export function rangeLockKey(range: PartitionRange): Buffer {
  checkPartitionRange(range);
  return Buffer.concat([CLEANUP_PASS_LOCK_KEY, Buffer.from(`:${range.begin}:${range.count}`, 'ascii')]);
}

/** Whether the key is a cleanup lock record's. */
export function isCleanupLockKey(key: Buffer): boolean {
  return key.subarray(0, CLEANUP_PASS_LOCK_KEY.length).equals(CLEANUP_PASS_LOCK_KEY);
}

export interface RangeLocks {
  owner: string;
  /** the ranges whose lock this pass took, in the order asked */
  held: PartitionRange[];
  /** the ranges another pass holds (RECORD_EXISTS) */
  busy: PartitionRange[];
  /** the ranges whose lock answered another error: not run (the lock may exist: release() removes it if ours) */
  failed: PartitionRange[];
  /** Removes the locks this pass owns, in one batch read and one batch remove. Never throws (the TTL removes them). */
  release(): Promise<void>;
}

/**
 * Takes the lock of every range in one batchCreate. A failure of the batch as a whole is thrown (after trying to
 * release whatever of it was applied); a failure of one item puts its range in `failed`.
 */
export async function acquireRangeLocks(
  engine: RecordEngine,
  ranges: PartitionRange[],
  ttlSeconds: number,
): Promise<RangeLocks> {
  const owner = randomUUID();
  const startedAt = Date.now();
  const keys = ranges.map(rangeLockKey);
  const release = (asked: number[]) =>
    releaseOwned(
      engine,
      owner,
      asked.map((i) => keys[i]),
    );
  let results;
  try {
    results = await engine.batchCreate(
      keys.map((key) => ({ key, bins: { passOwner: owner, startedAt }, policy: { ttl: ttlSeconds } })),
    );
  } catch (err) {
    // the batch may have been applied in part before its answer was lost
    await release(ranges.map((_, i) => i));
    throw err;
  }
  const locks: RangeLocks = { owner, held: [], busy: [], failed: [], release: async () => {} };
  const mine: number[] = [];
  results.forEach((r, i) => {
    if (r.ok) {
      locks.held.push(ranges[i]);
      mine.push(i);
    } else if (r.error instanceof EngineError && r.error.code === 'RECORD_EXISTS') {
      locks.busy.push(ranges[i]);
    } else {
      // in doubt (a timeout may have written it): released with the others if it is ours
      locks.failed.push(ranges[i]);
      mine.push(i);
    }
  });
  locks.release = () => release(mine);
  return locks;
}

/** Removes those of `keys` whose lock record `owner` holds, each under its generation (no other owner's lock). */
async function releaseOwned(engine: RecordEngine, owner: string, keys: Buffer[]): Promise<void> {
  if (keys.length === 0) return;
  try {
    const records = await engine.batchGet(keys);
    // only our own: after a TTL expiry another pass may hold the range now
    const owned = keys.flatMap((key, i) => {
      const r = records[i];
      return r !== null && r.bins.passOwner === owner ? [{ key, policy: { generation: r.generation } }] : [];
    });
    if (owned.length > 0) await engine.batchRemove(owned);
  } catch {
    // the TTL removes them
  }
}
