/**
 * One cleanup pass at a time. Two overlapping passes (the schedule and POST /v1/cleanup, or a retried scheduled
 * invocation) would undo each other's two-phase delete: one pass clears the `deleting` marks of a tx it keeps while
 * the other is removing that tx's records, so an output unspent by a reorg in between would be deleted.
 *
 * The lock is a create-only record with a TTL: whoever creates it runs the pass; a pass that dies leaves it until the
 * TTL expires (the pass's time budget plus a grace period), and the pass after that takes over.
 */
import { randomUUID } from 'crypto';
import { CLEANUP_PASS_LOCK_KEY } from '../domain/keys';
import { EngineError, type RecordEngine } from '../engine/port';

/** Seconds a lock outlives its pass's deadline (covers a last engine call that overruns it). */
export const PASS_LOCK_GRACE_SECONDS = 30;
/** Longest budget a lock covers (a pass without a deadline), seconds. */
export const PASS_LOCK_MAX_SECONDS = 900;

export interface PassLock {
  owner: string;
  release(): Promise<void>;
}

/** The lock's TTL for a pass that must stop by `deadline` (epoch ms), started at `now`. */
export function passLockTtlSeconds(now: number, deadline: number): number {
  const budget = Number.isFinite(deadline) ? Math.max(0, Math.ceil((deadline - now) / 1000)) : PASS_LOCK_MAX_SECONDS;
  return Math.min(budget, PASS_LOCK_MAX_SECONDS) + PASS_LOCK_GRACE_SECONDS;
}

/** Takes the lock, or answers null when another pass holds it. Engine failures are thrown. */
export async function acquirePassLock(engine: RecordEngine, ttlSeconds: number): Promise<PassLock | null> {
  const owner = randomUUID();
  try {
    await engine.create(CLEANUP_PASS_LOCK_KEY, { passOwner: owner, startedAt: Date.now() }, { ttl: ttlSeconds });
  } catch (err) {
    if (err instanceof EngineError && err.code === 'RECORD_EXISTS') return null;
    throw err;
  }
  return {
    owner,
    async release() {
      try {
        const lock = await engine.get(CLEANUP_PASS_LOCK_KEY);
        // only our own lock: after a TTL expiry another pass may hold it now
        if (lock?.bins.passOwner === owner) await engine.remove(CLEANUP_PASS_LOCK_KEY, { generation: lock.generation });
      } catch {
        // the TTL removes it
      }
    },
  };
}
