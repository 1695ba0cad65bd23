/**
 * Cleanup edge cases (edge-cases.test.ts): a history changed while a pass runs (between read, mark and delete), marks
 * left behind, a pass killed after each delete step, the time budget, the report and its metrics.
 */
import { CleanupService } from '../../lib/cleanup';
import { keyOfRecord, txidBytes } from '../../lib/cleanup/record-facts';
import { EngineError, type RecordEngine, type RecordKey } from '../../lib/engine/port';
import { DelegatingEngine, failingAt } from './fakes';
import {
  CHILD_BLOCK,
  closeHarnesses,
  harness,
  minedChild,
  outpoints,
  recordBins as bins,
  type Harness,
  spentParent,
} from './harness';
import { newTxid } from './ledger';

const BLOCK = CHILD_BLOCK;

afterEach(closeHarnesses);

/** The engine of a pass that meets `race` once, just before its first batch of marks (markDeleting) of a record `where` picks. */
function raceAtFirstMark(
  h: Harness,
  race: () => Promise<unknown>,
  where: (key: RecordKey) => boolean = () => true,
): RecordEngine {
  let raced = false;
  return new DelegatingEngine(h.engine, {
    batchApply: async (items, inner) => {
      if (!raced && items.some((i) => i.fn === 'markDeleting' && where(i.key))) {
        raced = true;
        await race();
      }
      return inner.batchApply(items);
    },
  });
}
describe('cleanup edge cases: races with the pass, marks, deleting', () => {
  test('a parent unspent by a reorg between read and delete is kept (generation check)', async () => {
    const { h, parent, child } = await spentParent(1);
    const engine = raceAtFirstMark(h, () => h.ledger.unspend(child, [{ txid: parent, vout: 0 }], 1288));
    expect(await h.serviceOver(engine).runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { changed: 1 } });
    expect(await h.ledger.exists(parent)).toBe(true);
    expect((await bins(h, parent))!.deleting).toBeUndefined();
    // no longer fully spent: no DAH, not a candidate
    expect(await h.service.runPass({ tip: 3000 })).toMatchObject({ deleted: 0, kept: {} });
  });

  test('a pagination record changed between read and mark: marks undone, kept as changed', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const parent = await h.parent(3);
    await minedChild(h, outpoints(parent, 3), 1000);
    // another cleanup records a deleted child on the pagination record: its generation moves
    const engine = raceAtFirstMark(h, () => h.ledger.setDeletedChild(parent, 1, newTxid()));
    expect(await h.serviceOver(engine).runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { changed: 1 } });
    for (const n of [0, 1]) expect((await bins(h, parent, n))!.deleting).toBeUndefined();
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1 });
  });

  test('a marked tx whose child was reorganized out after the mark waits for the child to be stable again', async () => {
    const { h, parent, child } = await spentParent(1);
    // a pass dies right after marking the master
    const killed = failingAt(h.engine, h.blobs, 2);
    expect(await h.serviceOver(killed.engine, killed.blobs).runPass({ tip: 1288 })).toMatchObject({ errors: 1 });
    expect((await bins(h, parent))!.deleting).toBe(true);
    await h.ledger.unsetMined(child, BLOCK, 1289);
    expect(await h.service.runPass({ tip: 1290 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
    await h.ledger.setMined(child, BLOCK + 1, 1300);
    expect(await h.service.runPass({ tip: 1587 })).toMatchObject({ deleted: 0, kept: { child_unstable: 1 } });
    expect(await h.service.runPass({ tip: 1588 })).toMatchObject({ deleted: 1 });
    expect(await h.ledger.leftovers(parent)).toEqual([]);
  });

  test('a child listed in deletedChildren but still in the store (its delete was interrupted) is judged by its record', async () => {
    const h = await harness();
    const grand = await h.parent(1, { minedAt: 100 });
    // the grandparent's only child is a conflicting tx: never mined, deletable at 1000 + R without being spent
    const parent = newTxid();
    await h.ledger.create(parent, 1, [{ txid: grand, vout: 0 }], { conflicting: true, height: 1000 });
    await h.ledger.spend(parent, [{ txid: grand, vout: 0 }], 1000);
    expect((await bins(h, grand))!.deleteAtHeight).toBe(1288);
    expect((await bins(h, parent))!.deleteAtHeight).toBe(1288);
    // a pass at 1288 keeps the grandparent (child unmined), marks the parent, records it in the grandparent's
    // deletedChildren and dies before removing it (steps: mark, setDeletedChild, remove)
    const killed = failingAt(h.engine, h.blobs, 3);
    expect(await h.serviceOver(killed.engine, killed.blobs).runPass({ tip: 1288 })).toMatchObject({
      deleted: 0,
      errors: 1,
      kept: { child_unmined: 1 },
    });
    expect((await bins(h, grand))!.deletedChildren).toEqual({ [parent]: true });
    expect(await bins(h, parent)).toMatchObject({ deleting: true });
    // the UDFs refuse to change a record marked deleting: its state stays as it was when it was marked
    await expect(h.ledger.setMined(parent, BLOCK, 1288)).rejects.toMatchObject({ code: 'DELETING' });
    // the parent is still in the store and unmined: the grandparent stays while the parent's delete is finished
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1, kept: { child_unmined: 1 } });
    expect(await h.ledger.exists(grand)).toBe(true);
    expect(await h.ledger.exists(parent)).toBe(false);
    // now the vouched child is really gone: the grandparent goes
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1, kept: {} });
    expect(await h.ledger.leftovers(grand)).toEqual([]);
  });

  test('an inputs bin that does not parse is an error; the tx stays marked and is not deleted', async () => {
    const { h, parent } = await spentParent(1);
    // corrupt inputs bin
    await h.engine.update(txidBytes(parent), { inputs: [Buffer.from([7, 1, 2])] });
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, errors: 1 });
    expect(await h.ledger.exists(parent)).toBe(true);
    expect((await bins(h, parent))!.deleting).toBe(true);
  });

  test('a coinbase tx updates no parent', async () => {
    const h = await harness();
    const parent = await h.parent(1, { coinbase: true, inputs: [{ txid: '00'.repeat(32), vout: 0xffffffff }] });
    await minedChild(h, [{ txid: parent, vout: 0 }], 1000);
    const engine = new DelegatingEngine(h.engine, {
      batchApply: async (items, inner) => {
        if (items.some((i) => i.fn !== 'markDeleting')) throw new Error('no parent update expected');
        return inner.batchApply(items);
      },
    });
    expect(await h.serviceOver(engine).runPass({ tip: 1288 })).toMatchObject({ deleted: 1, errors: 0 });
  });

  test('the master changed between read and mark: no record is left marked, kept as changed', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const parent = await h.parent(3);
    await minedChild(h, outpoints(parent, 3), 1000);
    // another cleanup records a deleted child on the master: its generation moves
    const isMaster = (key: RecordKey) => key.length === 32;
    const engine = raceAtFirstMark(h, () => h.ledger.setDeletedChild(parent, 0, newTxid()), isMaster);
    expect(await h.serviceOver(engine).runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { changed: 1 } });
    for (const n of [0, 1]) expect((await bins(h, parent, n))!.deleting).toBeUndefined();
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1 });
  });

  test('marks left on pagination records of a tx that is now kept at master level are cleared', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const parent = await h.parent(3);
    await minedChild(h, outpoints(parent, 3), 1000);
    // a mark on a pagination record under an unmarked master: passes mark the master first and unmark it last, so
    // only a pass of an older version (pagination records first) leaves this; injected
    await h.engine.update(keyOfRecord(txidBytes(parent), 1), { deleting: true });
    expect(await bins(h, parent, 1)).toMatchObject({ deleting: true });
    expect((await bins(h, parent))!.deleting).toBeUndefined();
    // then the tx is locked (which removes its DAH); a stray DAH is injected so that cleanup sees the master
    await h.ledger.setFlag(parent, 'setLocked', true, 1288);
    expect((await bins(h, parent))!.deleteAtHeight).toBeUndefined();
    await h.engine.update(txidBytes(parent), { deleteAtHeight: 1288 });
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { locked: 1 } });
    expect((await bins(h, parent, 1))!.deleting).toBeUndefined();
  });

  test('a failed range query ends the pass with an error and more = true', async () => {
    const h = await harness();
    const engine = new DelegatingEngine(h.engine, {
      queryRange: async () => {
        throw new EngineError('UNAVAILABLE', 'index down');
      },
    });
    expect(await h.serviceOver(engine).runPass({ tip: 1288 })).toMatchObject({
      errors: 1,
      rangesFailed: 1,
      rangeError: 'index down',
      more: true,
      deleted: 0,
    });
  });

  test('indexes that cannot be made ready fail every range loudly, even at tip 0 (never a quiet zero)', async () => {
    const h = await harness({ partitionRanges: 4 });
    const engine = new DelegatingEngine(h.engine, {
      ensureIndexes: async () => {
        throw new EngineError(
          'TIMEOUT',
          'aerospike create index utxos_1568b63c_deleteAtHeight: no answer within 120000 ms',
        );
      },
    });
    const counts: Record<string, number> = {};
    const service = new CleanupService({
      engine,
      blobs: h.blobs,
      moduleName: h.moduleName,
      settings: h.settings,
      getTip: async () => 0,
      metrics: { count: (name, value) => (counts[name] = value) },
    });
    for (const tip of [0, 1288]) {
      expect(await service.runPass({ tip })).toMatchObject({
        deleted: 0,
        errors: 4,
        rangesFailed: 4,
        rangeError: expect.stringMatching(/^aerospike create index utxos_1568b63c_deleteAtHeight: no answer/),
        more: true,
      });
      expect(counts).toMatchObject({ CleanupErrors: 4, CleanupRangesFailed: 4 });
    }
    // the ranges' locks were released: a pass over an engine whose indexes work runs them
    expect(await h.service.runPass({ tip: 0 })).toMatchObject({ errors: 0, more: false });
    expect(await h.service.runPass({ tip: 0 })).not.toHaveProperty('rangesFailed');
  });

  test('spend and unspend of a record marked deleting are refused (DELETING)', async () => {
    const { h, parent, child } = await spentParent(2);
    // the mark cleanup's markDeleting writes
    await h.engine.update(txidBytes(parent), { deleting: true });
    await expect(h.ledger.spend(newTxid(), [{ txid: parent, vout: 1 }], 1001)).rejects.toMatchObject({
      code: 'DELETING',
    });
    await expect(h.ledger.unspend(child, [{ txid: parent, vout: 0 }], 1001)).rejects.toMatchObject({
      code: 'DELETING',
    });
  });
});

