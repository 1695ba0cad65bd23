/**
 * Range-query cursors. The client's paginated query state (`query.queryState` after a full page) is
 * `{ bytes: number[], bytesSize }`: the serialized query with its partitions' progress (as_query_to_bytes). The
 * cursor is those bytes, deflated and base64url-encoded behind a version tag: opaque, compact and URL-safe.
 */
import { deflateRawSync, inflateRawSync } from 'zlib';
import { EngineError } from '../port';

const TAG = 'as1.';

export interface SavedQueryState {
  bytes: number[];
  bytesSize: number;
}

function isByteArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((n) => Number.isInteger(n) && n >= 0 && n <= 255);
}

/** The cursor of a query state, or undefined when the state says the query is complete. */
export function encodeCursor(state: unknown): string | undefined {
  if (state === undefined || state === null) return undefined;
  const bytes = (state as Partial<SavedQueryState>).bytes;
  if (!isByteArray(bytes) || bytes.length === 0) {
    throw new EngineError('UNKNOWN', 'aerospike query: the client returned a query state of an unexpected shape');
  }
  return TAG + deflateRawSync(Buffer.from(bytes)).toString('base64url');
}

export function decodeCursor(cursor: string): SavedQueryState {
  const bad = (why: string) => new EngineError('INVALID', `invalid range query cursor: ${why}`);
  if (typeof cursor !== 'string' || !cursor.startsWith(TAG)) throw bad('not a cursor of the Aerospike engine');
  let bytes: Buffer;
  try {
    bytes = inflateRawSync(Buffer.from(cursor.slice(TAG.length), 'base64url'));
  } catch {
    throw bad('corrupt');
  }
  if (bytes.length === 0) throw bad('empty');
  return { bytes: Array.from(bytes), bytesSize: bytes.length };
}
