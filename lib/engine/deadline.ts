/**
 * Every wait on an engine has a deadline (docs/failure-modes.md): a wait that expires is a DeadlineError (an
 * EngineError with code TIMEOUT) naming the operation, never a hang.
 */
import { EngineError } from './port';

export class DeadlineError extends EngineError {
  constructor(
    /** what was waited for: "create index …", "register UDF module …", "query …", "cluster check", … */
    readonly operation: string,
    readonly deadlineMs: number,
    hint = '',
  ) {
    super('TIMEOUT', `${operation}: no answer within ${deadlineMs} ms${hint ? `; ${hint}` : ''}`);
    this.name = 'DeadlineError';
  }
}

/**
 * `work`, or a DeadlineError once `ms` have passed. A late answer (or failure) of `work` is dropped: the caller has
 * moved on.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, operation: string, hint?: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(operation, ms, hint)), ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Asks `done()` every `pollMs` until it answers true, for at most `ms` (then a DeadlineError naming `operation`).
 * A `done()` that throws ends the wait with its error.
 */
export async function pollUntil(
  done: () => Promise<boolean>,
  options: { pollMs: number; deadlineMs: number; operation: string },
): Promise<void> {
  const { pollMs, deadlineMs, operation } = options;
  const until = Date.now() + deadlineMs;
  for (;;) {
    const left = until - Date.now();
    if (left <= 0) throw new DeadlineError(operation, deadlineMs);
    let finished: boolean;
    try {
      finished = await withDeadline(done(), left, operation);
    } catch (err) {
      if (err instanceof DeadlineError) throw new DeadlineError(operation, deadlineMs);
      throw err;
    }
    if (finished) return;
    const pause = Math.min(pollMs, until - Date.now());
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * `op()`, sent again every `pauseMs` while it fails in a way `retryable` accepts and the next try would start before
 * `until` (a Date.now() time); otherwise its failure is thrown. For the start-up's questions to a cluster in flux.
 */
export async function retryWhile<T>(
  op: () => Promise<T>,
  retryable: (err: unknown) => boolean,
  until: number,
  pauseMs: number,
  now: () => number = Date.now,
): Promise<T> {
  for (;;) {
    try {
      return await op();
    } catch (err) {
      if (!retryable(err) || now() + pauseMs >= until) throw err;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}
