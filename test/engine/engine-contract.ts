/**
 * The RecordEngine contract (lib/engine/port.ts) as a reusable jest suite. It uses only the port, so it runs
 * unchanged against any engine: the embedded engine always, the Aerospike engine when one is available.
 */
import { randomBytes } from 'node:crypto';
import {
  DEFAULT_TOMBSTONE_TTL_SECONDS,
  EngineError,
  type BinValue,
  type Bins,
  type EngineErrorCode,
  type RecordEngine,
  splitPartitions,
} from '../../lib/engine/port';

export interface OpenedEngine {
  engine: RecordEngine;
  close(): Promise<void>;
  /**
   * Closes the engine and opens it again on the same data (the embedded engine on a file). What a reopen shows of a
   * removed record is what a restart of the store's process shows; an Aerospike server restart cannot be run here.
   */
  reopen?(): Promise<RecordEngine>;
}

/** A small UDF module exercising reads, writes, removal, errors and argument/return values. */
export const CONTRACT_MODULE = `
function echo(rec, ...)
  local args = list()
  for i = 1, select('#', ...) do args[i] = select(i, ...) end
  return map{ exists = aerospike:exists(rec), args = args }
end

function setBin(rec, name, value)
  rec[name] = value
  if aerospike:exists(rec) then aerospike:update(rec) else aerospike:create(rec) end
  return map{ status = 'OK', gen = record.gen(rec) }
end

function increment(rec, by)
  if not aerospike:exists(rec) then return map{ status = 'ERROR', errorCode = 'TX_NOT_FOUND' } end
  rec['counter'] = (rec['counter'] or 0) + by
  aerospike:update(rec)
  return map{ status = 'OK', counter = rec['counter'] }
end

function writeThenFail(rec)
  rec['counter'] = 999
  aerospike:update(rec)
  error('failing on purpose')
end

function drop(rec)
  if not aerospike:exists(rec) then return map{ removed = false } end
  aerospike:remove(rec)
  return map{ removed = true }
end

function getBin(rec, name)
  return map{ value = rec[name] }
end

function meta(rec)
  if not aerospike:exists(rec) then return map{ exists = false } end
  return map{ exists = true, tombstone = rec['tombstone'], ttl = record.ttl(rec), gen = record.gen(rec) }
end
`;

export const CONTRACT_MODULE_NAME = 'engine_contract_v1';

function newKey(): Buffer {
  return randomBytes(32);
}

async function expectEngineError(p: Promise<unknown>, code: EngineErrorCode): Promise<EngineError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  expect((err as EngineError).code).toBe(code);
  return err as EngineError;
}

