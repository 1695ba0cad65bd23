/**
 * Regression tests for cleanup defects found in review (embedded engine, real UDF module).
 */
import { keyOfRecord, txidBytes } from '../../lib/cleanup/record-facts';
import { failingAt } from './fakes';
import { closeHarnesses, harness, type Harness } from './harness';

const BLOCK = 7;

async function minedChild(h: Harness, spends: { txid: string; vout: number }[], height: number): Promise<string> {
  const c = await h.child(spends, height);
  await h.ledger.setMined(c, BLOCK, height);
  return c;
}

async function bins(h: Harness, txid: string, n = 0): Promise<Record<string, unknown> | undefined> {
  return (await h.engine.get(keyOfRecord(txidBytes(txid), n)))?.bins;
}

afterEach(closeHarnesses);

describe('cleanup review regressions', () => {
  test('a master marked deleting keeps its DAH through later UDF calls: the next pass still finishes it', async () => {
    const h = await harness();
    const parent = await h.parent(1);
    await minedChild(h, [{ txid: parent, vout: 0 }], 1000);
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
});
