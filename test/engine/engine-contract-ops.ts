/** The RecordEngine contract (engine-contract.ts), part: remove, apply, batchApply and queryRange. */
import { DEFAULT_TOMBSTONE_TTL_SECONDS, EngineError, type RecordEngine, splitPartitions } from '../../lib/engine/port';
import { CONTRACT_MODULE_NAME, newKey, expectEngineError, udf, CONTRACT_MODULE } from './engine-contract-helpers';

export function describeEngineContractOps(engine: () => RecordEngine): void {
  describe('remove', () => {
    test('removes a record; false when it did not exist', async () => {
      const key = newKey();
      await engine().create(key, { a: 1 });
      expect(await engine().remove(key)).toBe(true);
      expect(await engine().get(key)).toBeNull();
      expect(await engine().remove(key)).toBe(false);
    });

    test('generation check on remove', async () => {
      const key = newKey();
      await engine().create(key, { a: 1 });
      await expectEngineError(engine().remove(key, { generation: 2 }), 'GENERATION_MISMATCH');
      expect(await engine().remove(key, { generation: 1 })).toBe(true);
    });

    test('a removed key can be created again, with none of the old bins (its generation goes on)', async () => {
      const key = newKey();
      await engine().create(key, { a: 1 });
      await engine().update(key, { a: 2 });
      await engine().remove(key);
      await engine().create(key, { b: 1 }, { ttl: 300 });
      const rec = await engine().get(key);
      expect(rec!.bins).toEqual({ b: 1 });
      expect(rec!.generation).toBeGreaterThanOrEqual(1);
      expect(rec!.ttl).toBeLessThanOrEqual(300);
      await expectEngineError(engine().create(key, { c: 1 }), 'RECORD_EXISTS');
    });

    // Community Edition keeps no tombstone of a delete: a removed record returns after a cold restart. remove
    // leaves the engine()'s own tombstone instead, which every operation treats as a missing record.
    test('a removed record is a tombstone with a TTL, absent for get, batchGet, update, queries and creates', async () => {
      const key = newKey();
      const base = 9_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
      await engine().create(key, { a: 1, deleteAtHeight: base });
      expect(await engine().remove(key)).toBe(true);

      const stored = await engine().apply(key, udf('meta'));
      expect(stored).toMatchObject({ exists: true });
      expect(typeof stored.tombstone).toBe('number');
      expect(stored.ttl as number).toBeGreaterThan(0);
      expect(stored.ttl as number).toBeLessThanOrEqual(DEFAULT_TOMBSTONE_TTL_SECONDS);

      expect(await engine().get(key)).toBeNull();
      expect(await engine().get(key, ['a'])).toBeNull();
      expect(await engine().get(key, ['tombstone'])).toBeNull();
      expect(await engine().batchGet([key], ['a'])).toEqual([null]);
      await expectEngineError(engine().update(key, { a: 2 }), 'RECORD_NOT_FOUND');
      const page = await engine().queryRange({ bin: 'deleteAtHeight', min: base, max: base });
      expect(page.records).toEqual([]);
      expect(await engine().remove(key)).toBe(false);
      const gen = (await engine().apply(key, udf('meta'))).gen as number;
      expect(await engine().remove(key, { generation: gen + 5 })).toBe(false);
    });
    test('batchRemove: one result per item, in order, each as remove(): existed or not, GENERATION_MISMATCH', async () => {
      const [a, b, gone, missing, stale, staleGone] = [newKey(), newKey(), newKey(), newKey(), newKey(), newKey()];
      for (const k of [a, b, gone, stale, staleGone]) await engine().create(k, { v: 1 });
      await engine().update(b, { v: 2 });
      await engine().remove(gone);
      await engine().remove(staleGone);
      const results = await engine().batchRemove([
        { key: a },
        { key: b, policy: { generation: 2 } },
        { key: gone },
        { key: missing },
        { key: stale, policy: { generation: 7 } },
        // a stale generation against a tombstone: not there, as remove() answers
        { key: staleGone, policy: { generation: 7 } },
      ]);
      expect(results).toEqual([
        { ok: true, existed: true },
        { ok: true, existed: true },
        { ok: true, existed: false },
        { ok: true, existed: false },
        expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'GENERATION_MISMATCH' }) }),
        { ok: true, existed: false },
      ]);
      expect(await engine().batchGet([a, b, gone, missing, stale])).toEqual([
        null,
        null,
        null,
        null,
        expect.objectContaining({ bins: { v: 1 }, generation: 1 }),
      ]);
      // a batch remove leaves tombstones with a TTL, as remove() does
      for (const k of [a, b]) {
        const stored = await engine().apply(k, udf('meta'));
        expect(stored).toMatchObject({ exists: true });
        expect(typeof stored.tombstone).toBe('number');
        expect(stored.ttl as number).toBeGreaterThan(0);
        expect(stored.ttl as number).toBeLessThanOrEqual(DEFAULT_TOMBSTONE_TTL_SECONDS);
      }
      await engine().create(a, { again: 1 });
      expect((await engine().get(a))!.bins).toEqual({ again: 1 });
      await expect(engine().batchRemove([])).resolves.toEqual([]);
    });
  });

  describe('apply', () => {
    test('on a missing record the UDF sees a non-existent record', async () => {
      const key = newKey();
      expect(await engine().apply(key, udf('increment', 1))).toEqual({ status: 'ERROR', errorCode: 'TX_NOT_FOUND' });
      expect(await engine().get(key)).toBeNull();
    });

    test('a UDF can create a record (generation 1) and update it (+1 per write)', async () => {
      const key = newKey();
      await engine().apply(key, udf('setBin', 'counter', 1));
      expect(await engine().get(key)).toMatchObject({ bins: { counter: 1 }, generation: 1 });
      expect(await engine().apply(key, udf('increment', 5))).toEqual({ status: 'OK', counter: 6 });
      expect(await engine().get(key)).toMatchObject({ bins: { counter: 6 }, generation: 2 });
    });

    test('a UDF can remove the record', async () => {
      const key = newKey();
      await engine().create(key, { a: 1 });
      expect(await engine().apply(key, udf('drop'))).toEqual({ removed: true });
      expect(await engine().get(key)).toBeNull();
    });

    test('a Lua error is UDF_ERROR and writes nothing', async () => {
      const key = newKey();
      await engine().create(key, { counter: 1 });
      const err = await expectEngineError(engine().apply(key, udf('writeThenFail')), 'UDF_ERROR');
      expect(err.message).toContain('failing on purpose');
      expect(await engine().get(key)).toMatchObject({ bins: { counter: 1 }, generation: 1 });
    });

    test('a missing function or module is UDF_ERROR', async () => {
      const key = newKey();
      await engine().create(key, { a: 1 });
      await expectEngineError(engine().apply(key, udf('noSuchFunction')), 'UDF_ERROR');
      await expectEngineError(engine().apply(key, { module: 'no_such_module_xyz', fn: 'echo', args: [] }), 'UDF_ERROR');
    });

    test('ensureModule is idempotent', async () => {
      await engine().ensureModule(CONTRACT_MODULE_NAME, CONTRACT_MODULE);
      expect(await engine().apply(newKey(), udf('echo'))).toEqual({ exists: false, args: [] });
    });

    test('concurrent applies on one record are each atomic', async () => {
      const key = newKey();
      await engine().create(key, { counter: 0 });
      await Promise.all(Array.from({ length: 50 }, () => engine().apply(key, udf('increment', 1))));
      expect(await engine().get(key)).toMatchObject({ bins: { counter: 50 }, generation: 51 });
    });
  });

  describe('batchApply', () => {
    test('one result per item, in order, mixing results and errors', async () => {
      const [k1, k2, k3] = [newKey(), newKey(), newKey()];
      await engine().create(k1, { counter: 1 });
      await engine().create(k3, { counter: 10 });
      const results = await engine().batchApply([
        { key: k1, ...udf('increment', 1) },
        { key: k2, ...udf('increment', 1) },
        { key: k3, ...udf('writeThenFail') },
        { key: k3, module: 'no_such_module_xyz', fn: 'echo', args: [] },
        { key: k3, ...udf('increment', 2) },
      ]);
      expect(results).toHaveLength(5);
      expect(results[0]).toEqual({ ok: true, result: { status: 'OK', counter: 2 } });
      expect(results[1]).toEqual({ ok: true, result: { status: 'ERROR', errorCode: 'TX_NOT_FOUND' } });
      for (const r of [results[2], results[3]]) {
        expect(r.ok).toBe(false);
        if (!r.ok) {
          expect(r.error).toBeInstanceOf(EngineError);
          expect(r.error.code).toBe('UDF_ERROR');
        }
      }
      expect(results[4]).toEqual({ ok: true, result: { status: 'OK', counter: 12 } });
      expect((await engine().get(k3))!.bins).toEqual({ counter: 12 });
    });

    test('an empty batch gives no results', async () => {
      expect(await engine().batchApply([])).toEqual([]);
    });
  });

  describe('queryRange', () => {
    // values far from what other tests use, so the ranges only see this block's records
    const base = 7_000_000 + Math.floor(Math.random() * 1_000_000) * 10;

    // Secondary-index queries (Aerospike) return records in no guaranteed order, across pages or within the range:
    // only the set of records the pages return together is part of the contract.
    test('inclusive bounds, paging with a cursor: the pages together return every matching record once', async () => {
      const expected = new Map<string, number>();
      for (let i = 0; i < 7; i++) {
        const key = newKey();
        expected.set(key.toString('hex'), base + (i % 4));
        await engine().create(key, { deleteAtHeight: base + (i % 4), tag: i });
      }
      await engine().create(newKey(), { deleteAtHeight: base - 1 });
      await engine().create(newKey(), { deleteAtHeight: base + 4 });
      await engine().create(newKey(), { unminedSince: base + 1 });

      const seen: string[] = [];
      const values = new Map<string, number>();
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await engine().queryRange({ bin: 'deleteAtHeight', min: base, max: base + 3, limit: 3, cursor });
        expect(page.records.length).toBeLessThanOrEqual(3);
        for (const r of page.records) {
          const key = r.key.toString('hex');
          seen.push(key);
          values.set(key, r.bins.deleteAtHeight as number);
        }
        cursor = page.cursor;
        pages++;
      } while (cursor !== undefined && pages < 50);

      // the last page said no more records follow (a trailing empty page is allowed)
      expect(cursor).toBeUndefined();
      // each matching record exactly once, nothing outside [min, max]
      expect([...seen].sort()).toEqual([...expected.keys()].sort());
      expect(Object.fromEntries(values)).toEqual(Object.fromEntries(expected));
    });

    test('partition ranges: disjoint, together every matching record once; each paged by its own cursor', async () => {
      const expected = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const key = newKey();
        expected.add(key.toString('hex'));
        await engine().create(key, { deleteAtHeight: base + 50 });
      }
      const byRange: string[][] = [];
      for (const partitions of splitPartitions(5)) {
        const keys: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await engine().queryRange({
            bin: 'deleteAtHeight',
            min: base + 50,
            max: base + 50,
            limit: 3,
            cursor,
            partitions,
          });
          expect(page.records.length).toBeLessThanOrEqual(3);
          keys.push(...page.records.map((r) => r.key.toString('hex')));
          cursor = page.cursor;
        } while (cursor !== undefined && ++pages < 100);
        expect(cursor).toBeUndefined();
        byRange.push(keys);
      }
      const all = byRange.flat();
      expect(new Set(all).size).toBe(all.length);
      expect([...all].sort()).toEqual([...expected].sort());
      expect(byRange.filter((keys) => keys.length > 0).length).toBeGreaterThan(1);

      // a cursor belongs to its range; a bad range is INVALID
      const [first, second] = splitPartitions(2);
      const query = { bin: 'deleteAtHeight' as const, min: base + 50, max: base + 50, limit: 1 };
      const { cursor } = await engine().queryRange({ ...query, partitions: first });
      expect(cursor).toBeDefined();
      await expect(engine().queryRange({ ...query, cursor, partitions: second })).rejects.toMatchObject({
        code: 'INVALID',
      });
      await expect(
        engine().queryRange({ bin: 'deleteAtHeight', min: 0, max: 1, partitions: { begin: 4000, count: 97 } }),
      ).rejects.toMatchObject({ code: 'INVALID' });
    });

    test('bin projection and an empty range', async () => {
      const key = newKey();
      await engine().create(key, { preserveUntil: base + 5, other: 'x' });
      const page = await engine().queryRange({ bin: 'preserveUntil', min: base + 5, max: base + 5, bins: ['other'] });
      expect(page.records.map((r) => r.bins)).toEqual([{ other: 'x' }]);
      expect(page.cursor).toBeUndefined();
      const none = await engine().queryRange({ bin: 'preserveUntil', min: base + 6, max: base + 8 });
      expect(none.records).toEqual([]);
    });

    test('the index follows updates, bin removal, UDF writes and removes', async () => {
      const key = newKey();
      const inRange = async () =>
        (await engine().queryRange({ bin: 'unminedSince', min: base + 100, max: base + 200 })).records.length;
      await engine().create(key, { unminedSince: base + 150 });
      expect(await inRange()).toBe(1);
      await engine().update(key, { unminedSince: base + 300 });
      expect(await inRange()).toBe(0);
      await engine().apply(key, udf('setBin', 'unminedSince', base + 120));
      expect(await inRange()).toBe(1);
      await engine().update(key, { unminedSince: null, x: 1 });
      expect(await inRange()).toBe(0);
      await engine().update(key, { unminedSince: base + 101 });
      expect(await inRange()).toBe(1);
      await engine().remove(key);
      expect(await inRange()).toBe(0);
    });
  });
}
