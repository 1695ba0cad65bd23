/**
 * Retrying single-record writes that the client reports as not sent. An AerospikeError carries `inDoubt`: true when
 * the command may have reached the server (e.g. a timeout after sending), false when it certainly did not apply.
 * Writes keep maxRetries 0 (connect.ts: a retried write whose first attempt did apply would answer RECORD_EXISTS /
 * GENERATION_MISMATCH for its own effect); this retries only a failure that is both not in doubt and transient
 * (no connection, connection refused or lost before sending, node gone, timeout before sending, cluster in flux).
 *
 * Batches are not retried here: the client runs one command per node, and one failing fails the whole call with that
 * command's error, whose `inDoubt` says nothing of the other nodes' commands (they may have applied). The store
 * recovers failed batches itself (rollback by expected spender, idempotent re-sends).
 */
import { AS_STATUS } from './errors';

const TRANSIENT: ReadonlySet<number> = new Set([
  AS_STATUS.ERR_ASYNC_CONNECTION,
  AS_STATUS.ERR_NO_MORE_CONNECTIONS,
  AS_STATUS.ERR_INVALID_NODE,
  AS_STATUS.ERR_CONNECTION,
  AS_STATUS.ERR_TIMEOUT,
  AS_STATUS.ERR_CLUSTER,
]);

/** True for a raw client error that certainly did not apply and may succeed if sent again. */
export function isNotSentTransient(err: unknown): boolean {
  const e = err as { code?: unknown; inDoubt?: unknown } | null | undefined;
  return typeof e?.code === 'number' && TRANSIENT.has(e.code) && e.inDoubt === false;
}

/** Runs `send`; on a not-sent transient failure sends again, at most `retries` more times, after `delayMs`. */
export async function retryNotSent<T>(send: () => Promise<T>, retries = 2, delayMs = 25): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (attempt >= retries || !isNotSentTransient(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, delayMs * (attempt + 1)));
    }
  }
}

/**
 * Hot records. The server queues at most `transaction-pending-limit` commands per record (the namespace setting the
 * deployment pins, docs/settings.md); one more is refused with KEY_BUSY (status 14, "Too many concurrent requests for
 * one record") before it touches the record. So a busy answer certainly did not write, and the engine sends it again
 * after an exponential backoff with full jitter (a random wait in [0, min(maxMs, firstMs x 2^attempt)], so the
 * refused commands do not come back in step), as long as the command's time budget (its configured totalTimeout) is
 * not spent. Past the budget the busy answer stands (UNAVAILABLE, a 503 the caller may retry).
 */
export interface BusyRetryOptions {
  /** the command's time budget, ms */
  budgetMs: number;
  firstMs?: number;
  maxMs?: number;
  random?: () => number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export const BUSY_FIRST_DELAY_MS = 2;
export const BUSY_MAX_DELAY_MS = 100;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The wait before busy retry `attempt` (0-based): full jitter over an exponentially growing cap. */
export function busyDelayMs(attempt: number, o: Pick<BusyRetryOptions, 'firstMs' | 'maxMs' | 'random'> = {}): number {
  const cap = Math.min(o.maxMs ?? BUSY_MAX_DELAY_MS, (o.firstMs ?? BUSY_FIRST_DELAY_MS) * 2 ** Math.min(attempt, 20));
  return Math.floor((o.random ?? Math.random)() * (cap + 1));
}

/** True for a raw client error or batch status saying the record was busy (not written). */
export function isBusy(errOrStatus: unknown): boolean {
  if (typeof errOrStatus === 'number') return errOrStatus === AS_STATUS.ERR_RECORD_BUSY;
  return (errOrStatus as { code?: unknown } | null | undefined)?.code === AS_STATUS.ERR_RECORD_BUSY;
}

/** Runs `send`; a KEY_BUSY failure is sent again after a jittered backoff while the budget lasts. */
export async function retryBusy<T>(send: () => Promise<T>, o: BusyRetryOptions): Promise<T> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? defaultSleep;
  const start = now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!isBusy(err)) throw err;
      const wait = busyDelayMs(attempt, o);
      if (now() - start + wait >= o.budgetMs) throw err;
      await sleep(wait);
    }
  }
}

/**
 * A batch whose records may each answer KEY_BUSY: the busy records (only they: the others were written or answered)
 * are sent again as a smaller batch after a jittered backoff while the budget lasts; one result per item, in order.
 */
export async function retryBusyItems<I, R>(
  items: I[],
  send: (items: I[]) => Promise<R[]>,
  busy: (result: R) => boolean,
  o: BusyRetryOptions,
): Promise<R[]> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? defaultSleep;
  const start = now();
  const results = await send(items);
  let pending = results.flatMap((r, i) => (busy(r) ? [i] : []));
  for (let attempt = 0; pending.length > 0; attempt++) {
    const wait = busyDelayMs(attempt, o);
    if (now() - start + wait >= o.budgetMs) break;
    await sleep(wait);
    const again = await send(pending.map((i) => items[i]));
    again.forEach((r, n) => (results[pending[n]] = r));
    pending = pending.filter((_, n) => busy(again[n]));
  }
  return results;
}
