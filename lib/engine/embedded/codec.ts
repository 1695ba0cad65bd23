/**
 * The embedded engine's value encoding. The same bytes are stored in SQLite, handed to the Lua runtime and read
 * back from it (lua-prelude.ts implements the Lua half), so a UDF call never re-encodes bins it does not touch.
 *
 * Value: one tag byte, then
 *   0 nil | 1 false | 2 true | 3 int64 LE | 4 float64 LE | 5 string: u32 len + UTF-8 | 6 bytes: u32 len + bytes
 *   7 list: u32 count + values | 8 map: u32 count + (key value)*
 * Record (the bins of one record): repeated [u8 name length][name][u32 value length][value].
 *
 * Map keys: a JS key that is a canonical decimal integer within int64 ("0", "-7", "42") is stored as an integer
 * key (a Lua integer key in the UDF); any other key is a string. Integer keys come back as decimal strings.
 */
import { EngineError, type BinMap, type BinValue, type Bins } from '../port';

export const TAG = { nil: 0, false: 1, true: 2, int: 3, float: 4, string: 5, bytes: 6, list: 7, map: 8 } as const;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER_KEY = /^(0|-?[1-9][0-9]*)$/;
/** Aerospike's limit on bin names. */
export const MAX_BIN_NAME = 15;

class Writer {
  buf = Buffer.allocUnsafe(256);
  pos = 0;

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.pos);
    this.pos += 4;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  utf8(s: string): void {
    const n = Buffer.byteLength(s);
    this.ensure(n);
    this.buf.write(s, this.pos, 'utf8');
    this.pos += n;
  }

  done(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}

function invalid(message: string): EngineError {
  return new EngineError('INVALID', message);
}

function writeInt(w: Writer, v: bigint): void {
  if (v < INT64_MIN || v > INT64_MAX) throw invalid(`integer ${v} is outside the 64-bit range`);
  w.u8(TAG.int);
  w.ensure(8);
  w.buf.writeBigInt64LE(v, w.pos);
  w.pos += 8;
}

function isPlainObject(v: object): v is BinMap {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

function writeValue(w: Writer, v: BinValue | undefined): void {
  if (v === null || v === undefined) return w.u8(TAG.nil);
  switch (typeof v) {
    case 'boolean':
      return w.u8(v ? TAG.true : TAG.false);
    case 'number':
      if (Number.isInteger(v)) return writeInt(w, BigInt(v));
      w.u8(TAG.float);
      w.ensure(8);
      w.buf.writeDoubleLE(v, w.pos);
      w.pos += 8;
      return;
    case 'bigint':
      return writeInt(w, v);
    case 'string':
      w.u8(TAG.string);
      w.u32(Buffer.byteLength(v));
      return w.utf8(v);
    case 'object':
      if (v instanceof Uint8Array) {
        w.u8(TAG.bytes);
        w.u32(v.length);
        return w.bytes(v);
      }
      if (Array.isArray(v)) {
        w.u8(TAG.list);
        w.u32(v.length);
        for (const item of v) writeValue(w, item);
        return;
      }
      if (isPlainObject(v)) return writeMap(w, v);
      throw invalid(`unsupported value: ${Object.prototype.toString.call(v)}`);
    default:
      throw invalid(`unsupported value type: ${typeof v}`);
  }
}

function writeMap(w: Writer, m: BinMap): void {
  // a null map value means no entry (Lua: assigning nil removes the key)
  const keys = Object.keys(m).filter((k) => m[k] !== undefined && m[k] !== null);
  w.u8(TAG.map);
  w.u32(keys.length);
  for (const k of keys) {
    const asInt = INTEGER_KEY.test(k) ? BigInt(k) : undefined;
    if (asInt !== undefined && asInt >= INT64_MIN && asInt <= INT64_MAX) writeInt(w, asInt);
    else writeValue(w, k);
    writeValue(w, m[k]);
  }
}

/** Encodes one value (used for UDF arguments, which travel as a list). */
export function encodeValue(v: BinValue): Buffer {
  const w = new Writer();
  writeValue(w, v);
  return w.done();
}

export function checkBinName(name: string): void {
  const n = Buffer.byteLength(name);
  if (n === 0 || n > MAX_BIN_NAME) throw invalid(`bin name "${name}" must be 1 to ${MAX_BIN_NAME} bytes`);
}

/** One bin of an encoded record: its whole entry and where its value starts. */
export interface BinEntry {
  name: string;
  entry: Buffer;
  value: Buffer;
}

/** Lists the bins of an encoded record without decoding their values. */
export function scanRecord(blob: Buffer): BinEntry[] {
  const out: BinEntry[] = [];
  let pos = 0;
  while (pos < blob.length) {
    const start = pos;
    const nameLen = blob[pos];
    const name = blob.toString('utf8', pos + 1, pos + 1 + nameLen);
    pos += 1 + nameLen;
    const valueLen = blob.readUInt32LE(pos);
    pos += 4;
    const end = pos + valueLen;
    if (end > blob.length) throw new EngineError('UNKNOWN', 'corrupt record encoding');
    out.push({ name, entry: blob.subarray(start, end), value: blob.subarray(pos, end) });
    pos = end;
  }
  return out;
}

/** Encodes a bin entry; null values are skipped by callers (null removes a bin). */
export function encodeBinEntry(name: string, value: BinValue): Buffer {
  checkBinName(name);
  const w = new Writer();
  w.u8(Buffer.byteLength(name));
  w.utf8(name);
  const lenAt = w.pos;
  w.u32(0);
  writeValue(w, value);
  w.buf.writeUInt32LE(w.pos - lenAt - 4, lenAt);
  return w.done();
}

/** Encodes a whole record from bins; null/undefined bins are left out. */
export function encodeRecord(bins: Bins): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(bins)) {
    if (value === null || value === undefined) continue;
    parts.push(encodeBinEntry(name, value));
  }
  return Buffer.concat(parts);
}

