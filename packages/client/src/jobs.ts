/**
 * Block-size jobs: a million txids are split into requests whose JSON body stays under the payload limit (Lambda's
 * 6 MB less the event reserve, the server's MAX_BODY_BYTES) and an item count, and the requests run with bounded
 * concurrency, reporting progress after each.
 */
import { MAX_BODY_BYTES } from './generated/api-types.js';

export interface JobProgress {
  /** items whose request has finished */
  done: number;
  total: number;
  /** requests finished */
  requests: number;
}

export interface JobOptions {
  /** requests in flight at once; default 4 */
  concurrency?: number;
  /** items per request; the default depends on the job */
  maxItemsPerRequest?: number;
  /** JSON bytes per request body; default the server's body limit less 1 KiB */
  maxRequestBytes?: number;
  onProgress?: (progress: JobProgress) => void;
}

export const DEFAULT_MAX_REQUEST_BYTES = MAX_BODY_BYTES - 1024;

/**
 * Splits items into chunks of at most `maxItems` whose JSON body (`envelopeBytes` for the rest of the body plus each
 * item's JSON and a comma) stays at or under `maxBytes`. An item too large on its own is a chunk by itself (the
 * server answers it 413).
 */
export function chunkItems<T>(
  items: readonly T[],
  options: { maxItems: number; maxBytes: number; envelopeBytes: number; itemBytes?: (item: T) => number },
): T[][] {
  const sizeOf = options.itemBytes ?? jsonBytes;
  const chunks: T[][] = [];
  let chunk: T[] = [];
  let bytes = options.envelopeBytes;
  for (const item of items) {
    const size = sizeOf(item) + 1;
    if (chunk.length > 0 && (chunk.length >= options.maxItems || bytes + size > options.maxBytes)) {
      chunks.push(chunk);
      chunk = [];
      bytes = options.envelopeBytes;
    }
    chunk.push(item);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

const PLAIN = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/** Bytes of a value's JSON; a plain ASCII string (a txid) without serializing it. */
export function jsonBytes(value: unknown): number {
  if (typeof value === 'string' && PLAIN.test(value)) return value.length + 2;
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/**
 * Runs `run` on every chunk with at most `concurrency` at once. The first failure stops new chunks from starting;
 * those in flight finish; then the failure is thrown as a JobError saying how far the job got.
 */
export async function runChunks<T>(
  chunks: readonly T[][],
  options: { concurrency?: number; onProgress?: (p: JobProgress) => void },
  run: (chunk: T[], index: number) => Promise<void>,
): Promise<void> {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const progress: JobProgress = { done: 0, total, requests: 0 };
  let next = 0;
  let failure: { error: unknown; index: number } | undefined;
  const worker = async () => {
    while (failure === undefined && next < chunks.length) {
      const index = next++;
      try {
        await run(chunks[index], index);
      } catch (error) {
        failure ??= { error, index };
        return;
      }
      progress.done += chunks[index].length;
      progress.requests++;
      options.onProgress?.({ ...progress });
    }
  };
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 4, chunks.length));
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failure) throw new JobError(failure.error, { ...progress }, chunks[failure.index]);
}

/** A block job stopped at a failed request (after its retries). Re-running an idempotent job is safe. */
export class JobError<T = unknown> extends Error {
  constructor(
    /** the error of the failed request */
    readonly failure: unknown,
    /** how far the job got: items and requests that finished */
    readonly progress: JobProgress,
    /** the items of the request that failed */
    readonly failedItems: T[],
  ) {
    super(
      `job stopped after ${progress.done} of ${progress.total} items: ${failure instanceof Error ? failure.message : String(failure)}`,
      { cause: failure },
    );
    this.name = 'JobError';
  }
}
