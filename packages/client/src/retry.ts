/**
 * Retries with full-jitter exponential backoff, only where a second attempt cannot do harm:
 *
 * - THROTTLED (429: API Gateway's throttle, Lambda's TooManyRequestsException): the request was refused before it
 *   ran; retried for every operation.
 * - A TransportError with sent = false (connection refused, DNS, no credentials): nothing reached the service;
 *   retried for every operation.
 * - STORAGE_ERROR (503), BAD_GATEWAY / GATEWAY_TIMEOUT (502 / 504) and a connection lost after the request was sent:
 *   the request may have been applied, so these are retried only for idempotent operations (operations.ts says
 *   which and why: spend and create of the same tx, setMined, reads, ...).
 * - Never: 4xx other than 429 (a 409 conflict stays a conflict), 500 INTERNAL_ERROR, FUNCTION_ERROR.
 */
import { ApiError, TransportError } from './errors.js';

export interface RetryOptions {
  /** attempts in all, the first included; default 4; 1 disables retries */
  attempts?: number;
  /** first backoff ceiling, ms; default 50 */
  baseMs?: number;
  /** backoff ceiling, ms; default 2000 */
  maxMs?: number;
  /** test hook: the random source of the jitter */
  random?: () => number;
  /** called before each retry (logging, metrics) */
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown; operation: string }) => void;
}

/** Whether an error may be retried, for an operation that is (or is not) idempotent. */
export function isRetryable(err: unknown, idempotent: boolean): boolean {
  if (err instanceof TransportError) return !err.sent || idempotent;
  if (err instanceof ApiError) {
    if (err.code === 'THROTTLED') return true;
    if (err.code === 'STORAGE_ERROR' || err.code === 'BAD_GATEWAY' || err.code === 'GATEWAY_TIMEOUT') {
      return idempotent;
    }
  }
  return false;
}

/** Full jitter: a delay drawn uniformly from [0, min(maxMs, baseMs * 2^(attempt-1))]. */
export function backoffMs(attempt: number, options: RetryOptions = {}): number {
  const base = options.baseMs ?? 50;
  const max = options.maxMs ?? 2000;
  const ceiling = Math.min(max, base * 2 ** (attempt - 1));
  return Math.round((options.random ?? Math.random)() * ceiling);
}

/** Runs `fn` until it succeeds, fails with an error that may not be retried, or the attempts are used up. */
export async function withRetries<T>(
  operation: string,
  idempotent: boolean,
  options: RetryOptions,
  fn: (attempt: number) => Promise<T>,
): Promise<T> {
  const attempts = Math.max(1, options.attempts ?? 4);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= attempts || !isRetryable(err, idempotent)) throw err;
      const delayMs = backoffMs(attempt, options);
      options.onRetry?.({ attempt, delayMs, error: err, operation });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
