/**
 * Cleanup edge cases on the embedded engine with the real UDF module. Histories go through the UDFs (ledger.ts);
 * a direct engine.update appears only to inject a state the rules never produce (a stray DAH, a corrupt bin, the
 * `deleting` mark cleanup itself writes) and is commented as such.
 * Races, marks and interrupted passes: edge-races.test.ts.
 */
import { CleanupService } from '../../lib/cleanup';
import { keyOfRecord, txidBytes } from '../../lib/cleanup/record-facts';
import { EngineError } from '../../lib/engine/port';
import { DelegatingEngine } from './fakes';
import {
  CHILD_BLOCK,
  closeHarnesses,
  harness,
  minedChild,
  outpoints,
  recordBins as bins,
  spentParent,
} from './harness';
import { newTxid } from './ledger';

const BLOCK = CHILD_BLOCK;

afterEach(closeHarnesses);

describe('cleanup edge cases', () => {
  test('several children, only one unstable: kept until that one is stable', async () => {
    const { h, parent } = await spentParent(3);
    await minedChild(h, [{ txid: parent, vout: 1 }], 1000);
    // the third child spends at 1000 too (DAH = 1288) but is mined only at 1200
    const late = await h.child([{ txid: parent, vout: 2 }], 1000);
    await h.ledger.setMined(late, BLOCK, 1200);
    expect((await bins(h, parent))!.deleteAtHeight).toBe(1288);
    expect(await h.service.runPass({ tip: 1287 })).toMatchObject({ deleted: 0, kept: {} });
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_unstable: 1 } });
    expect(await h.service.runPass({ tip: 1487 })).toMatchObject({ deleted: 0, kept: { child_unstable: 1 } });
    expect(await h.service.runPass({ tip: 1488 })).toMatchObject({ deleted: 1 });
  });

  test('a parent with an unspent output is kept even when its DAH bin says otherwise (not_all_spent)', async () => {
    const { h, parent } = await spentParent(2);
    // the DAH rule sets no DAH on a tx with an unspent output: a stray one is injected
    expect((await bins(h, parent))!.deleteAtHeight).toBeUndefined();
    await h.engine.update(txidBytes(parent), { deleteAtHeight: 1100 });
    expect(await h.service.runPass({ tip: 2000 })).toMatchObject({ deleted: 0, kept: { not_all_spent: 1 } });
  });

  test('an unmined parent with a stray DAH is kept (not_mined); a locked or creating one too', async () => {
    const h = await harness();
    // the real rules remove the DAH of an unmined (reorg) or locked tx; a stray DAH is injected back on each
    const a = await h.parent(1);
    await minedChild(h, [{ txid: a, vout: 0 }], 1000);
    await h.ledger.unsetMined(a, h.parentBlock(a), 1200);
    const b = await h.parent(1);
    await minedChild(h, [{ txid: b, vout: 0 }], 1000);
    await h.ledger.setFlag(b, 'setLocked', true, 1200);
    for (const t of [a, b]) {
      expect((await bins(h, t))!.deleteAtHeight).toBeUndefined();
      await h.engine.update(txidBytes(t), { deleteAtHeight: 1288 });
    }
    // `creating` is only ever present during a multi-record create (no UDF sets it): injected
    const c = await h.parent(1);
    await minedChild(h, [{ txid: c, vout: 0 }], 1000);
    await h.engine.update(txidBytes(c), { creating: true });
    expect(await h.service.runPass({ tip: 2000 })).toMatchObject({
      deleted: 0,
      kept: { not_mined: 1, locked: 1, creating: 1 },
    });
  });

  test('missing child record: kept (child_missing), unless the parent lists it in deletedChildren', async () => {
    const { h, parent, child } = await spentParent(1);
    // a child record lost (not deleted by cleanup)
    await h.engine.remove(txidBytes(child));
    expect(await h.service.runPass({ tip: 2000 })).toMatchObject({ deleted: 0, kept: { child_missing: 1 } });
    await h.ledger.setDeletedChild(parent, 0, child);
    expect(await h.service.runPass({ tip: 2000 })).toMatchObject({ deleted: 1 });
  });

  test('a deleted child recorded on the pagination record that held its output is safe', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const parent = await h.parent(3, { minedAt: 100 });
    const a = await minedChild(h, outpoints(parent, 2), 1000);
    const b = await minedChild(h, [{ txid: parent, vout: 2 }], 1000);
    await h.engine.remove(txidBytes(b));
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_missing: 1 } });
    // listed on the master only: not where its output was
    await h.ledger.setDeletedChild(parent, 0, b);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_missing: 1 } });
    await h.ledger.setDeletedChild(parent, 1, b);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1 });
    expect(await h.ledger.exists(a)).toBe(true);
  });

  test('a failed batch read of the children keeps every parent of the chunk (child_read_error)', async () => {
    const h = await harness();
    const p1 = await h.parent(1);
    const p2 = await h.parent(1);
    await minedChild(h, [{ txid: p1, vout: 0 }], 1000);
    await minedChild(h, [{ txid: p2, vout: 0 }], 1000);
    const engine = new DelegatingEngine(h.engine, {
      batchGet: async () => {
        throw new EngineError('TIMEOUT', 'read timed out');
      },
    });
    expect(await h.serviceOver(engine).runPass({ tip: 2000 })).toMatchObject({
      deleted: 0,
      kept: { child_read_error: 2 },
    });
  });

  test('a child without block heights is unsafe', async () => {
    const { h, child } = await spentParent(1);
    // corrupt: mined (no unminedSince) but without block heights
    await h.engine.update(txidBytes(child), { blockHeights: [] });
    expect(await h.service.runPass({ tip: 2000 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
  });

  test('conflicting trees: a conflicting tx is deleted unspent, but not while a conflicting spender is unmined', async () => {
    const h = await harness();
    const lone = newTxid();
    await h.ledger.create(lone, 2, [], { conflicting: true, height: 1000 });
    const spent = newTxid();
    await h.ledger.create(spent, 2, [], { conflicting: true, height: 1000 });
    const grandchild = newTxid();
    await h.ledger.create(grandchild, 1, [{ txid: spent, vout: 0 }], { conflicting: true, height: 1000 });
    await expect(h.ledger.spend(grandchild, [{ txid: spent, vout: 0 }], 1000)).rejects.toMatchObject({
      code: 'CONFLICTING',
    });
    await h.ledger.spend(grandchild, [{ txid: spent, vout: 0 }], 1000, { ignoreConflicting: true });
    // setConflicting's DAH rule: creation height + R
    for (const t of [lone, spent, grandchild]) expect((await bins(h, t))!.deleteAtHeight).toBe(1288);
    const report = await h.service.runPass({ tip: 1288 });
    // lone and grandchild have no spenders; spent has an unmined (conflicting) spender
    expect(report).toMatchObject({ deleted: 2, kept: { child_unmined: 1 } });
    expect(await h.ledger.exists(lone)).toBe(false);
    expect(await h.ledger.exists(spent)).toBe(true);
    // grandchild is gone now and was recorded in spent's deletedChildren: spent goes next pass
    expect(await h.service.runPass({ tip: 1289 })).toMatchObject({ deleted: 1 });
    expect(await h.ledger.exists(spent)).toBe(false);
  });

  test('preserved parent: kept while preserveUntil > H, expired at H and deleted once DAH is reached again', async () => {
    const { h, parent } = await spentParent(1);
    await h.ledger.preserve(parent, 1500, 1100);
    expect((await bins(h, parent))!.deleteAtHeight).toBeUndefined();
    // a stray DAH on a preserved record does not let it go (preserveUntil removes the DAH: injected)
    await h.engine.update(txidBytes(parent), { deleteAtHeight: 1288 });
    expect(await h.service.runPass({ tip: 1400 })).toMatchObject({ deleted: 0, kept: { preserved: 1 } });
    const at1500 = await h.service.runPass({ tip: 1500 });
    expect(at1500).toMatchObject({ preserveExpired: 1, deleted: 0 });
    // expirePreserve re-ran the DAH rule at 1500
    expect((await bins(h, parent))!.deleteAtHeight).toBe(1788);
    expect(await h.service.runPass({ tip: 1788 })).toMatchObject({ deleted: 1, preserveExpired: 0 });
  });

  test('a preserve until height 0 is already expired: the first pass removes it and re-runs the DAH rule', async () => {
    const { h, parent } = await spentParent(1);
    await h.ledger.preserve(parent, 0, 1100);
    expect((await bins(h, parent))!.preserveUntil).toBe(0);
    expect(await h.service.runPass({ tip: 1200 })).toMatchObject({ preserveExpired: 1, deleted: 0 });
    expect((await bins(h, parent))!.preserveUntil).toBeUndefined();
    expect((await bins(h, parent))!.deleteAtHeight).toBe(1488);
  });

  test('an expired preserve of an external paginated tx: its DAHSET goes to the reconciler (pages and blob follow)', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const parent = await h.parent(3, { external: true });
    await minedChild(h, outpoints(parent, 3), 1000);
    expect(await bins(h, parent, 1)).toMatchObject({ deleteAtHeight: 1288 });
    expect(await h.blobs.getDeleteAtHeight(parent, 'outputs')).toBe(1288);
    // PRESERVE: the reconciler removes the pagination record's DAH and the blob tag
    await h.ledger.preserve(parent, 1500, 1100);
    expect((await bins(h, parent, 1))!.deleteAtHeight).toBeUndefined();
    expect(await h.blobs.getDeleteAtHeight(parent, 'outputs')).toBeNull();
    expect(await h.service.runPass({ tip: 1500 })).toMatchObject({ preserveExpired: 1, errors: 0 });
    expect(await bins(h, parent)).toMatchObject({ deleteAtHeight: 1788 });
    expect(await bins(h, parent, 1)).toMatchObject({ deleteAtHeight: 1788 });
    expect(await h.blobs.getDeleteAtHeight(parent, 'outputs')).toBe(1788);
    expect(await h.service.runPass({ tip: 1788 })).toMatchObject({ deleted: 1 });
    expect(await h.ledger.leftovers(parent)).toEqual([]);
  });

  test('a failed signal send after an expired preserve is counted as an error; the preserve is still expired', async () => {
    const h = await harness();
    const parent = await h.parent(1, { external: true });
    await minedChild(h, [{ txid: parent, vout: 0 }], 1000);
    await h.ledger.preserve(parent, 1500, 1100);
    const service = new CleanupService({
      engine: h.engine,
      blobs: h.blobs,
      moduleName: h.moduleName,
      settings: h.settings,
      getTip: async () => 0,
      signals: {
        kind: 'down',
        send: async () => {
          throw new Error('queue unavailable');
        },
        ping: async () => {},
      },
    });
    expect(await service.runPass({ tip: 1500 })).toMatchObject({ preserveExpired: 1, errors: 1 });
    expect(await bins(h, parent)).toMatchObject({ deleteAtHeight: 1788 });
  });

  test('paginated parent (B = 2, 5 outputs): every pagination record goes with the master', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const parent = await h.parent(5);
    const spends = [0, 1, 2, 3, 4].map((vout) => ({ txid: parent, vout }));
    await minedChild(h, spends.slice(0, 3), 1000);
    expect(await h.service.runPass({ tip: 2000 })).toMatchObject({ deleted: 0 });
    expect((await bins(h, parent))!.deleteAtHeight).toBeUndefined();
    const late = await h.child(spends.slice(3), 1010);
    await h.ledger.setMined(late, BLOCK, 1020);
    expect(await h.ledger.leftovers(parent)).toHaveLength(3);
    // both pagination records signalled ALLSPENT; the reconciler counted them and the master's DAH rule ran at 1010
    expect(await bins(h, parent)).toMatchObject({ spentExtraRecs: 2, deleteAtHeight: 1298 });
    expect(await bins(h, parent, 2)).toMatchObject({ lastSpentState: 'ALLSPENT', deleteAtHeight: 1298 });
    // pagination records carry the DAH too but are not counted as candidates
    expect(await h.service.runPass({ tip: 1298 })).toMatchObject({ deleted: 0, kept: { child_unstable: 1 } });
    expect(await h.service.runPass({ tip: 1308 })).toMatchObject({ deleted: 1, kept: {}, errors: 0 });
    expect(await h.ledger.leftovers(parent)).toEqual([]);
  });

  test('paginated parent with a missing pagination record is kept (record_missing)', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const parent = await h.parent(3);
    await minedChild(h, outpoints(parent, 3), 1000);
    // a pagination record lost
    await h.engine.remove(keyOfRecord(txidBytes(parent), 1));
    expect(await h.service.runPass({ tip: 2000 })).toMatchObject({ deleted: 0, kept: { record_missing: 1 } });
  });

  test('external parent: its .tx blob is deleted and its own parent records it in deletedChildren', async () => {
    const h = await harness();
    const grand = await h.parent(2, { minedAt: 100 });
    const parent = await h.parent(1, { external: true, inputs: [{ txid: grand, vout: 1 }] });
    await h.ledger.spend(parent, [{ txid: grand, vout: 1 }], 800);
    await minedChild(h, [{ txid: parent, vout: 0 }], 1000);
    expect(await h.blobs.exists(parent, 'tx')).toBe(true);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1 });
    expect(await h.ledger.leftovers(parent)).toEqual([]);
    expect((await bins(h, grand))!.deletedChildren).toEqual({ [parent]: true });
  });

  test('deletedChildren goes to the record holding the output (vout 5 with B = 2 -> pagination record 2)', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const grand = await h.parent(6, { minedAt: 100 });
    const parent = await h.parent(1, { inputs: [{ txid: grand, vout: 5 }] });
    await h.ledger.spend(parent, [{ txid: grand, vout: 5 }], 800);
    await minedChild(h, [{ txid: parent, vout: 0 }], 1000);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1 });
    expect((await bins(h, grand, 2))!.deletedChildren).toEqual({ [parent]: true });
    expect((await bins(h, grand))!.deletedChildren).toBeUndefined();
  });

  test('a missing grandparent is fine', async () => {
    const h = await harness();
    const parent = await h.parent(1, { inputs: [{ txid: newTxid(), vout: 0 }] });
    await minedChild(h, [{ txid: parent, vout: 0 }], 1000);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1, errors: 0 });
  });
});
