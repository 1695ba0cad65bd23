/**
 * The items of a batch request (POST /v1/batch/...): the envelope's size limit (MAX_BATCH_ITEMS), each item checked
 * with its single request's schema (a bad item fails alone, before anything is stored for it), and each item's
 * outcome as {status, result} or {status, error}: the status, code, message and details the single request would
 * have answered.
 */
import * as z from 'zod';
import type { ItemResult } from '../store/types';
import { invalidArgument, mapError } from './errors';
import { zodError } from './zod-error';

export interface BatchItemOutcome {
  status: number;
  result?: unknown;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

/** An item that failed its check: its outcome, marked so that it cannot be taken for an item's value. */
class ItemFailure {
  constructor(readonly outcome: BatchItemOutcome) {}
}

/** 400 naming the list when it holds more than `max` items. */
export function checkBatchSize(list: unknown[], field: string, max: number): void {
  if (list.length > max) {
    throw invalidArgument(field, `at most ${max} items a request (MAX_BATCH_ITEMS), got ${list.length}`);
  }
}

/** Each item parsed with `schema` (as the single request's body), or its 400 outcome. */
export function parseItems<T extends z.ZodType>(list: unknown[], schema: T): (z.output<T> | ItemFailure)[] {
  return list.map((item) => {
    const parsed = schema.safeParse(item);
    return parsed.success
      ? (parsed.data as z.output<T>)
      : new ItemFailure(failed(zodError('body', item, parsed.error)));
  });
}

/**
 * Scalar items (a tx hex, a txid), each checked as the single request's `name` field, which errors name. An item is
 * checked with its own schema; only a failed one is checked again inside the single request's body (`{[name]: schema}`,
 * built on the request's first failure), for that request's error: a body object per item and a schema built per
 * request cost more than the check itself (the fresh schema never ran optimized).
 */
export function parseScalarItems<T extends z.ZodType>(
  list: unknown[],
  name: string,
  schema: T,
): (z.output<T> | ItemFailure)[] {
  let single: z.ZodType | undefined;
  return list.map((item) => {
    const parsed = schema.safeParse(item);
    if (parsed.success) return parsed.data as z.output<T>;
    const body = { [name]: item };
    single ??= z.object({ [name]: schema });
    return new ItemFailure(failed(zodError('body', body, single.safeParse(body).error ?? parsed.error)));
  });
}

/** The outcome of an item whose operation threw `err`: as the single request's error response. */
export function failed(err: unknown): BatchItemOutcome {
  const mapped = mapError(err);
  return { status: mapped.statusCode, error: mapped.body.error as BatchItemOutcome['error'] };
}

/** Runs the store's batch call on the valid items and puts every outcome back in request order. */
export async function runItems<I, R>(
  parsed: (I | ItemFailure)[],
  call: (valid: I[]) => Promise<ItemResult<R>[]>,
  success: (value: R) => BatchItemOutcome,
): Promise<{ results: BatchItemOutcome[] }> {
  const valid: I[] = [];
  const at: number[] = [];
  const results: BatchItemOutcome[] = parsed.map((p, i) => {
    if (p instanceof ItemFailure) return p.outcome;
    valid.push(p);
    at.push(i);
    return { status: 0 };
  });
  if (valid.length > 0) {
    const answers = await call(valid);
    answers.forEach((a, n) => (results[at[n]] = a.ok ? success(a.value) : failed(a.error)));
  }
  return { results };
}
