/**
 * The embedded Lua runtime against the Aerospike UDF semantics it emulates (aerospike-mod-lua): bytes, list, map,
 * record and aerospike, integer exactness, the sandbox, and errors. Each test registers a small inline module.
 */
import { openEmbeddedEngine, type EmbeddedEngine } from '../../lib/engine/embedded';
import { EngineError, type BinMap, type BinValue, type Bins } from '../../lib/engine/port';

let engine: EmbeddedEngine;
let seq = 0;
// a fresh key per test: remove leaves a tombstone, which a raw Lua module sees as an existing record
let key = Buffer.alloc(32, 0xab);

beforeAll(async () => {
  engine = await openEmbeddedEngine({ path: ':memory:' });
});

afterAll(async () => {
  await engine.close();
});

beforeEach(() => {
  key = Buffer.alloc(32, ++seq % 256);
  key.writeUInt32BE(seq, 0);
});

/** Registers `source` as a fresh module and runs its function `f` on `key` (created with `bins` when given). */
async function run(source: string, args: BinValue[] = [], bins?: Bins): Promise<BinMap> {
  const name = `lua_api_${++seq}`;
  await engine.ensureModule(name, source);
  if (bins) await engine.create(key, bins);
  return engine.apply(key, { module: name, fn: 'f', args });
}

