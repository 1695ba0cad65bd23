import fc from 'fast-check';
import vm from 'vm';
import { EngineError, type BinValue } from '../../lib/engine/port';
import {
  fromAerospikeBins,
  fromAerospikeValue,
  toAerospikeBins,
  toAerospikeMapKey,
  toAerospikeValue,
  udfResultMap,
  type AerospikeValue,
} from '../../lib/engine/aerospike';

/**
 * What the aerospike client hands back for a value it was given: its native layer reads a JS Map's entries as
 * map pairs and returns maps as plain objects (keys converted to strings), integers outside the safe range as
 * bigint (src/main/util/conversions.cc val_to_jsvalue).
 */
function roundTripThroughClient(v: AerospikeValue): unknown {
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v) out[String(k)] = roundTripThroughClient(x);
    return out;
  }
  if (Array.isArray(v)) return v.map(roundTripThroughClient);
  if (typeof v === 'bigint') return v;
  return v;
}

describe('to Aerospike', () => {
  test('scalars, bytes and lists with nil', () => {
    expect(toAerospikeValue(null)).toBeNull();
    expect(toAerospikeValue(true)).toBe(true);
    expect(toAerospikeValue(42)).toBe(42);
    expect(toAerospikeValue('txid')).toBe('txid');
    const b = Buffer.from([1, 2, 3]);
    expect(toAerospikeValue(b)).toBe(b);
    expect(toAerospikeValue([1, null, Buffer.from([9])])).toEqual([1, null, Buffer.from([9])]);
    expect(Buffer.isBuffer(toAerospikeValue(new Uint8Array([5]) as unknown as Buffer))).toBe(true);
  });

  test('bigint: safe values become numbers, 64-bit values stay bigint, beyond 64 bits is INVALID', () => {
    expect(toAerospikeValue(7n)).toBe(7);
    expect(toAerospikeValue(2n ** 60n)).toBe(2n ** 60n);
    expect(toAerospikeValue(-(2n ** 63n))).toBe(-(2n ** 63n));
    expect(() => toAerospikeValue(2n ** 63n, 'fee')).toThrow(/fee: integer 9223372036854775808 is outside/);
    expect(() => toAerospikeValue(2n ** 63n)).toThrow(EngineError);
  });

  test('maps become JS Maps; canonical decimal keys become integer keys, others stay strings', () => {
    const m = toAerospikeValue({ '0': 10, '17': 'x', '-3': true, '007': 1, abc: null, '99999999999999999999': 2 });
    expect(m).toBeInstanceOf(Map);
    expect([...(m as Map<unknown, unknown>).entries()]).toEqual([
      [0, 10],
      [17, 'x'],
      [-3, true],
      ['007', 1],
      ['abc', null],
      ['99999999999999999999', 2],
    ]);
    expect(toAerospikeMapKey('9007199254740993')).toBe(9007199254740993n);
    expect(toAerospikeMapKey('1e3')).toBe('1e3');
    expect(toAerospikeMapKey('')).toBe('');
  });

  test('nested structures (reassignments: a list of maps) convert recursively', () => {
    const v = toAerospikeValue([{ offset: 1, utxoHash: Buffer.alloc(32, 1), blockHeight: 5n }]) as unknown[];
    expect(v[0]).toEqual(
      new Map<string, unknown>([
        ['offset', 1],
        ['utxoHash', Buffer.alloc(32, 1)],
        ['blockHeight', 5],
      ]),
    );
  });

  test('a list of flat maps (string keys, values passed as they are) goes to the client as it is', () => {
    const inputs = [
      { offset: 0, utxoHash: Buffer.alloc(32, 1), spendingData: Buffer.alloc(36, 2) },
      { offset: 7, utxoHash: Buffer.alloc(32, 3), spendingData: Buffer.alloc(36, 4) },
    ];
    expect(toAerospikeValue(inputs)).toBe(inputs);
    // a key that could be an integer, an undefined value (dropped), or a nested value keeps the conversion
    for (const odd of [{ '7': 1 }, { '-x': 1 }, { a: undefined }, { a: [1] }, { a: { b: 1 } }]) {
      const list = [inputs[0], odd] as unknown as BinValue[];
      const converted = toAerospikeValue(list) as unknown[];
      expect(converted).not.toBe(list);
      expect(converted[0]).toBeInstanceOf(Map);
      expect(converted[1]).toBeInstanceOf(Map);
    }
    expect((toAerospikeValue([{ a: undefined, b: 1 }] as unknown as BinValue) as Map<string, unknown>[])[0]).toEqual(
      new Map([['b', 1]]),
    );
  });

  test('unsupported values are INVALID naming the path', () => {
    expect(() => toAerospikeValue({ a: [1, NaN] } as unknown as BinValue, 'bins')).toThrow(/bins\.a\[1\]: NaN/);
    expect(() => toAerospikeValue(new Date() as unknown as BinValue, 'createdAt')).toThrow(
      /createdAt: unsupported value type Date/,
    );
    expect(() => toAerospikeValue((() => 1) as unknown as BinValue)).toThrow(/unsupported value type function/);
  });

  test('bins: null is kept (removes the bin on update), undefined is dropped', () => {
    const bins = toAerospikeBins({ fee: 5, locked: null, gone: undefined as unknown as BinValue });
    expect(bins).toEqual({ fee: 5, locked: null });
  });
});

