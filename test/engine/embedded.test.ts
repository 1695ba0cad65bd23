/**
 * The embedded engine: the RecordEngine contract on ':memory:', plus what only a local engine can show (durability
 * across reopen, TTL with an injected clock, the record size limit, module persistence).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import { EngineError } from '../../lib/engine/port';
import { CONTRACT_MODULE, CONTRACT_MODULE_NAME, describeEngineContract } from './engine-contract';

describeEngineContract('embedded on a file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-contract-'));
  const file = path.join(dir, 'records.db');
  let engine = await openEmbeddedEngine({ path: file });
  return {
    engine,
    close: async () => {
      await engine.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    reopen: async () => {
      await engine.close();
      engine = await openEmbeddedEngine({ path: file });
      return engine;
    },
  };
});

const key = (n: number) => Buffer.alloc(32, n);

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (e: unknown) => (e instanceof EngineError ? e.code : `not an EngineError: ${String(e)}`),
  );
}

describe('embedded engine on a file', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-engine-'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('creates parent directories; a record and a module survive close and reopen', async () => {
    const file = path.join(dir, 'a', 'b', 'utxo.db');
    const first = await openEmbeddedEngine({ path: file });
    await first.ensureModule(CONTRACT_MODULE_NAME, CONTRACT_MODULE);
    await first.create(key(1), { utxos: [Buffer.alloc(32, 1), null], big: 2n ** 63n - 1n, deleteAtHeight: 10 });
    await first.apply(key(1), { module: CONTRACT_MODULE_NAME, fn: 'increment', args: [3] });
    await first.close();

    const second = await openEmbeddedEngine({ path: file });
    expect(await second.get(key(1))).toEqual({
      key: key(1),
      bins: { utxos: [Buffer.alloc(32, 1), null], big: 2n ** 63n - 1n, deleteAtHeight: 10, counter: 3 },
      generation: 2,
      ttl: -1,
    });
    // the module was stored: no ensureModule after reopen
    expect(await second.apply(key(1), { module: CONTRACT_MODULE_NAME, fn: 'increment', args: [1] })).toEqual({
      status: 'OK',
      counter: 4,
    });
    expect((await second.queryRange({ bin: 'deleteAtHeight', min: 10, max: 10 })).records).toHaveLength(1);
    await second.close();
  });

  test('ensureModule keeps the first source registered under a name', async () => {
    const file = path.join(dir, 'modules.db');
    const engine = await openEmbeddedEngine({ path: file });
    await engine.ensureModule('m', 'function f(rec) return map{ v = 1 } end');
    await engine.ensureModule('m', 'function f(rec) return map{ v = 2 } end');
    await engine.close();
    const reopened = await openEmbeddedEngine({ path: file });
    expect(await reopened.apply(key(1), { module: 'm', fn: 'f', args: [] })).toEqual({ v: 1 });
    await reopened.close();
  });
});

describe('embedded engine: TTL', () => {
  let now = 1_000_000;
  const clock = () => now;

  test('an expired record is invisible to every operation', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:', now: clock });
    await engine.ensureModule(CONTRACT_MODULE_NAME, CONTRACT_MODULE);
    await engine.create(key(1), { counter: 1, deleteAtHeight: 5 }, { ttl: 10 });
    expect((await engine.get(key(1)))!.ttl).toBe(10);
    now += 4_500;
    expect((await engine.get(key(1)))!.ttl).toBe(6);
    now += 5_500;

    expect(await engine.get(key(1))).toBeNull();
    expect(await engine.batchGet([key(1)])).toEqual([null]);
    expect((await engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 10 })).records).toEqual([]);
    expect(await codeOf(engine.update(key(1), { a: 1 }))).toBe('RECORD_NOT_FOUND');
    expect(await engine.remove(key(1))).toBe(false);
    expect(await engine.apply(key(1), { module: CONTRACT_MODULE_NAME, fn: 'increment', args: [1] })).toEqual({
      status: 'ERROR',
      errorCode: 'TX_NOT_FOUND',
    });
    // create over an expired record succeeds and starts a new life
    await engine.create(key(1), { fresh: true });
    expect(await engine.get(key(1))).toEqual({ key: key(1), bins: { fresh: true }, generation: 1, ttl: -1 });
    await engine.close();
  });

  test('ttl -2 on update keeps the expiry, as an update without ttl does (Aerospike DONT_UPDATE); -1 makes it permanent', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:', now: clock });
    await engine.create(key(2), { a: 1 }, { ttl: 100 });
    await engine.update(key(2), { a: 2 }, { ttl: -2 });
    expect((await engine.get(key(2)))!.ttl).toBe(100);
    await engine.update(key(2), { a: 3 });
    expect((await engine.get(key(2)))!.ttl).toBe(100);
    await engine.update(key(2), { a: 4 }, { ttl: -1 });
    expect((await engine.get(key(2)))!.ttl).toBe(-1);
    await engine.close();
  });

  test('record.set_ttl in a UDF sets the expiry', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:', now: clock });
    await engine.ensureModule(
      'ttl',
      `function f(rec, ttl) rec.a = 1; record.set_ttl(rec, ttl); aerospike:create(rec); return map{ ttl = record.ttl(rec) } end`,
    );
    expect(await engine.apply(key(3), { module: 'ttl', fn: 'f', args: [60] })).toEqual({ ttl: 0 });
    expect((await engine.get(key(3)))!.ttl).toBe(60);
    now += 61_000;
    expect(await engine.get(key(3))).toBeNull();
    await engine.close();
  });
});

describe('embedded engine: record size', () => {
  test('RECORD_TOO_BIG above maxRecordSize for create, update and a UDF write; nothing written', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:', maxRecordSize: 1000 });
    await engine.ensureModule(CONTRACT_MODULE_NAME, CONTRACT_MODULE);
    expect(await codeOf(engine.create(key(1), { b: Buffer.alloc(2000) }))).toBe('RECORD_TOO_BIG');
    expect(await engine.get(key(1))).toBeNull();

    await engine.create(key(1), { b: Buffer.alloc(100) });
    expect(await codeOf(engine.update(key(1), { c: Buffer.alloc(2000) }))).toBe('RECORD_TOO_BIG');
    const call = { module: CONTRACT_MODULE_NAME, fn: 'setBin', args: ['c', Buffer.alloc(2000)] };
    expect(await codeOf(engine.apply(key(1), call))).toBe('RECORD_TOO_BIG');
    const [result] = await engine.batchApply([{ key: key(1), ...call }]);
    expect(result.ok ? 'ok' : result.error.code).toBe('RECORD_TOO_BIG');
    expect(await engine.get(key(1))).toMatchObject({ bins: { b: Buffer.alloc(100) }, generation: 1 });
    await engine.close();
  });

  test('the default limit is 1 MiB', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:' });
    await engine.create(key(1), { b: Buffer.alloc(1000 * 1000) });
    expect(await codeOf(engine.create(key(2), { b: Buffer.alloc(1024 * 1024) }))).toBe('RECORD_TOO_BIG');
    await engine.close();
  });
});

describe('embedded engine: argument checks and lifecycle', () => {
  test('INVALID for bad keys, bin names, values, queries and cursors', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:' });
    expect(await codeOf(engine.get(Buffer.alloc(0)))).toBe('INVALID');
    expect(await codeOf(engine.create(key(1), { 'a-bin-name-too-long': 1 }))).toBe('INVALID');
    expect(await codeOf(engine.create(key(1), { a: 2n ** 64n }))).toBe('INVALID');
    expect(await codeOf(engine.create(key(1), { a: new Date() as never }))).toBe('INVALID');
    expect(await codeOf(engine.create(key(1), {}))).toBe('INVALID');
    expect(await codeOf(engine.queryRange({ bin: 'txID' as never, min: 0, max: 1 }))).toBe('INVALID');
    expect(await codeOf(engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 1, cursor: 'x' }))).toBe('INVALID');
    expect(await codeOf(engine.ensureModule('bad', 'function ('))).toBe('INVALID');
    await engine.close();
  });

  test('an update removing every bin deletes the record (as Aerospike does)', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:' });
    await engine.create(key(1), { a: 1 });
    await engine.update(key(1), { a: null });
    expect(await engine.get(key(1))).toBeNull();
    await engine.close();
  });

  test('a UDF returning something other than a map is UDF_ERROR and writes nothing', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:' });
    await engine.ensureModule('m', 'function f(rec) rec.a = 1; aerospike:create(rec); return 5 end');
    expect(await codeOf(engine.apply(key(1), { module: 'm', fn: 'f', args: [] }))).toBe('UDF_ERROR');
    expect(await engine.get(key(1))).toBeNull();
    await engine.close();
  });

  test('after close every operation is UNAVAILABLE', async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:' });
    await engine.close();
    expect(await codeOf(engine.ping())).toBe('UNAVAILABLE');
    expect(await codeOf(engine.get(key(1)))).toBe('UNAVAILABLE');
    await engine.close();
  });
});