async function runError(source: string, args: BinValue[] = [], bins?: Bins): Promise<EngineError> {
  const err = await run(source, args, bins).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe('bytes', () => {
  test('1-based access, size, # and reads outside the size', async () => {
    const out = await run(
      `function f(rec, b)
        return map{ first = b[1], last = b[bytes.size(b)], len = #b, get = bytes.get_byte(b, 2),
                    zero = b[0], past = b[#b + 1] }
      end`,
      [Buffer.from([10, 20, 30])],
    );
    expect(out).toEqual({ first: 10, last: 30, len: 3, get: 20 });
  });

  test('bytes(n) starts empty; set_byte and b[i] = v grow it; set_size does not change the size', async () => {
    const out = await run(`function f(rec)
      local b = bytes(4)
      local empty = bytes.size(b)
      bytes.set_size(b, 8)
      local afterSetSize = bytes.size(b)
      b[1] = 1
      bytes.set_byte(b, 3, 3)
      return map{ empty = empty, afterSetSize = afterSetSize, b = b, bad = bytes.set_byte(b, 1, 256) }
    end`);
    expect(out).toEqual({ empty: 0, afterSetSize: 0, b: Buffer.from([1, 0, 3]), bad: false });
  });

  test('get_bytes, set_bytes, append_bytes, append_byte, get_string', async () => {
    const out = await run(
      `function f(rec, a, c)
        local slice = bytes.get_bytes(a, 2, 3)
        local b = bytes(10)
        bytes.set_bytes(b, 1, a, 2)
        bytes.append_bytes(b, c, 1)
        bytes.append_byte(b, 255)
        return map{ slice = slice, b = b, s = bytes.get_string(a, 1, 2) }
      end`,
      [Buffer.from([1, 2, 3, 4, 5]), Buffer.from([9, 8])],
    );
    expect(out).toEqual({ slice: Buffer.from([2, 3, 4]), b: Buffer.from([1, 2, 9, 255]), s: '\u0001\u0002' });
  });

  test('integer accessors: big and little endian', async () => {
    const out = await run(
      `function f(rec, b)
        local w = bytes(0)
        bytes.append_int32_le(w, 7)
        bytes.set_int16_be(w, 5, 258)
        return map{ be = bytes.get_int32_be(b, 1), le = bytes.get_int32_le(b, 1), w = w,
                    i64 = bytes.get_int64_le(b, 1) }
      end`,
      [Buffer.from([0, 0, 1, 2, 0, 0, 0, 0])],
    );
    expect(out).toEqual({ be: 258, le: 0x02010000, w: Buffer.from([7, 0, 0, 0, 1, 2]), i64: 0x02010000 });
  });

  test('two bytes objects with equal content are distinct values (as Aerospike userdata)', async () => {
    const out = await run(`function f(rec, a, b) return map{ same = (a == b), self = (a == a) } end`, [
      Buffer.from([1]),
      Buffer.from([1]),
    ]);
    expect(out).toEqual({ same: false, self: true });
  });
});

describe('list', () => {
  test('nil elements keep their position; size counts them', async () => {
    const out = await run(
      `function f(rec, l)
        return map{ size = list.size(l), len = #l, second = (l[2] == nil), third = l[3] }
      end`,
      [[1, null, 3, null]],
    );
    expect(out).toEqual({ size: 4, len: 4, second: true, third: 3 });
  });

  test('assigning past the end grows the list with nils; list{} skips nils', async () => {
    const out = await run(`function f(rec)
      local l = list()
      l[1] = 'a'
      l[3] = 'c'
      local c = list{ 1, nil, 3 }
      return map{ l = l, size = list.size(l), c = c }
    end`);
    expect(out).toEqual({ l: ['a', null, 'c'], size: 3, c: [1, 3] });
  });

  test('append, prepend, insert, remove, take, drop, concat, trim, iterator', async () => {
    const out = await run(`function f(rec)
      local l = list{ 2, 3 }
      list.append(l, 4)
      list.prepend(l, 1)
      list.insert(l, 3, 'x')
      list.remove(l, 3)
      local sum = 0
      for v in list.iterator(l) do sum = sum + v end
      local c = list.take(l, 2)
      list.concat(c, list{ 9 })
      local t = list{ 1, 2, 3, 4 }
      list.trim(t, 3)
      return map{ l = l, take = list.take(l, 2), drop = list.drop(l, 3), c = c, t = t, sum = sum,
                  none = (list.take(l, 0) == nil) }
    end`);
    expect(out).toEqual({
      l: [1, 2, 3, 4],
      take: [1, 2],
      drop: [4],
      c: [1, 2, 9],
      t: [1, 2],
      sum: 10,
      none: true,
    });
  });

  test('ipairs works and pairs raises, as on Aerospike userdata', async () => {
    const out = await run(`function f(rec)
      local n = 0
      for _, v in ipairs(list{ 5, 6 }) do n = n + v end
      local ok = pcall(function() for _ in pairs(list{ 1 }) do end end)
      return map{ n = n, pairsOk = ok }
    end`);
    expect(out).toEqual({ n: 11, pairsOk: false });
  });
});

describe('map', () => {
  test('integer and string keys; integer keys come back as decimal strings', async () => {
    const out = await run(
      `function f(rec, m)
        local n = m[7]
        m[12] = 'twelve'
        m['k'] = true
        m[7] = nil
        local keys = 0
        for k in map.keys(m) do keys = keys + 1 end
        return map{ m = m, n = n, isInt = math.type(next({ [3] = 1 })), size = map.size(m), keys = keys,
                    str = m['s'] }
      end`,
      [{ '7': 'seven', s: 'str' }],
    );
    expect(out).toEqual({
      m: { '12': 'twelve', k: true, s: 'str' },
      n: 'seven',
      isInt: 'integer',
      size: 3,
      keys: 3,
      str: 'str',
    });
  });

  test('JS integer-string keys are Lua integer keys', async () => {
    const out = await run(
      `function f(rec, m)
        local types = list()
        for k, v in map.pairs(m) do types[#types + 1] = math.type(k) or type(k) end
        return map{ types = types, byInt = m[5], byStr = m['5'] }
      end`,
      [{ '5': 'five' }],
    );
    expect(out).toEqual({ types: ['integer'], byInt: 'five' });
  });

  test('map.remove, map.values, map{} constructor, # length', async () => {
    const out = await run(`function f(rec)
      local m = map{ a = 1, b = 2 }
      map.remove(m, 'a')
      local total = 0
      for v in map.values(m) do total = total + v end
      return map{ m = m, total = total, len = #m }
    end`);
    expect(out).toEqual({ m: { b: 2 }, total: 2, len: 1 });
  });
});

describe('integers', () => {
  test('exact to 64 bits: 2^63-1 and -2^63 round trip as Lua integers', async () => {
    const out = await run(
      `function f(rec, a, b, c)
        return map{ a = a, b = b, c = c, ta = math.type(a), tc = math.type(c),
                    isMax = (a == math.maxinteger), isMin = (b == math.mininteger), next = a - 1 }
      end`,
      [2n ** 63n - 1n, -(2n ** 63n), 5],
    );
    expect(out).toEqual({
      a: 2n ** 63n - 1n,
      b: -(2n ** 63n),
      c: 5,
      ta: 'integer',
      tc: 'integer',
      isMax: true,
      isMin: true,
      next: 2n ** 63n - 2n,
    });
  });

  test('bins read by a UDF are integers too; floats stay floats', async () => {
    const out = await run(`function f(rec) return map{ i = math.type(rec.i), x = math.type(rec.x) } end`, [], {
      i: 3,
      x: 2.5,
    });
    expect(out).toEqual({ i: 'integer', x: 'float' });
  });
});

describe('record and aerospike', () => {
  test('create / update / exists / remove and the generation', async () => {
    const src = `function f(rec, op)
      local before = aerospike:exists(rec)
      local rc
      if op == 'create' then rec.a = 1; rc = aerospike:create(rec)
      elseif op == 'update' then rec.a = (rec.a or 0) + 1; rc = aerospike:update(rec)
      else rc = aerospike:remove(rec) end
      return map{ before = before, after = aerospike:exists(rec), rc = rc, gen = record.gen(rec) }
    end`;
    const name = `lua_api_${++seq}`;
    await engine.ensureModule(name, src);
    const call = (op: string) => engine.apply(key, { module: name, fn: 'f', args: [op] });
    expect(await call('update')).toEqual({ before: false, after: false, rc: 2, gen: 0 });
    expect(await engine.get(key)).toBeNull();
    expect(await call('create')).toEqual({ before: false, after: true, rc: 0, gen: 0 });
    expect(await call('create')).toEqual({ before: true, after: true, rc: 1, gen: 1 });
    expect(await call('update')).toEqual({ before: true, after: true, rc: 0, gen: 1 });
    expect(await engine.get(key)).toMatchObject({ bins: { a: 2 }, generation: 2 });
    expect(await call('remove')).toEqual({ before: true, after: false, rc: 0, gen: 2 });
    expect(await engine.get(key)).toBeNull();
  });

  test('assigning nil removes a bin; bin_names lists the bins; both access forms work', async () => {
    const out = await run(
      `function f(rec)
        rec['gone'] = nil
        rec.added = 'x'
        aerospike:update(rec)
        return map{ names = record.bin_names(rec), dot = rec.kept, idx = rec['kept'] }
      end`,
      [],
      { kept: 1, gone: 2 },
    );
    expect(out).toEqual({ names: ['kept', 'added'], dot: 1, idx: 1 });
    expect((await engine.get(key))!.bins).toEqual({ kept: 1, added: 'x' });
  });

  test('changes without aerospike:update are not written', async () => {
    await run(`function f(rec) rec.a = 99 return map{} end`, [], { a: 1 });
    expect(await engine.get(key)).toMatchObject({ bins: { a: 1 }, generation: 1 });
  });

  test('record.ttl, record.key', async () => {
    const out = await run(`function f(rec) return map{ ttl = record.ttl(rec), key = record.key(rec) } end`, [], {
      a: 1,
    });
    expect(out).toEqual({ ttl: -1, key });
  });

  test('storing a plain Lua table in a bin is UDF_ERROR and writes nothing', async () => {
    const err = await runError(`function f(rec) rec.t = { 1, 2 }; aerospike:update(rec); return map{} end`, [], {
      a: 1,
    });
    expect(err.code).toBe('UDF_ERROR');
    expect(err.message).toMatch(/plain Lua table/);
    const nested = await runError(`function f(rec) rec.t = list{ {} }; return map{} end`, [], undefined);
    expect(nested.code).toBe('UDF_ERROR');
    expect(await engine.get(key)).toMatchObject({ bins: { a: 1 }, generation: 1 });
  });

  test('bin names longer than 15 bytes are rejected', async () => {
    const err = await runError(`function f(rec) rec.abcdefghijklmnop = 1; return map{} end`);
    expect(err.code).toBe('UDF_ERROR');
  });
});

describe('sandbox and errors', () => {
  test('io, os, debug (the library), package, require, load and dofile are absent; logging is available', async () => {
    const out = await run(`function f(rec)
      info('x %d', 1); warn('w'); trace('t'); debug('d %s', 'x')
      return map{ io = type(io), os = type(os), package = type(package), require = type(require),
                  load = type(load), dofile = type(dofile), debug = type(debug), string = type(string),
                  math = type(math), table = type(table) }
    end`);
    expect(out).toEqual({
      io: 'nil',
      os: 'nil',
      package: 'nil',
      require: 'nil',
      load: 'nil',
      dofile: 'nil',
      debug: 'function',
      string: 'table',
      math: 'table',
      table: 'table',
    });
  });

  test('a runtime error is UDF_ERROR with the Lua message, and nothing is written', async () => {
    const err = await runError(
      `function f(rec)
        rec.a = 2
        aerospike:update(rec)
        local t = nil
        return t.field
      end`,
      [],
      { a: 1 },
    );
    expect(err.code).toBe('UDF_ERROR');
    expect(err.message).toMatch(/attempt to index/);
    expect(await engine.get(key)).toMatchObject({ bins: { a: 1 }, generation: 1 });
  });

  test('error() with a table value still gives a message', async () => {
    const err = await runError(`function f(rec) error({ code = 1 }) end`);
    expect(err.code).toBe('UDF_ERROR');
    expect(err.message).toMatch(/table/);
  });

  test('only global functions of the module are callable; module globals do not leak between modules', async () => {
    await engine.ensureModule('leak_a', `local function hidden() end\nfunction f(rec) shared = 1 return map{} end`);
    await engine.ensureModule('leak_b', `function f(rec) return map{ shared = shared } end`);
    await engine.apply(key, { module: 'leak_a', fn: 'f', args: [] });
    expect(await engine.apply(key, { module: 'leak_b', fn: 'f', args: [] })).toEqual({});
    for (const fn of ['hidden', 'print', 'tostring', '__udf_call']) {
      const err = await engine.apply(key, { module: 'leak_a', fn, args: [] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as EngineError).code).toBe('UDF_ERROR');
    }
  });
});
