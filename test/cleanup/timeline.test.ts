/**
 * Every row of the timelines of docs/cleanup.md (DAH evolution), with R = safety window = 288, on the embedded engine
 * with the real UDF module: the DAHs come from the Lua DAH rule (spend at 1000 -> DAH 1288).
 */
import { txidToBytes } from '../../lib/domain/txid';
import { closeHarnesses, harness, type Harness } from './harness';

async function dah(h: Harness, txid: string): Promise<unknown> {
  return (await h.engine.get(txidToBytes(txid)))?.bins.deleteAtHeight;
}

const BLOCK = 7;

/** A parent (mined) whose output 0 a child spends at 1000 (DAH 1288); the child is not mined yet. */
async function spentAt1000(): Promise<{ h: Harness; parent: string; child: string }> {
  const h = await harness();
  const parent = await h.parent();
  const child = await h.child([{ txid: parent, vout: 0 }], 1000);
  return { h, parent, child };
}

/** The child mined but not yet stable keeps the parent at lastKept; one block later the parent is deleted. */
async function expectDeletedOnceStable(h: Harness, parent: string, lastKept: number): Promise<void> {
  expect(await h.service.runPass({ tip: lastKept })).toMatchObject({ deleted: 0, kept: { child_unstable: 1 } });
  expect(await h.service.runPass({ tip: lastKept + 1 })).toMatchObject({ deleted: 1 });
  expect(await h.ledger.exists(parent)).toBe(false);
}

/** A parent mined at 50 with two outputs: A spends output 0 and is mined at 100, B output 1 at 200 (DAH 488). */
async function twoChildrenMined(): Promise<{ h: Harness; parent: string; a: string }> {
  const h = await harness();
  const parent = await h.parent(2, { minedAt: 50 });
  const a = await h.child([{ txid: parent, vout: 0 }], 100);
  await h.ledger.setMined(a, BLOCK, 100);
  const b = await h.child([{ txid: parent, vout: 1 }], 200);
  await h.ledger.setMined(b, BLOCK, 200);
  return { h, parent, a };
}

describe('cleanup timelines (docs/cleanup.md)', () => {
  afterEach(closeHarnesses);

  test('parent fully spent at 1000, child mined at 1001: kept at 1288 (287 < 288), deleted at 1289', async () => {
    const { h, parent, child } = await spentAt1000();
    await h.ledger.setMined(child, BLOCK, 1001);
    expect(await dah(h, parent)).toBe(1288);

    const at1200 = await h.service.runPass({ tip: 1200 });
    expect(at1200).toMatchObject({ deleted: 0, kept: {}, errors: 0, more: false });
    const at1288 = await h.service.runPass({ tip: 1288 });
    expect(at1288).toMatchObject({ tip: 1288, deleted: 0, kept: { child_unstable: 1 }, errors: 0 });
    expect(await h.ledger.exists(parent)).toBe(true);
    const at1289 = await h.service.runPass({ tip: 1289 });
    expect(at1289).toMatchObject({ deleted: 1, kept: {}, errors: 0, more: false });
    expect(await h.ledger.leftovers(parent)).toEqual([]);
    expect(await h.ledger.exists(child)).toBe(true);
  });

  test('edge case 1, child never mined: kept at 1288, 1500 and 2000', async () => {
    const { h, parent } = await spentAt1000();
    for (const tip of [1288, 1500, 2000]) {
      expect(await h.service.runPass({ tip })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
      expect(await h.ledger.exists(parent)).toBe(true);
    }
  });

  test('edge case 2, child mined very late (1500): kept at 1288 and 1787, deleted at 1788', async () => {
    const { h, parent, child } = await spentAt1000();
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
    await h.ledger.setMined(child, BLOCK, 1500);
    await expectDeletedOnceStable(h, parent, 1787);
  });

  test('edge case 3, reorg orphans the child at 1200, re-mined at 1300: kept at 1288 and 1587, deleted at 1588', async () => {
    const { h, parent, child } = await spentAt1000();
    await h.ledger.setMined(child, BLOCK, 1100);
    await h.ledger.unsetMined(child, BLOCK, 1200);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
    await h.ledger.setMined(child, BLOCK + 1, 1300);
    await expectDeletedOnceStable(h, parent, 1587);
  });

  test('scenario A, long-running block assembly: the parent is not deleted at 1288 and is there at 1300', async () => {
    const { h, parent } = await spentAt1000();
    expect(await h.service.runPass({ tip: 1200 })).toMatchObject({ deleted: 0, kept: {} });
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
    expect(await h.service.runPass({ tip: 1300 })).toMatchObject({ deleted: 0 });
    expect(await h.ledger.exists(parent)).toBe(true);
  });

  test('scenario B, child mined at 1100 then orphaned at 1300: the parent survives 1288 and the reorg', async () => {
    const { h, parent, child } = await spentAt1000();
    await h.ledger.setMined(child, BLOCK, 1100);
    expect(await h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 0, kept: { child_unstable: 1 } });
    await h.ledger.unsetMined(child, BLOCK, 1300);
    expect(await h.service.runPass({ tip: 1300 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
    expect(await h.ledger.exists(parent)).toBe(true);
  });

  test('edge case 4, restart at 1500 with the child unmined and no preserve_until: kept', async () => {
    const { h, parent } = await spentAt1000();
    expect(await h.service.runPass({ tip: 1500 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
    expect(await h.ledger.exists(parent)).toBe(true);
  });

  describe('multi-child example: A spends output 0 at 100, B spends output 1 at 200 (DAH 488)', () => {
    test('both mined and stable at 488: deleted', async () => {
      const { h, parent } = await twoChildrenMined();
      expect(await dah(h, parent)).toBe(488);
      expect(await h.service.runPass({ tip: 487 })).toMatchObject({ deleted: 0 });
      expect(await h.service.runPass({ tip: 488 })).toMatchObject({ deleted: 1 });
    });

    test('A reorganized out, B stable: kept at 500 (every child is checked, not only the last spender)', async () => {
      const { h, parent, a } = await twoChildrenMined();
      await h.ledger.unsetMined(a, BLOCK, 300);
      expect(await h.service.runPass({ tip: 500 })).toMatchObject({ deleted: 0, kept: { child_unmined: 1 } });
      expect(await h.ledger.exists(parent)).toBe(true);
    });
  });
});