describe('a pass killed after each delete step is finished by the next pass', () => {
  // steps of one delete of a paginated external tx with a parent: mark master, mark page, setDeletedChild,
  // delete .tx, delete .outputs, remove page, remove master
  for (let step = 1; step <= 7; step++) {
    test(`killed at step ${step}`, async () => {
      const h = await harness({ utxoBatchSize: 2 });
      const grand = await h.parent(1, { minedAt: 100 });
      const parent = await h.parent(3, { external: true, inputs: [{ txid: grand, vout: 0 }] });
      await h.ledger.spend(parent, [{ txid: grand, vout: 0 }], 800);
      await minedChild(h, outpoints(parent, 3), 1000);
      await h.blobs.put(parent, 'outputs', Buffer.from('outputs'));
      // the grandparent itself is deletable at 1088 + window; keep it out of the way with a preserve
      await h.ledger.preserve(grand, 10_000, 1000);

      const killed = failingAt(h.engine, h.blobs, step);
      const first = await h.serviceOver(killed.engine, killed.blobs).runPass({ tip: 1288 });
      expect(first.deleted + first.errors + (first.kept.changed ?? 0)).toBe(1);
      expect(first.deleted).toBe(0);

      const second = await h.service.runPass({ tip: 1288 });
      expect(second).toMatchObject({ deleted: 1, errors: 0 });
      expect(await h.ledger.leftovers(parent)).toEqual([]);
      expect((await bins(h, grand))!.deletedChildren).toEqual({ [parent]: true });
    });
  }
});

