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
