/**
 * Regression tests for cleanup defects found in review (embedded engine, real UDF module).
 */
import { failingAt } from './fakes';
import { closeHarnesses, harness, minedChild, recordBins as bins, spentParent } from './harness';

afterEach(closeHarnesses);

describe('cleanup review regressions', () => {
  test('a master marked deleting keeps its DAH through later UDF calls: the next pass still finishes it', async () => {
    const { h, parent } = await spentParent(1);
    // a pass dies after marking the master (step 1), before removing it (step 2)
    const killed = failingAt(h.engine, h.blobs, 2);
    expect(await h.serviceOver(killed.engine, killed.blobs).runPass({ tip: 1288 })).toMatchObject({ errors: 1 });
    expect(await bins(h, parent)).toMatchObject({ deleting: true, deleteAtHeight: 1288 });
    // a UDF that re-runs the DAH rule on the marked master must not take the DAH (the only way cleanup finds it)
    await h.ledger.setFlag(parent, 'setLocked', true, 1288);
    expect((await bins(h, parent))!.deleteAtHeight).toBe(1288);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1 });
    expect(await h.ledger.leftovers(parent)).toEqual([]);
  });

  test('a pass that died between its marks, then a reorg unspending an output of the unmarked record: nothing deleted, no mark left', async () => {
    const h = await harness({ utxoBatchSize: 2 });
    const parent = await h.parent(3);
    const onMaster = await minedChild(h, [{ txid: parent, vout: 0 }], 1000);
    await minedChild(h, [{ txid: parent, vout: 1 }], 1000);
    const onPage = await minedChild(h, [{ txid: parent, vout: 2 }], 1000);
    expect((await bins(h, parent))!.deleteAtHeight).toBe(1288);
    // a pass dies after its first mark: one of the two records is marked, the other is not
    const killed = failingAt(h.engine, h.blobs, 2);
    expect(await h.serviceOver(killed.engine, killed.blobs).runPass({ tip: 1288 })).toMatchObject({ errors: 1 });
    const masterMarked = (await bins(h, parent))!.deleting === true;
    const pageMarked = (await bins(h, parent, 1))!.deleting === true;
    expect([masterMarked, pageMarked].filter(Boolean)).toHaveLength(1);
    // a reorg unspends the output held by the record that is not marked (the UDFs refuse the marked one)
    const [unspent, other] = masterMarked
      ? [
          { child: onPage, vout: 2 },
          { child: onMaster, vout: 0 },
        ]
      : [
          { child: onMaster, vout: 0 },
          { child: onPage, vout: 2 },
        ];
    await h.ledger.unspend(unspent.child, [{ txid: parent, vout: unspent.vout }], 1289);
    for (const tip of [1289, 1290, 2000]) await h.service.runPass({ tip });
    // not fully spent: kept, and no mark is left on any of its records
    expect(await h.ledger.exists(parent)).toBe(true);
    expect(await h.ledger.leftovers(parent)).toHaveLength(2);
    for (const n of [0, 1]) expect((await bins(h, parent, n))!.deleting).toBeUndefined();
    // so its outputs can be unspent (a reorg) and spent again
    await h.ledger.unspend(other.child, [{ txid: parent, vout: other.vout }], 2001);
    await h.ledger.spend(unspent.child, [{ txid: parent, vout: unspent.vout }], 2001);
  });
});
