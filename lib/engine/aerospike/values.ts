/**
 * Value conversion between the port's value model (lib/engine/port.ts) and the aerospike client's.
 *
 * To Aerospike: integers as numbers, or bigint beyond Number.MAX_SAFE_INTEGER (int64 range checked); Buffers as
 * bytes; arrays as lists (null elements = nil); plain objects as maps, written as a JS `Map` so that a key that is a
 * canonical decimal integer within int64 ("0", "-7", "42") becomes an integer map key (a Lua integer key in the UDF,
 * as the embedded engine does) and any other key stays a string. A list the conversion would not change is passed as
 * it is (passesAsIs), flat maps of string keys included. A bin set to null removes the bin.
 *
 * From Aerospike: the client returns integers as numbers, or bigint outside the safe range (normalized: a safe
 * bigint becomes a number); maps as plain objects whose integer keys are already decimal strings; nil as null.
 */
import { types } from 'util';
import { EngineError, type BinMap, type BinValue, type Bins } from '../port';

/** What the aerospike client accepts as a value (structurally; the native layer converts it). */
export type AerospikeValue =
  null | boolean | number | bigint | string | Buffer | AerospikeValue[] | Map<string | number | bigint, AerospikeValue>;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER_KEY = /^(0|-?[1-9][0-9]*)$/;

function invalid(message: string): EngineError {
  return new EngineError('INVALID', message);
}

/**
 * An object literal (or Object.create(null)) of any realm: its prototype is null or an `Object.prototype`, whose own
 * prototype is null. Not `proto === Object.prototype`: the native client builds maps in the main realm, and code
 * running in another one (jest's test context, a vm context) has another Object.prototype. Class instances (their
 * prototype's prototype is Object.prototype) stay refused.
 */
function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** A map key as Aerospike should store it: integer for canonical decimal strings within int64, else the string. */
export function toAerospikeMapKey(key: string): string | number | bigint {
  // most keys are names: a key that starts with neither a digit nor '-' is a string without the regex
  const first = key.charCodeAt(0);
  if (first !== 45 && !(first >= 48 && first <= 57)) return key;
  if (!INTEGER_KEY.test(key)) return key;
  const n = BigInt(key);
  if (n < INT64_MIN || n > INT64_MAX) return key;
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

export function toAerospikeValue(value: BinValue, path = 'value'): AerospikeValue {
  if (value === null) return null;
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw invalid(`${path}: ${value} is not a finite number`);
      return value;
    case 'bigint':
      if (value < INT64_MIN || value > INT64_MAX)
        throw invalid(`${path}: integer ${value} is outside the 64-bit range`);
      return narrowed(value);
    case 'object':
      if (Buffer.isBuffer(value)) return value;
      if (types.isUint8Array(value)) return Buffer.from(value);
      if (Array.isArray(value))
        return passesAsIs(value)
          ? (value as AerospikeValue[])
          : value.map((v, i) => toAerospikeValue(v ?? null, `${path}[${i}]`));
      if (isPlainObject(value)) {
        const map = new Map<string | number | bigint, AerospikeValue>();
        for (const [k, v] of Object.entries(value)) {
          if (v === undefined) continue;
          map.set(toAerospikeMapKey(k), toAerospikeValue(v, `${path}.${k}`));
        }
        return map;
      }
      break;
  }
  throw invalid(`${path}: unsupported value type ${describe(value)}`);
}

/**
 * A list whose elements the conversion would return unchanged (nil, bytes, strings, booleans, finite numbers) is
 * passed as it is: the create path's slot, input and output lists are not copied. So is a list of flat maps
 * (isFlatMap), which the native client writes as the same maps the conversion would build.
 */
function passesAsIs(list: BinValue[]): boolean {
  for (const v of list) {
    if (isScalarAsIs(v)) continue;
    if (typeof v === 'object' && isFlatMap(v as object)) continue;
    return false;
  }
  return true;
}

/** nil, bytes, strings, booleans, finite numbers: what the conversion returns unchanged. */
function isScalarAsIs(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  return typeof v === 'number' ? Number.isFinite(v) : Buffer.isBuffer(v);
}

/**
 * A plain object whose own keys all stay strings (none starts with a digit or '-', so none is a canonical integer)
 * and whose values all pass as they are: the native client writes its keys as string map keys and its values as the
 * conversion would, so it needs no JS Map. An undefined value (the conversion drops it, the client would write nil),
 * a nested value, a bigint or an inherited enumerable key keeps the conversion.
 */
function isFlatMap(v: object): boolean {
  if (Array.isArray(v) || Buffer.isBuffer(v) || !isPlainObject(v)) return false;
  const record = v as Record<string, unknown>;
  for (const key in record) {
    const first = key.charCodeAt(0);
    if (first === 45 || (first >= 48 && first <= 57)) return false;
    if (!Object.hasOwn(record, key) || !isScalarAsIs(record[key])) return false;
  }
  return true;
}

/** A bigint as a number when it is a safe integer (a number is exact there), else as it is. */
function narrowed(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** Bins for a write: values converted; null kept (removes the bin on update); undefined dropped. */
export function toAerospikeBins(bins: Bins): Record<string, AerospikeValue> {
  const out: Record<string, AerospikeValue> = {};
  for (const [name, value] of Object.entries(bins)) {
    if (value === undefined) continue;
    out[name] = toAerospikeValue(value, name);
  }
  return out;
}

export function fromAerospikeValue(value: unknown, path = 'value'): BinValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'boolean':
    case 'string':
    case 'number':
      return value;
    case 'bigint':
      return narrowed(value);
    case 'object':
      if (Buffer.isBuffer(value)) return value;
      if (types.isUint8Array(value)) return Buffer.from(value);
      if (Array.isArray(value)) return value.map((v, i) => fromAerospikeValue(v, `${path}[${i}]`));
      if (types.isMap(value)) {
        const out: BinMap = {};
        for (const [k, v] of value) out[String(k)] = fromAerospikeValue(v, `${path}.${String(k)}`);
        return out;
      }
      if (isPlainObject(value)) {
        const out: BinMap = {};
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          out[k] = fromAerospikeValue(v, `${path}.${k}`);
        }
        return out;
      }
      break;
  }
  throw invalid(`${path}: unsupported value type ${describe(value)} returned by Aerospike`);
}

/** A record's bins as returned by the client (absent bins are simply missing). */
export function fromAerospikeBins(bins: Record<string, unknown> | null | undefined): Bins {
  const out: Bins = {};
  for (const [name, value] of Object.entries(bins ?? {})) {
    if (value === undefined) continue;
    out[name] = fromAerospikeValue(value, name);
  }
  return out;
}

/** The map a UDF returned; anything else is a UDF_ERROR. */
export function udfResultMap(value: unknown, context: string | (() => string)): BinMap {
  const converted = fromAerospikeValue(value, 'result');
  if (converted === null || typeof converted !== 'object' || Array.isArray(converted) || Buffer.isBuffer(converted)) {
    const where = typeof context === 'string' ? context : context();
    throw new EngineError('UDF_ERROR', `aerospike ${where}: the UDF returned ${describe(value)}, expected a map`);
  }
  return converted;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'an object';
  return typeof v;
}