export function describeEngineContract(name: string, open: () => Promise<OpenedEngine>): void {
  describe(`RecordEngine contract: ${name}`, () => {
    let opened: OpenedEngine | undefined;
    let engine: RecordEngine;
    const udf = (fn: string, ...args: BinValue[]) => ({ module: CONTRACT_MODULE_NAME, fn, args });

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

    describe('remove', () => {
      test('removes a record; false when it did not exist', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 });
        expect(await engine.remove(key)).toBe(true);
        expect(await engine.get(key)).toBeNull();
        expect(await engine.remove(key)).toBe(false);
      });

      test('generation check on remove', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 });
        await expectEngineError(engine.remove(key, { generation: 2 }), 'GENERATION_MISMATCH');
        expect(await engine.remove(key, { generation: 1 })).toBe(true);
      });

      test('a removed key can be created again, with none of the old bins (its generation goes on)', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 });
        await engine.update(key, { a: 2 });
        await engine.remove(key);
        await engine.create(key, { b: 1 }, { ttl: 300 });
        const rec = await engine.get(key);
        expect(rec!.bins).toEqual({ b: 1 });
        expect(rec!.generation).toBeGreaterThanOrEqual(1);
        expect(rec!.ttl).toBeLessThanOrEqual(300);
        await expectEngineError(engine.create(key, { c: 1 }), 'RECORD_EXISTS');
      });

      // Community Edition keeps no tombstone of a delete: a removed record returns after a cold restart. remove
      // leaves the engine's own tombstone instead, which every operation treats as a missing record.
      test('a removed record is a tombstone with a TTL, absent for get, batchGet, update, queries and creates', async () => {
        const key = newKey();
        const base = 9_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
        await engine.create(key, { a: 1, deleteAtHeight: base });
        expect(await engine.remove(key)).toBe(true);

        const stored = await engine.apply(key, udf('meta'));
        expect(stored).toMatchObject({ exists: true });
        expect(typeof stored.tombstone).toBe('number');
        expect(stored.ttl as number).toBeGreaterThan(0);
        expect(stored.ttl as number).toBeLessThanOrEqual(DEFAULT_TOMBSTONE_TTL_SECONDS);

        expect(await engine.get(key)).toBeNull();
        expect(await engine.get(key, ['a'])).toBeNull();
        expect(await engine.get(key, ['tombstone'])).toBeNull();
        expect(await engine.batchGet([key], ['a'])).toEqual([null]);
        await expectEngineError(engine.update(key, { a: 2 }), 'RECORD_NOT_FOUND');
        const page = await engine.queryRange({ bin: 'deleteAtHeight', min: base, max: base });
        expect(page.records).toEqual([]);
        expect(await engine.remove(key)).toBe(false);
        const gen = (await engine.apply(key, udf('meta'))).gen as number;
        expect(await engine.remove(key, { generation: gen + 5 })).toBe(false);
      });
      test('batchRemove: one result per item, in order, each as remove(): existed or not, GENERATION_MISMATCH', async () => {
        const [a, b, gone, missing, stale, staleGone] = [newKey(), newKey(), newKey(), newKey(), newKey(), newKey()];
        for (const k of [a, b, gone, stale, staleGone]) await engine.create(k, { v: 1 });
        await engine.update(b, { v: 2 });
        await engine.remove(gone);
        await engine.remove(staleGone);
        const results = await engine.batchRemove([
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
        expect(await engine.batchGet([a, b, gone, missing, stale])).toEqual([
          null,
          null,
          null,
          null,
          expect.objectContaining({ bins: { v: 1 }, generation: 1 }),
        ]);
        // a batch remove leaves tombstones with a TTL, as remove() does
        for (const k of [a, b]) {
          const stored = await engine.apply(k, udf('meta'));
          expect(stored).toMatchObject({ exists: true });
          expect(typeof stored.tombstone).toBe('number');
          expect(stored.ttl as number).toBeGreaterThan(0);
          expect(stored.ttl as number).toBeLessThanOrEqual(DEFAULT_TOMBSTONE_TTL_SECONDS);
        }
        await engine.create(a, { again: 1 });
        expect((await engine.get(a))!.bins).toEqual({ again: 1 });
        await expect(engine.batchRemove([])).resolves.toEqual([]);
      });
    });

    describe('apply', () => {
      test('on a missing record the UDF sees a non-existent record', async () => {
        const key = newKey();
        expect(await engine.apply(key, udf('increment', 1))).toEqual({ status: 'ERROR', errorCode: 'TX_NOT_FOUND' });
        expect(await engine.get(key)).toBeNull();
      });

      test('a UDF can create a record (generation 1) and update it (+1 per write)', async () => {
        const key = newKey();
        await engine.apply(key, udf('setBin', 'counter', 1));
        expect(await engine.get(key)).toMatchObject({ bins: { counter: 1 }, generation: 1 });
        expect(await engine.apply(key, udf('increment', 5))).toEqual({ status: 'OK', counter: 6 });
        expect(await engine.get(key)).toMatchObject({ bins: { counter: 6 }, generation: 2 });
      });

      test('a UDF can remove the record', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 });
        expect(await engine.apply(key, udf('drop'))).toEqual({ removed: true });
        expect(await engine.get(key)).toBeNull();
      });

      test('a Lua error is UDF_ERROR and writes nothing', async () => {
        const key = newKey();
        await engine.create(key, { counter: 1 });
        const err = await expectEngineError(engine.apply(key, udf('writeThenFail')), 'UDF_ERROR');
        expect(err.message).toContain('failing on purpose');
        expect(await engine.get(key)).toMatchObject({ bins: { counter: 1 }, generation: 1 });
      });

      test('a missing function or module is UDF_ERROR', async () => {
        const key = newKey();
        await engine.create(key, { a: 1 });
        await expectEngineError(engine.apply(key, udf('noSuchFunction')), 'UDF_ERROR');
        await expectEngineError(engine.apply(key, { module: 'no_such_module_xyz', fn: 'echo', args: [] }), 'UDF_ERROR');
      });

      test('ensureModule is idempotent', async () => {
        await engine.ensureModule(CONTRACT_MODULE_NAME, CONTRACT_MODULE);
        expect(await engine.apply(newKey(), udf('echo'))).toEqual({ exists: false, args: [] });
      });

      test('concurrent applies on one record are each atomic', async () => {
        const key = newKey();
        await engine.create(key, { counter: 0 });
        await Promise.all(Array.from({ length: 50 }, () => engine.apply(key, udf('increment', 1))));
        expect(await engine.get(key)).toMatchObject({ bins: { counter: 50 }, generation: 51 });
      });
    });

    describe('batchApply', () => {
      test('one result per item, in order, mixing results and errors', async () => {
        const [k1, k2, k3] = [newKey(), newKey(), newKey()];
        await engine.create(k1, { counter: 1 });
        await engine.create(k3, { counter: 10 });
        const results = await engine.batchApply([
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
        expect((await engine.get(k3))!.bins).toEqual({ counter: 12 });
      });

      test('an empty batch gives no results', async () => {
        expect(await engine.batchApply([])).toEqual([]);
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
          await engine.create(key, { deleteAtHeight: base + (i % 4), tag: i });
        }
        await engine.create(newKey(), { deleteAtHeight: base - 1 });
        await engine.create(newKey(), { deleteAtHeight: base + 4 });
        await engine.create(newKey(), { unminedSince: base + 1 });

        const seen: string[] = [];
        const values = new Map<string, number>();
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await engine.queryRange({ bin: 'deleteAtHeight', min: base, max: base + 3, limit: 3, cursor });
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
          await engine.create(key, { deleteAtHeight: base + 50 });
        }
        const byRange: string[][] = [];
        for (const partitions of splitPartitions(5)) {
          const keys: string[] = [];
          let cursor: string | undefined;
          let pages = 0;
          do {
            const page = await engine.queryRange({
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
        const { cursor } = await engine.queryRange({ ...query, partitions: first });
        expect(cursor).toBeDefined();
        await expect(engine.queryRange({ ...query, cursor, partitions: second })).rejects.toMatchObject({
          code: 'INVALID',
        });
        await expect(
          engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 1, partitions: { begin: 4000, count: 97 } }),
        ).rejects.toMatchObject({ code: 'INVALID' });
      });

      test('bin projection and an empty range', async () => {
        const key = newKey();
        await engine.create(key, { preserveUntil: base + 5, other: 'x' });
        const page = await engine.queryRange({ bin: 'preserveUntil', min: base + 5, max: base + 5, bins: ['other'] });
        expect(page.records.map((r) => r.bins)).toEqual([{ other: 'x' }]);
        expect(page.cursor).toBeUndefined();
        const none = await engine.queryRange({ bin: 'preserveUntil', min: base + 6, max: base + 8 });
        expect(none.records).toEqual([]);
      });

      test('the index follows updates, bin removal, UDF writes and removes', async () => {
        const key = newKey();
        const inRange = async () =>
          (await engine.queryRange({ bin: 'unminedSince', min: base + 100, max: base + 200 })).records.length;
        await engine.create(key, { unminedSince: base + 150 });
        expect(await inRange()).toBe(1);
        await engine.update(key, { unminedSince: base + 300 });
        expect(await inRange()).toBe(0);
        await engine.apply(key, udf('setBin', 'unminedSince', base + 120));
        expect(await inRange()).toBe(1);
        await engine.update(key, { unminedSince: null, x: 1 });
        expect(await inRange()).toBe(0);
        await engine.update(key, { unminedSince: base + 101 });
        expect(await inRange()).toBe(1);
        await engine.remove(key);
        expect(await inRange()).toBe(0);
      });
    });

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
