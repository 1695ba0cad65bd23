/**
 * The RecordEngine contract (lib/engine/port.ts) as a reusable jest suite. It uses only the port, so it runs
 * unchanged against any engine: the embedded engine always, the Aerospike engine when one is available. Its remove,
 * apply, batchApply and queryRange part is engine-contract-ops.ts.
 */
import { describeEngineContractOps } from './engine-contract-ops';
import {
  CONTRACT_MODULE,
  CONTRACT_MODULE_NAME,
  expectEngineError,
  newKey,
  udf,
  type OpenedEngine,
} from './engine-contract-helpers';

export { CONTRACT_MODULE, CONTRACT_MODULE_NAME, type OpenedEngine } from './engine-contract-helpers';
import type { Bins, RecordEngine } from '../../lib/engine/port';

export function describeEngineContract(name: string, open: () => Promise<OpenedEngine>): void {
  describe(`RecordEngine contract: ${name}`, () => {
    let opened: OpenedEngine | undefined;
    let engine: RecordEngine;

    beforeAll(async () => {
      opened = await open();
      engine = opened.engine;
      await engine.ensureModule(CONTRACT_MODULE_NAME, CONTRACT_MODULE);
    });

    afterAll(async () => {
      // a failed open() leaves nothing to close
      await opened?.close();
    });

    describe('create / get', () => {
      test('a created record reads back with generation 1 and no expiry', async () => {
        const key = newKey();
        await engine.create(key, { a: 1, s: 'text' });
        const rec = await engine.get(key);
        expect(rec).not.toBeNull();
        expect(rec!.key.equals(key)).toBe(true);
        expect(rec!.bins).toEqual({ a: 1, s: 'text' });
        expect(rec!.generation).toBe(1);
        expect(rec!.ttl).toBe(-1);
      });

      test('a missing record reads as null', async () => {
        expect(await engine.get(newKey())).toBeNull();
      });

      test('create is create-only: RECORD_EXISTS', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 });
        await expectEngineError(engine.create(key, { a: 2 }), 'RECORD_EXISTS');
        expect((await engine.get(key))!.bins).toEqual({ a: 1 });
      });

      test('batchCreate: one result per item, in order; RECORD_EXISTS for a live record only; a tombstone is replaced', async () => {
        const [a, b, c] = [newKey(), newKey(), newKey()];
        await engine.create(b, { b: 1 });
        await engine.create(c, { c: 1 });
        await engine.remove(c);
        const results = await engine.batchCreate([
          { key: a, bins: { a: 1 } },
          { key: b, bins: { b: 2 } },
          { key: c, bins: { c: 2 }, policy: { ttl: 300 } },
        ]);
        expect(results[0]).toEqual({ ok: true });
        expect(results[1]).toMatchObject({ ok: false, error: { code: 'RECORD_EXISTS' } });
        expect(results[2]).toEqual({ ok: true });
        expect((await engine.get(a))!.bins).toEqual({ a: 1 });
        expect((await engine.get(b))!.bins).toEqual({ b: 1 });
        expect((await engine.get(c))!.bins).toEqual({ c: 2 });
        expect((await engine.get(c))!.ttl).toBeGreaterThan(290);
        await expect(engine.batchCreate([])).resolves.toEqual([]);
      });

      test('bin projection returns only the named bins', async () => {
        const key = newKey();
        await engine.create(key, { a: 1, b: 2, c: 3 });
        expect((await engine.get(key, ['a', 'c']))!.bins).toEqual({ a: 1, c: 3 });
        expect((await engine.get(key, ['nope']))!.bins).toEqual({});
      });

      test('a record with a ttl reports its remaining seconds', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 }, { ttl: 300 });
        const ttl = (await engine.get(key))!.ttl;
        expect(ttl).toBeGreaterThan(290);
        expect(ttl).toBeLessThanOrEqual(300);
      });

      test('batchGet returns one result per key, in order, null for missing', async () => {
        const [k1, k2, k3] = [newKey(), newKey(), newKey()];
        await engine.create(k1, { n: 1 });
        await engine.create(k3, { n: 3, x: 'y' });
        const recs = await engine.batchGet([k1, k2, k3], ['n']);
        expect(recs.map((r) => r?.bins ?? null)).toEqual([{ n: 1 }, null, { n: 3 }]);
      });
    });

    describe('value model', () => {
      const values: Bins = {
        int: 42,
        neg: -7,
        zero: 0,
        maxSafe: Number.MAX_SAFE_INTEGER,
        maxInt64: 2n ** 63n - 1n,
        minInt64: -(2n ** 63n),
        beyondSafe: 2n ** 53n + 1n,
        float: 1.5,
        yes: true,
        no: false,
        str: 'héllo',
        empty: '',
        buf: Buffer.from('00ff7f80', 'hex'),
        emptyBuf: Buffer.alloc(0),
        list: [1, null, Buffer.from([1, 2]), 'x', null],
        nested: [[1, [2]], { k: 'v' }],
        intMap: { '0': 10, '7': 20, '-3': 'neg' },
        strMap: { aa: true, bb: [1, 2] },
        emptyMap: {},
      };

      test('every kind of value round-trips through create/get', async () => {
        const key = newKey();
        await engine.create(key, values);
        expect((await engine.get(key))!.bins).toEqual(values);
      });

      test('values round-trip through a UDF write and its return value', async () => {
        for (const [bin, value] of Object.entries(values)) {
          const key = newKey();
          await engine.apply(key, udf('setBin', bin, value));
          expect((await engine.get(key))!.bins).toEqual({ [bin]: value });
          expect(await engine.apply(key, udf('getBin', bin))).toEqual({ value });
        }
      });

      test('UDF arguments arrive intact', async () => {
        const args = [2n ** 63n - 1n, 5, 'a', Buffer.from([9]), [1, null, 3], { '12': 'x' }, true];
        const out = await engine.apply(newKey(), udf('echo', ...args));
        expect(out).toEqual({ exists: false, args });
      });
    });

    describe('update', () => {
      // Aerospike's update keeps the record's TTL unless one is given (DONT_UPDATE); the embedded engine used to make
      // the record never expire, so a cursor or lock record updated there outlived its TTL
      test('update keeps the remaining ttl unless a ttl is given', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 }, { ttl: 300 });
        await engine.update(key, { a: 2 });
        expect((await engine.get(key))!.ttl).toBeGreaterThan(200);
        expect((await engine.get(key))!.ttl).toBeLessThanOrEqual(300);
        await engine.update(key, { a: 3 }, { ttl: 1000 });
        expect((await engine.get(key))!.ttl).toBeGreaterThan(900);
      });

      test('merges bins; null removes a bin; generation increments', async () => {
        const key = newKey();
        await engine.create(key, { a: 1, b: 2 });
        await engine.update(key, { b: null, c: 3 });
        const rec = await engine.get(key);
        expect(rec!.bins).toEqual({ a: 1, c: 3 });
        expect(rec!.generation).toBe(2);
      });

      test('update-only: RECORD_NOT_FOUND', async () => {
        await expectEngineError(engine.update(newKey(), { a: 1 }), 'RECORD_NOT_FOUND');
      });

      test('generation check: GENERATION_MISMATCH, and success at the expected generation', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 });
        await expectEngineError(engine.update(key, { a: 2 }, { generation: 5 }), 'GENERATION_MISMATCH');
        await engine.update(key, { a: 3 }, { generation: 1 });
        expect(await engine.get(key)).toMatchObject({ bins: { a: 3 }, generation: 2 });
      });
      test('batchUpdate: one result per item, in order, each as update(): RECORD_NOT_FOUND, GENERATION_MISMATCH', async () => {
        const [a, b, gone, missing, stale] = [newKey(), newKey(), newKey(), newKey(), newKey()];
        await engine.create(a, { a: 1, x: 1 }, { ttl: 300 });
        await engine.create(b, { b: 1 });
        await engine.create(gone, { g: 1 });
        await engine.remove(gone);
        await engine.create(stale, { s: 1 });
        await engine.update(stale, { s: 2 });
        const results = await engine.batchUpdate([
          { key: a, bins: { a: 2, x: null } },
          { key: b, bins: { b: 2 }, policy: { generation: 1, ttl: 1000 } },
          { key: gone, bins: { g: 2 } },
          { key: missing, bins: { m: 1 } },
          { key: stale, bins: { s: 3 }, policy: { generation: 1 } },
        ]);
        expect(results[0]).toEqual({ ok: true });
        expect(results[1]).toEqual({ ok: true });
        expect(results[2]).toMatchObject({ ok: false, error: { code: 'RECORD_NOT_FOUND' } });
        expect(results[3]).toMatchObject({ ok: false, error: { code: 'RECORD_NOT_FOUND' } });
        expect(results[4]).toMatchObject({ ok: false, error: { code: 'GENERATION_MISMATCH' } });
        expect(results).toHaveLength(5);
        // merged, null removed a bin, the ttl kept unless given, the generation moved
        const recA = await engine.get(a);
        expect(recA).toMatchObject({ bins: { a: 2 }, generation: 2 });
        expect(recA!.ttl).toBeGreaterThan(200);
        expect(recA!.ttl).toBeLessThanOrEqual(300);
        const recB = await engine.get(b);
        expect(recB).toMatchObject({ bins: { b: 2 }, generation: 2 });
        expect(recB!.ttl).toBeGreaterThan(900);
        // the failed items wrote nothing
        expect(await engine.get(gone)).toBeNull();
        expect(await engine.get(missing)).toBeNull();
        expect(await engine.get(stale)).toMatchObject({ bins: { s: 2 }, generation: 2 });
        await expect(engine.batchUpdate([])).resolves.toEqual([]);
      });
    });

    describeEngineContractOps(() => engine);

    test('a removed record stays removed across a reopen, and its key can be created again', async () => {
      if (!opened?.reopen) {
        console.log(`${name}: this harness cannot reopen its engine; the reopen check is not run here`);
        expect(opened?.reopen).toBeUndefined();
        return;
      }
      const kept = newKey();
      const removed = newKey();
      await engine.create(kept, { a: 1 });
      await engine.create(removed, { a: 2 });
      expect(await engine.remove(removed)).toBe(true);
      engine = await opened.reopen();
      await engine.ensureModule(CONTRACT_MODULE_NAME, CONTRACT_MODULE);
      expect((await engine.get(kept))!.bins).toEqual({ a: 1 });
      expect(await engine.get(removed)).toBeNull();
      expect(await engine.apply(removed, udf('meta'))).toMatchObject({ exists: true, tombstone: expect.any(Number) });
      await engine.create(removed, { b: 3 });
      expect((await engine.get(removed))!.bins).toEqual({ b: 3 });
    });

    test('ping', async () => {
      await expect(engine.ping()).resolves.toBeUndefined();
    });
  });
}