/** Merges bins into an encoded record (update semantics: null removes a bin, others replace or add). */
export function mergeRecord(blob: Buffer, bins: Bins): Buffer {
  const parts = new Map<string, Buffer>();
  for (const e of scanRecord(blob)) parts.set(e.name, e.entry);
  for (const [name, value] of Object.entries(bins)) {
    if (value === undefined) continue;
    if (value === null) {
      checkBinName(name);
      parts.delete(name);
    } else parts.set(name, encodeBinEntry(name, value));
  }
  return Buffer.concat([...parts.values()]);
}

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  value(): BinValue {
    const buf = this.buf;
    const tag = buf[this.pos++];
    switch (tag) {
      case TAG.nil:
        return null;
      case TAG.false:
        return false;
      case TAG.true:
        return true;
      case TAG.int: {
        const lo = buf.readUInt32LE(this.pos);
        const hi = buf.readInt32LE(this.pos + 4);
        const at = this.pos;
        this.pos += 8;
        // |hi| < 2^21 keeps the value within Number.MAX_SAFE_INTEGER
        if (hi >= -0x200000 && hi < 0x200000) return hi * 0x100000000 + lo;
        return buf.readBigInt64LE(at);
      }
      case TAG.float: {
        const v = buf.readDoubleLE(this.pos);
        this.pos += 8;
        return v;
      }
      case TAG.string: {
        const n = buf.readUInt32LE(this.pos);
        const s = buf.toString('utf8', this.pos + 4, this.pos + 4 + n);
        this.pos += 4 + n;
        return s;
      }
      case TAG.bytes: {
        const n = buf.readUInt32LE(this.pos);
        const b = Buffer.from(buf.subarray(this.pos + 4, this.pos + 4 + n));
        this.pos += 4 + n;
        return b;
      }
      case TAG.list: {
        const n = buf.readUInt32LE(this.pos);
        this.pos += 4;
        const out: BinValue[] = new Array<BinValue>(n);
        for (let i = 0; i < n; i++) out[i] = this.value();
        return out;
      }
      case TAG.map: {
        const n = buf.readUInt32LE(this.pos);
        this.pos += 4;
        const out: BinMap = {};
        for (let i = 0; i < n; i++) {
          const k = this.value();
          out[mapKey(k)] = this.value();
        }
        return out;
      }
      default:
        throw new EngineError('UNKNOWN', `corrupt value encoding (tag ${tag})`);
    }
  }
}

function mapKey(k: BinValue): string {
  if (Buffer.isBuffer(k)) return k.toString('hex');
  return String(k);
}

export function decodeValue(buf: Buffer): BinValue {
  return new Reader(buf).value();
}

/** Decodes the bins of an encoded record, optionally only the named ones. */
export function decodeRecord(blob: Buffer, only?: readonly string[]): Bins {
  const bins: Bins = {};
  for (const e of scanRecord(blob)) {
    if (only && !only.includes(e.name)) continue;
    bins[e.name] = decodeValue(e.value);
  }
  return bins;
}
