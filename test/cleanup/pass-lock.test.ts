/**
 * One cleanup pass at a time (lib/cleanup/pass-lock.ts): overlapping passes would clear each other's `deleting`
 * marks mid-delete. The second pass reports busy and touches nothing; a dead pass's lock expires by TTL.
 */
import { CleanupService } from '../../lib/cleanup';
import { passLockTtlSeconds } from '../../lib/cleanup/pass-lock';
import { CLEANUP_PASS_LOCK_KEY } from '../../lib/domain/keys';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import { EngineError, type RecordEngine } from '../../lib/engine/port';
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
    expect(second).toMatchObject({ busy: true, more: true, deleted: 0, errors: 0, kept: {} });
    expect(h.counts.CleanupBusy).toBe(1);
    expect(await h.ledger.exists(parent)).toBe(true);

    open();
    expect(await first).toMatchObject({ deleted: 1, errors: 0, more: false });
    expect((await first).busy).toBeUndefined();
    expect(await h.ledger.exists(parent)).toBe(false);
    // released: the next pass runs
    const third = await h.service.runPass({ tip: 1289 });
    expect(third.busy).toBeUndefined();
    expect(await h.engine.get(CLEANUP_PASS_LOCK_KEY)).toBeNull();
  });

  test("a dead pass's lock holds off the next pass until its TTL (budget + grace) expires", async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z');
    const engine: RecordEngine = await openEmbeddedEngine({ path: ':memory:', now: () => clock });
    try {
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
      // the process dies in the pass: its lock is never released
      const dying = new DelegatingEngine(engine, {
        queryRange: async () => {
          throw new EngineError('UNAVAILABLE', 'process killed');
        },
        remove: async () => {
          throw new EngineError('UNAVAILABLE', 'process killed');
        },
      });
      expect(await service(dying).runPass({ tip: 10, maxDurationMs: 10_000 })).toMatchObject({ errors: 1 });
      const lock = await engine.get(CLEANUP_PASS_LOCK_KEY);
      expect(lock?.ttl).toBe(passLockTtlSeconds(0, 10_000));

      clock += (passLockTtlSeconds(0, 10_000) - 1) * 1000;
      expect(await service(engine).runPass({ tip: 10 })).toMatchObject({ busy: true, more: true });
      clock += 2000;
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
      create: async () => {
        throw new EngineError('UNAVAILABLE', 'cluster down');
      },
    });
    const report = await h.serviceOver(failing).runPass({ tip: 1288 });
    expect(report).toMatchObject({ errors: 1, more: true, deleted: 0 });
    expect(report.busy).toBeUndefined();
    expect(await h.ledger.exists(parent)).toBe(true);
  });

  test('lock TTL: the pass budget plus 30 s grace, 900 s + grace without a deadline', () => {
    expect(passLockTtlSeconds(0, 25_000)).toBe(55);
    expect(passLockTtlSeconds(0, 24_001)).toBe(55);
    expect(passLockTtlSeconds(5_000, 1_000)).toBe(30);
    expect(passLockTtlSeconds(0, Number.POSITIVE_INFINITY)).toBe(930);
    expect(passLockTtlSeconds(0, 10_000_000)).toBe(930);
  });
});