describe('from Aerospike', () => {
  test('safe bigints become numbers; large ones stay bigint; nil and undefined become null', () => {
    expect(fromAerospikeValue(5n)).toBe(5);
    expect(fromAerospikeValue(2n ** 62n)).toBe(2n ** 62n);
    expect(fromAerospikeValue(undefined)).toBeNull();
    expect(fromAerospikeValue([null, 1])).toEqual([null, 1]);
  });

  test('maps: plain objects (integer keys already strings) and JS Maps', () => {
    expect(fromAerospikeValue({ '3': 1003, x: [Buffer.from([1])] })).toEqual({ '3': 1003, x: [Buffer.from([1])] });
    expect(
      fromAerospikeValue(
        new Map<unknown, unknown>([
          [4, 'a'],
          ['k', 2n ** 62n],
        ]),
      ),
    ).toEqual({ '4': 'a', k: 2n ** 62n });
  });

  // The native client builds its answers in the main realm; under jest the test code runs in another one (a vm
  // context with its own Object.prototype), where a prototype identity check refused every map the client returned.
  test('maps, byte arrays and JS Maps made in another realm are read; class instances stay refused', () => {
    const other = vm.runInNewContext(`({
      map: { '3': 1003, nested: { a: [1, null] }, bare: Object.create(null) },
      bytes: new Uint8Array([1, 2]),
      jsMap: new Map([[4, 'a']]),
      instance: new (class Foo {})(),
    })`) as Record<string, unknown>;
    expect(Object.getPrototypeOf(other.map)).not.toBe(Object.prototype);
    expect(fromAerospikeValue(other.map)).toEqual({ '3': 1003, nested: { a: [1, null] }, bare: {} });
    expect(fromAerospikeValue(other.bytes)).toEqual(Buffer.from([1, 2]));
    expect(fromAerospikeValue(other.jsMap)).toEqual({ '4': 'a' });
    expect(udfResultMap(vm.runInNewContext(`({ status: 'OK' })`), 'apply')).toEqual({ status: 'OK' });
    expect(fromAerospikeBins({ m: other.map })).toEqual({ m: { '3': 1003, nested: { a: [1, null] }, bare: {} } });
    expect(toAerospikeValue(other.map as BinValue)).toBeInstanceOf(Map);
    expect(() => fromAerospikeValue(other.instance, 'bin')).toThrow(/bin: unsupported value type Foo/);
    class Local {}
    expect(() => fromAerospikeValue(new Local(), 'bin')).toThrow(/unsupported value type Local/);
    expect(() => toAerospikeValue(new Local() as unknown as BinValue, 'bin')).toThrow(/unsupported value type Local/);
  });

  test('record bins', () => {
    expect(fromAerospikeBins({ txID: Buffer.alloc(32), fee: 10, utxos: [Buffer.alloc(32), null] })).toEqual({
      txID: Buffer.alloc(32),
      fee: 10,
      utxos: [Buffer.alloc(32), null],
    });
    expect(fromAerospikeBins(undefined)).toEqual({});
  });

  test('an unknown client type is INVALID', () => {
    expect(() => fromAerospikeValue(Symbol('x'), 'bin')).toThrow(/bin: unsupported value type symbol/);
  });

  test('udfResultMap accepts a map, anything else is UDF_ERROR', () => {
    expect(udfResultMap({ status: 'OK', errors: { '2': { errorCode: 'SPENT' } } }, 'apply')).toEqual({
      status: 'OK',
      errors: { '2': { errorCode: 'SPENT' } },
    });
    for (const bad of [null, 'OK', 1, [1], Buffer.from([1])]) {
      let err: unknown;
      try {
        udfResultMap(bad, 'apply m.f on 00');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).code).toBe('UDF_ERROR');
      expect((err as EngineError).message).toMatch(/^aerospike apply m.f on 00: the UDF returned .*, expected a map$/);
    }
  });
});

describe('round trip through the client model', () => {
  const binValue: fc.Arbitrary<BinValue> = fc.letrec<{ v: BinValue }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      fc.string(),
      fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(
        fc.oneof(
          fc.string(),
          fc.integer().map(String),
          fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
        ),
        tie('v'),
        { maxKeys: 4 },
      ),
    ),
  })).v;

  /** The port's canonical form: safe bigints are numbers. */
  function canonical(v: BinValue): BinValue {
    if (typeof v === 'bigint') return v >= -(2n ** 53n) + 1n && v <= 2n ** 53n - 1n ? Number(v) : v;
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object' && !Buffer.isBuffer(v)) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canonical(x)]));
    }
    return v;
  }

  test('from(client(to(v))) equals v', () => {
    fc.assert(
      fc.property(binValue, (v) => {
        const back = fromAerospikeValue(roundTripThroughClient(toAerospikeValue(v)));
        expect(back).toEqual(canonical(v));
      }),
      { numRuns: 300 },
    );
  });
});
