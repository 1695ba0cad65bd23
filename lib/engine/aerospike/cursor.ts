/**
 * Range-query cursors. The client's paginated query state (`query.queryState` after a full page) is
 * `{ bytes: number[], bytesSize }`: the serialized query with its partitions' progress (as_query_to_bytes). The
 * cursor is those bytes, deflated and base64url-encoded behind a version tag: opaque, compact and URL-safe.
 *
 * A cursor comes back from callers (the unmined-transactions API), and the client hands the bytes to the C
 * client's as_query_from_bytes, which defines the whole query (namespace, set, filter, UDF, operations) and whose
 * failure the native layer does not check (it dereferences the NULL query: the process crashes). So a cursor is
 * parsed here first (checkQueryState) and accepted only when it is exactly a saved range query of this engine.
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

/** What a saved query state must be: a range query on `bin` of this namespace and set. */
export interface ExpectedQuery {
  namespace: string;
  set: string;
  bin: string;
  /** the partitions the query covers (default: all) */
  partitions?: { begin: number; count: number };
}

const PARTITIONS = 4096;
const DIGEST_SIZE = 20;
const MAX_BIN_NAME = 15;
const PREDICATE_RANGE = 1;
const INDEX_NUMERIC = 1;
const INDEX_TYPE_DEFAULT = 0;

/** A strict msgpack reader for the subset as_query_to_bytes writes (integers, booleans, strings). */
class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.pos === this.buf.length;
  }

  private take(n: number): Buffer {
    if (this.pos + n > this.buf.length) throw new Error('truncated');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  private byte(): number {
    return this.take(1)[0];
  }

  int(): bigint {
    const b = this.byte();
    if (b <= 0x7f) return BigInt(b);
    if (b >= 0xe0) return BigInt(b - 0x100);
    switch (b) {
      case 0xcc:
        return BigInt(this.take(1).readUInt8());
      case 0xcd:
        return BigInt(this.take(2).readUInt16BE());
      case 0xce:
        return BigInt(this.take(4).readUInt32BE());
      case 0xcf:
        return this.take(8).readBigUInt64BE();
      case 0xd0:
        return BigInt(this.take(1).readInt8());
      case 0xd1:
        return BigInt(this.take(2).readInt16BE());
      case 0xd2:
        return BigInt(this.take(4).readInt32BE());
      case 0xd3:
        return this.take(8).readBigInt64BE();
      default:
        throw new Error(`expected an integer, found 0x${b.toString(16)}`);
    }
  }

  uint(): bigint {
    const v = this.int();
    if (v < 0n) throw new Error('expected an unsigned integer');
    return v;
  }

  /** An unsigned integer no larger than max, as a number. */
  small(max: number): number {
    const v = this.uint();
    if (v > BigInt(max)) throw new Error(`integer ${v} above ${max}`);
    return Number(v);
  }

  bool(): boolean {
    const b = this.byte();
    if (b === 0xc2) return false;
    if (b === 0xc3) return true;
    throw new Error(`expected a boolean, found 0x${b.toString(16)}`);
  }

  bytes(): Buffer {
    const b = this.byte();
    let n: number;
    if (b >= 0xa0 && b <= 0xbf) n = b - 0xa0;
    else if (b === 0xd9) n = this.take(1).readUInt8();
    else if (b === 0xda) n = this.take(2).readUInt16BE();
    else if (b === 0xdb) n = this.take(4).readUInt32BE();
    else throw new Error(`expected a string, found 0x${b.toString(16)}`);
    return this.take(n);
  }

  str(): string {
    return this.bytes().toString('utf8');
  }
}

function must(cond: boolean, what: string): void {
  if (!cond) throw new Error(what);
}

/**
 * Checks that saved query bytes are a paginated range query of this engine over the expected partitions, in the layout of the C client bundled
 * with the `aerospike` client (7.x: per predicate an index name, the bin, a context flag and an expression flag);
 * anything else (another namespace, set or bin, a UDF or operations, a malformed or truncated state) is INVALID.
 */
export function checkQueryState(state: SavedQueryState, expected: ExpectedQuery): void {
  const r = new Reader(Buffer.from(state.bytes));
  try {
    must(r.str() === expected.namespace, 'another namespace');
    must(r.str() === expected.set, 'another set');
    const selected = r.small(64);
    for (let i = 0; i < selected; i++) {
      const bin = r.bytes();
      must(bin.length >= 1 && bin.length <= MAX_BIN_NAME, 'a bad bin name');
    }
    must(r.small(1) === 1, 'not one filter');
    must(r.bytes().length === 0, 'a filter by index name');
    must(r.str() === expected.bin, 'a filter on another bin');
    must(!r.bool(), 'a filter with a context');
    must(!r.bool(), 'a filter with an expression');
    must(r.int() === BigInt(PREDICATE_RANGE), 'not a range filter');
    must(r.int() === BigInt(INDEX_NUMERIC), 'not an integer filter');
    must(r.int() === BigInt(INDEX_TYPE_DEFAULT), 'not a bin index filter');
    r.int(); // min
    r.int(); // max
    must(!r.bool(), 'a query with a UDF');
    must(!r.bool(), 'a query with operations');
    must(r.bool(), 'no partition progress');
    const { begin, count } = expected.partitions ?? { begin: 0, count: PARTITIONS };
    must(r.small(PARTITIONS) === count, 'other partitions');
    must(r.small(PARTITIONS) === begin, 'other partitions');
    r.bool(); // done
    for (let i = 0; i < count; i++) {
      must(r.small(PARTITIONS) === begin + i, 'partitions out of order');
      r.bool(); // retry
      r.bool(); // digest set
      must(r.bytes().length === DIGEST_SIZE, 'a bad digest');
      r.uint(); // last indexed value
    }
    r.uint(); // max records
    r.uint(); // records per second
    r.uint(); // ttl
    must(r.bool(), 'not a paginated query');
    r.bool(); // no bins
    must(r.done, 'trailing bytes');
  } catch (err) {
    throw new EngineError('INVALID', `invalid range query cursor: ${(err as Error).message}`);
  }
}