describe('time budget, report and metrics', () => {
  test('a pass stops before its deadline with more = true; the next pass resumes', async () => {
    // one range: the clock below counts the pass's steps in order
    const h = await harness({ batchSize: 2, partitionRanges: 1 });
    for (let i = 0; i < 5; i++) {
      const p = await h.parent(1);
      await minedChild(h, [{ txid: p, vout: 0 }], 1000);
    }
    let clock = 0;
    // every clock read advances 1 ms; a 5 ms budget runs out midway
    const service = h.serviceOver(h.engine, h.blobs, () => clock++);
    const first = await service.runPass({ tip: 1288, maxDurationMs: 5 });
    expect(first.more).toBe(true);
    expect(first.deleted).toBeGreaterThan(0);
    expect(first.deleted).toBeLessThan(5);
    const second = await service.runPass({ tip: 1288 });
    expect(second).toMatchObject({ more: false, deleted: 5 - first.deleted });
  });

  test('partition ranges: a pass queries every range with its own cursor and deletes each candidate once', async () => {
    const h = await harness({ batchSize: 2, partitionRanges: 16 });
    for (let i = 0; i < 24; i++) {
      const p = await h.parent(1);
      await minedChild(h, [{ txid: p, vout: 0 }], 1000);
    }
    const ranges = new Set<string>();
    const query = h.engine.queryRange.bind(h.engine);
    h.engine.queryRange = async (q) => {
      if (q.bin === 'deleteAtHeight') ranges.add(JSON.stringify(q.partitions));
      expect(q.limit).toBe(2);
      return query(q);
    };
    const report = await h.service.runPass({ tip: 1288 });
    h.engine.queryRange = query;
    expect(report).toMatchObject({ deleted: 24, errors: 0, more: false });
    expect(ranges.size).toBe(16);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, errors: 0 });
  });

  test('a range whose query page fails is asked again from its cursor; a range failing for good ends only itself', async () => {
    const h = await harness({ batchSize: 1, partitionRanges: 4 });
    for (let i = 0; i < 12; i++) {
      const p = await h.parent(1);
      await minedChild(h, [{ txid: p, vout: 0 }], 1000);
    }
    const query = h.engine.queryRange.bind(h.engine);
    let calls = 0;
    h.engine.queryRange = async (q) => {
      // every third DAH page fails once: its range asks again from the same cursor
      if (q.bin === 'deleteAtHeight' && ++calls % 3 === 0) throw new Error('engine hiccup');
      return query(q);
    };
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 12, errors: 0, more: false });
    for (let i = 0; i < 8; i++) {
      const p = await h.parent(1);
      await minedChild(h, [{ txid: p, vout: 0 }], 1000);
    }
    // the first range fails for good: the others finish, the pass reports the error and more
    h.engine.queryRange = async (q) => {
      if (q.bin === 'deleteAtHeight' && q.partitions?.begin === 0) throw new Error('range down');
      return query(q);
    };
    const partial = await h.service.runPass({ tip: 1288 });
    expect(partial).toMatchObject({ errors: 1, more: true });
    h.engine.queryRange = query;
    const rest = await h.service.runPass({ tip: 1288 });
    expect(partial.deleted + rest.deleted).toBe(8);
    expect(rest).toMatchObject({ errors: 0, more: false });
  });

  test('an absolute deadline already passed: nothing is done, more = true', async () => {
    const h = await harness();
    const p = await h.parent(1);
    await minedChild(h, [{ txid: p, vout: 0 }], 1000);
    const report = await h.serviceOver(h.engine, h.blobs, () => 5000).runPass({ tip: 1288, deadline: 5000 });
    expect(report).toMatchObject({ deleted: 0, more: true, durationMs: 0 });
    expect(await h.ledger.exists(p)).toBe(true);
  });

  test('the tip comes from getTip when not given; tip 0 does nothing', async () => {
    const h = await harness();
    const p = await h.parent(1);
    await minedChild(h, [{ txid: p, vout: 0 }], 1000);
    expect(await h.service.runPass()).toMatchObject({ tip: 0, deleted: 0 });
    const service = new CleanupService({
      engine: h.engine,
      blobs: h.blobs,
      moduleName: h.moduleName,
      settings: h.settings,
      getTip: async () => 1288,
    });
    expect(await service.runPass()).toMatchObject({ tip: 1288, deleted: 1 });
  });

  test('metrics: one count per report field', async () => {
    const h = await harness();
    const a = await h.parent(1);
    await minedChild(h, [{ txid: a, vout: 0 }], 1000);
    const b = await h.parent(1);
    await h.child([{ txid: b, vout: 0 }], 1000);
    await h.service.runPass({ tip: 1288 });
    expect(h.counts).toMatchObject({
      CleanupDeleted: 1,
      CleanupKept_child_unmined: 1,
      CleanupErrors: 0,
      CleanupPreserveExpired: 0,
      CleanupMore: 0,
    });
    expect(h.counts.CleanupDurationMs).toBeGreaterThanOrEqual(0);
  });

  test('invalid settings are refused', async () => {
    const h = await harness();
    for (const bad of [
      { utxoBatchSize: 0 },
      { batchSize: 0 },
      { cleanupSafetyWindow: -1 },
      { blockHeightRetention: 1.5 },
    ]) {
      expect(
        () =>
          new CleanupService({
            engine: h.engine,
            blobs: h.blobs,
            moduleName: h.moduleName,
            settings: { ...h.settings, ...bad },
            getTip: async () => 0,
          }),
      ).toThrow(RangeError);
    }
  });
});
