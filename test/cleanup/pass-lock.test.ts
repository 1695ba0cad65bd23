/**
 * One cleanup pass at a time per partition range (lib/cleanup/pass-lock.ts): overlapping passes over a range would
 * clear each other's `deleting` marks mid-delete. A pass skips the ranges another holds and reports busy; a dead
 * pass's locks expire by TTL; a lock is removed only by its owner.
 */
import { CleanupService } from '../../lib/cleanup';
import { passLockTtlSeconds, rangeLockKey } from '../../lib/cleanup/pass-lock';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import { EngineError, splitPartitions, type RecordEngine } from '../../lib/engine/port';
import { txidBytes } from '../../lib/cleanup/record-facts';
import { partitionOf } from '../../lib/engine/embedded/embedded-engine';
import { loadUdfSource } from '../../lib/store/udf-module';
import { DelegatingEngine, MemoryBlobs, MODULE_NAME } from './fakes';
import { closeHarnesses, harness } from './harness';

afterEach(closeHarnesses);

async function deletableParent(h: Awaited<ReturnType<typeof harness>>): Promise<string> {
  const parent = await h.parent(1);
  const child = await h.child([{ txid: parent, vout: 0 }], 1000);
  await h.ledger.setMined(child, 7, 1000);
  return parent;
}

/** An embedded engine and cleanup services on one clock the test moves (lock TTLs expire by it). */
async function clocked(): Promise<{
  engine: RecordEngine;
  service: (e: RecordEngine) => CleanupService;
  advance: (ms: number) => void;
}> {
  let clock = Date.parse('2026-11-23T12:00:00Z');
  const engine: RecordEngine = await openEmbeddedEngine({ path: ':memory:', now: () => clock });
  await engine.ensureModule(MODULE_NAME, loadUdfSource());
  const settings = { utxoBatchSize: 4, blockHeightRetention: 288, cleanupSafetyWindow: 288, batchSize: 10 };
  const service = (e: RecordEngine) =>
    new CleanupService({
      engine: e,
      blobs: new MemoryBlobs(),
      moduleName: MODULE_NAME,
      settings,
      getTip: async () => 0,
      now: () => clock,
    });
  return { engine, service, advance: (ms) => (clock += ms) };
}

describe('cleanup pass lock', () => {
  test('a pass started while another runs reports busy and changes nothing; the running one deletes', async () => {
    const h = await harness();
    const parent = await deletableParent(h);
    let enter!: () => void;
    const entered = new Promise<void>((r) => (enter = r));
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const slow = new DelegatingEngine(h.engine, {
      queryRange: async (q, inner) => {
        enter();
        await gate;
        return inner.queryRange(q);
      },
    });
    const first = h.serviceOver(slow).runPass({ tip: 1288 });
    await entered;

    const second = await h.service.runPass({ tip: 1288 });
    expect(second).toMatchObject({ busy: true, rangesBusy: 8, more: true, deleted: 0, errors: 0, kept: {} });
    expect(h.counts.CleanupBusy).toBe(1);
    expect(await h.ledger.exists(parent)).toBe(true);

    open();
    expect(await first).toMatchObject({ deleted: 1, errors: 0, more: false });
    expect((await first).busy).toBeUndefined();
    expect(await h.ledger.exists(parent)).toBe(false);
    // released: the next pass runs
    const third = await h.service.runPass({ tip: 1289 });
    expect(third.busy).toBeUndefined();
    for (const range of splitPartitions(8)) expect(await h.engine.get(rangeLockKey(range))).toBeNull();
  });

  test("a dead pass's lock holds off the next pass until its TTL (budget + grace) expires", async () => {
    const { engine, service, advance } = await clocked();
    try {
      // the process dies in the pass: its lock is never released
      const dying = new DelegatingEngine(engine, {
        queryRange: async () => {
          throw new EngineError('UNAVAILABLE', 'process killed');
        },
        batchRemove: async () => {
          throw new EngineError('UNAVAILABLE', 'process killed');
        },
      });
      // every range's query fails (the preserveUntil step first, which ends the pass): one error
      expect(await service(dying).runPass({ tip: 10, maxDurationMs: 10_000 })).toMatchObject({ errors: 1 });
      for (const range of splitPartitions(8)) {
        expect((await engine.get(rangeLockKey(range)))?.ttl).toBe(passLockTtlSeconds(0, 10_000));
      }

      advance((passLockTtlSeconds(0, 10_000) - 1) * 1000);
      expect(await service(engine).runPass({ tip: 10 })).toMatchObject({ busy: true, rangesBusy: 8, more: true });
      advance(2000);
      const after = await service(engine).runPass({ tip: 10 });
      expect(after).toMatchObject({ errors: 0, more: false });
      expect(after.busy).toBeUndefined();
    } finally {
      await engine.close();
    }
  });

  test('an engine failure taking the lock is an error of the pass, which does nothing', async () => {
    const h = await harness();
    const parent = await deletableParent(h);
    const failing = new DelegatingEngine(h.engine, {
      batchCreate: async () => {
        throw new EngineError('UNAVAILABLE', 'cluster down');
      },
    });
    const report = await h.serviceOver(failing).runPass({ tip: 1288 });
    expect(report).toMatchObject({ errors: 1, more: true, deleted: 0 });
    expect(report.busy).toBeUndefined();
    expect(await h.ledger.exists(parent)).toBe(true);
  });

  test("a lock is released only by its owner: after its TTL expired and another pass took it, the old pass's release leaves it", async () => {
    const { engine, service, advance } = await clocked();
    try {
      /** an engine whose first query waits for open(); `entered` once the pass holds its locks */
      const held = () => {
        let open!: () => void;
        const opened = new Promise<void>((r) => (open = r));
        let enter!: () => void;
        const entered = new Promise<void>((r) => (enter = r));
        const e = new DelegatingEngine(engine, {
          queryRange: async (q, inner) => {
            enter();
            await opened;
            return inner.queryRange(q);
          },
        });
        return { e, open, entered };
      };
      const a = held();
      const first = service(a.e).runPass({ tip: 10, maxDurationMs: 10_000 });
      await a.entered;
      // the first pass overruns its lock's TTL: a second takes every range over
      advance((passLockTtlSeconds(0, 10_000) + 1) * 1000);
      const b = held();
      const second = service(b.e).runPass({ tip: 10 });
      await b.entered;
      const owners = await Promise.all(splitPartitions(8).map((r) => engine.get(rangeLockKey(r))));
      const secondOwner = owners[0]?.bins.passOwner;
      expect(owners.every((o) => o !== null && o.bins.passOwner === secondOwner)).toBe(true);

      a.open();
      expect(await first).toMatchObject({ more: true, errors: 0 });
      // the first pass released nothing of the second's: a third finds every range busy
      for (const r of splitPartitions(8)) {
        expect((await engine.get(rangeLockKey(r)))?.bins.passOwner).toBe(secondOwner);
      }
      expect(await service(engine).runPass({ tip: 10 })).toMatchObject({ busy: true, rangesBusy: 8 });

      b.open();
      expect(await second).toMatchObject({ more: false, errors: 0 });
      for (const r of splitPartitions(8)) expect(await engine.get(rangeLockKey(r))).toBeNull();
    } finally {
      await engine.close();
    }
  });

  test('a lock item answering an error: its range is not run (an error of the pass), the lock released if written', async () => {
    const h = await harness({ partitionRanges: 2 });
    const parents: string[] = [];
    for (let i = 0; i < 6; i++) parents.push(await deletableParent(h));
    const [r0, r1] = splitPartitions(2);
    const timedOut = new DelegatingEngine(h.engine, {
      // the first range's lock is written, but its answer is a timeout
      batchCreate: async (items, inner) => {
        const results = await inner.batchCreate(items);
        return results.map((r, i) => (i === 0 ? { ok: false, error: new EngineError('TIMEOUT', 'in doubt') } : r));
      },
    });
    const report = await h.serviceOver(timedOut).runPass({ tip: 1288 });
    const inR0 = (txid: string) => partitionOf(txidBytes(txid)) < r0.begin + r0.count;
    expect(parents.some(inR0) && !parents.every(inR0)).toBe(true);
    expect(report).toMatchObject({ errors: 1, more: true, deleted: parents.filter((p) => !inR0(p)).length });
    expect(report.busy).toBeUndefined();
    for (const p of parents) expect(await h.ledger.exists(p)).toBe(inR0(p));
    // both locks were this pass's: both released
    expect(await h.engine.get(rangeLockKey(r0))).toBeNull();
    expect(await h.engine.get(rangeLockKey(r1))).toBeNull();
  });

  test('lock keys: one per partition range, never a tx key', () => {
    expect(rangeLockKey({ begin: 0, count: 4096 }).toString('ascii')).toBe('cleanup-pass-lock:0:4096');
    expect(rangeLockKey({ begin: 4095, count: 1 }).toString('ascii')).toBe('cleanup-pass-lock:4095:1');
    for (const r of splitPartitions(4096)) expect([32, 36]).not.toContain(rangeLockKey(r).length);
    expect(() => rangeLockKey({ begin: 4000, count: 100 })).toThrow(EngineError);
  });

  test('lock TTL: the pass budget plus 30 s grace, 900 s + grace without a deadline', () => {
    expect(passLockTtlSeconds(0, 25_000)).toBe(55);
    expect(passLockTtlSeconds(0, 24_001)).toBe(55);
    expect(passLockTtlSeconds(5_000, 1_000)).toBe(30);
    expect(passLockTtlSeconds(0, Number.POSITIVE_INFINITY)).toBe(930);
    expect(passLockTtlSeconds(0, 10_000_000)).toBe(930);
  });
});
