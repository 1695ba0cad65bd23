/**
 * Cleanup deletes a chunk's candidates in engine batches (docs/cleanup.md, step 5): the number of engine calls of a
 * pass does not grow with the number of txs; a batch failing as a whole, or for one of its items, is finished by
 * the next pass, and an item's failure stops only its tx. Embedded engine, real UDF module.
 */
import { isCleanupLockKey } from '../../lib/cleanup/pass-lock';
import { txidBytes } from '../../lib/cleanup/record-facts';
import { EngineError, type RecordEngine, type RecordKey } from '../../lib/engine/port';
import { DelegatingEngine } from './fakes';
import { closeHarnesses, harness, minedChild, outpoints, recordBins as bins, type Harness } from './harness';
import { newTxid } from './ledger';

afterEach(closeHarnesses);

/** The engine with every call counted by method name. */
function counting(inner: RecordEngine): { engine: RecordEngine; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const engine = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        calls[prop] = (calls[prop] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { engine, calls };
}

interface Scene {
  h: Harness;
  /** the deletable txs: 3 outputs each with B = 2 (a master and a pagination record), every other one external */
  txs: string[];
  /** their parents, one each (a record none of their outputs leaves deletable) */
  grands: string[];
}

/** `n` deletable paginated txs at tip 1288, each spending an output of its own parent. */
async function scene(n: number): Promise<Scene> {
  const h = await harness({ utxoBatchSize: 2, batchSize: 50, partitionRanges: 1 });
  const txs: string[] = [];
  const grands: string[] = [];
  for (let i = 0; i < n; i++) {
    // two outputs, one left unspent: the parent is never a candidate itself
    const grand = await h.parent(2, { minedAt: 100 });
    const tx = await h.parent(3, { external: i % 2 === 0, inputs: [{ txid: grand, vout: 0 }] });
    await h.ledger.spend(tx, [{ txid: grand, vout: 0 }], 800);
    await minedChild(h, outpoints(tx, 3), 1000);
    grands.push(grand);
    txs.push(tx);
  }
  return { h, txs, grands };
}

/** Every tx gone (records and blobs), recorded in its parent's deletedChildren, its outputs no longer spendable. */
async function expectAllDeleted(s: Scene): Promise<void> {
  for (const [i, tx] of s.txs.entries()) {
    expect(await s.h.ledger.leftovers(tx)).toEqual([]);
    expect((await bins(s.h, s.grands[i]))!.deletedChildren).toEqual({ [tx]: true });
    expect((await bins(s.h, s.grands[i]))!.deleting).toBeUndefined();
    await expect(s.h.ledger.spend(newTxid(), [{ txid: tx, vout: 2 }], 1300)).rejects.toMatchObject({
      code: 'TX_NOT_FOUND',
    });
  }
}

describe('engine round trips of a pass', () => {
  async function callsOfPass(n: number): Promise<Record<string, number>> {
    const s = await scene(n);
    const { engine, calls } = counting(s.h.engine);
    expect(await s.h.serviceOver(engine).runPass({ tip: 1288 })).toMatchObject({ deleted: n, errors: 0, kept: {} });
    await expectAllDeleted(s);
    return calls;
  }

  test('a constant number of batches per chunk, whatever the number of txs in it', async () => {
    const few = await callsOfPass(2);
    const many = await callsOfPass(12);
    expect(many).toEqual(few);
    // mark masters, mark pages (markDeleting); one round of setDeletedChild; remove pages, remove masters; and the
    // range locks: taken in one batchCreate, released in one batchGet (ownership) and one batchRemove
    expect(few).toMatchObject({ batchApply: 3, batchRemove: 3, batchCreate: 1 });
    expect(few.batchUpdate).toBeUndefined();
    // no single-record calls
    for (const single of ['create', 'get', 'remove', 'update', 'apply']) expect(few[single]).toBeUndefined();
  });

  test('children of one parent record in a chunk: one setDeletedChild per batch call and key, in rounds', async () => {
    const h = await harness({ batchSize: 50, partitionRanges: 1 });
    // four outputs on the parent's master (B = 4), each an input of one of four deletable txs
    const grand = await h.parent(4, { minedAt: 100 });
    const txs: string[] = [];
    for (let vout = 0; vout < 4; vout++) {
      const tx = await h.parent(1, { inputs: [{ txid: grand, vout }] });
      await minedChild(h, [{ txid: tx, vout: 0 }], 1000);
      txs.push(tx);
    }
    const batches: string[][] = [];
    const engine = new DelegatingEngine(h.engine, {
      batchApply: async (items, inner) => {
        if (items[0]?.fn === 'setDeletedChild') batches.push(items.map((i) => i.key.toString('hex')));
        return inner.batchApply(items);
      },
    });
    expect(await h.serviceOver(engine).runPass({ tip: 1288 })).toMatchObject({ deleted: 4, errors: 0 });
    expect(batches).toHaveLength(4);
    for (const keys of batches) expect(new Set(keys).size).toBe(keys.length);
    expect((await bins(h, grand))!.deletedChildren).toEqual(Object.fromEntries(txs.map((t) => [t, true])));
  });
});

type Step = 'mark masters' | 'mark pages' | 'setDeletedChild' | 'remove pages' | 'remove masters';
const STEPS: Step[] = ['mark masters', 'mark pages', 'setDeletedChild', 'remove pages', 'remove masters'];

/** Whether a batch call is the given step of the delete (marks are markDeleting calls, pagination keys 36 bytes). */
function isStep(step: Step, method: string, keys: RecordKey[], fn?: string): boolean {
  const pages = keys.every((k) => k.length > 32);
  // the range locks' release is no step of the delete
  if (keys.some(isCleanupLockKey)) return false;
  switch (step) {
    case 'mark masters':
      return method === 'batchApply' && fn === 'markDeleting' && !pages;
    case 'mark pages':
      return method === 'batchApply' && fn === 'markDeleting' && pages;
    case 'setDeletedChild':
      return method === 'batchApply' && fn === 'setDeletedChild';
    case 'remove pages':
      return method === 'batchRemove' && pages;
    case 'remove masters':
      return method === 'batchRemove' && !pages;
  }
}

/** What a test does with the batch call of its step: `run` makes the real call (on some of the items, or all). */
type Intercept = <I, R>(
  items: I[],
  run: (part: I[]) => Promise<R[]>,
  isVictim: (item: I) => boolean,
) => Promise<(R | { ok: false; error: EngineError })[]>;

/**
 * The engine with the batch calls of one delete step handed to `intercept`, every other call passed on. An item is
 * the victim's when it belongs to the tx `victim` (its records, or its setDeletedChild calls on its parents).
 */
function atStep(inner: RecordEngine, step: Step, intercept: Intercept, victim = ''): RecordEngine {
  const ofVictim = (key: RecordKey) => victim !== '' && key.subarray(0, 32).equals(txidBytes(victim));
  const keys = (items: { key: RecordKey }[]) => items.map((i) => i.key);
  return new DelegatingEngine(inner, {
    batchApply: (items, real) =>
      isStep(step, 'batchApply', keys(items), items[0]?.fn)
        ? intercept(
            items,
            (part) => real.batchApply(part),
            // a mark is its tx's record; a setDeletedChild is the tx's call on a parent
            (i) => (i.fn === 'markDeleting' ? ofVictim(i.key) : victim !== '' && i.args[0] === victim),
          )
        : real.batchApply(items),
    batchRemove: (items, real) =>
      isStep(step, 'batchRemove', keys(items))
        ? intercept(
            items,
            (part) => real.batchRemove(part),
            (i) => ofVictim(i.key),
          )
        : real.batchRemove(items),
  });
}

describe('a batch step failing as a whole: the next pass finishes every tx', () => {
  for (const step of STEPS) {
    for (const applied of [false, true]) {
      test(`${step} fails${applied ? ' after it was applied (its answer lost)' : ''}`, async () => {
        const s = await scene(4);
        const down = new EngineError('UNAVAILABLE', `${step} failed`);
        let failed = 0;
        const engine = atStep(s.h.engine, step, async (items, run) => {
          failed++;
          if (applied) await run(items);
          throw down;
        });
        const first = await s.h.serviceOver(engine).runPass({ tip: 1288 });
        expect(failed).toBe(1);
        expect(first).toMatchObject({ deleted: 0, errors: 4 });
        // a failed mark is given up or re-judged, a marked master finished; masters removed before the answer was lost
        // are gone already
        const second = await s.h.service.runPass({ tip: 1288 });
        const gone = applied && step === 'remove masters';
        expect(second).toMatchObject({ deleted: gone ? 0 : 4, errors: 0, kept: {} });
        await expectAllDeleted(s);
      });
    }
  }
});

describe("an item's failure stops only its tx", () => {
  for (const step of STEPS) {
    test(`one tx's ${step} item fails: the others are deleted, the next pass finishes it`, async () => {
      const s = await scene(4);
      const victim = s.txs[1];
      const timeout = new EngineError('TIMEOUT', `${step} of one item timed out`);
      let failedItems = 0;
      // the batch runs without the victim's items, which answer `timeout`
      const engine = atStep(
        s.h.engine,
        step,
        async (items, run, isVictim) => {
          const victims = items.map(isVictim);
          failedItems += victims.filter(Boolean).length;
          const others = await run(items.filter((_, i) => !victims[i]));
          let at = 0;
          return items.map((_, i) => (victims[i] ? { ok: false as const, error: timeout } : others[at++]));
        },
        victim,
      );
      const first = await s.h.serviceOver(engine).runPass({ tip: 1288 });
      expect(failedItems).toBe(1);
      expect(first).toMatchObject({ deleted: 3, errors: 1, kept: {} });
      for (const tx of s.txs) expect(await s.h.ledger.exists(tx)).toBe(tx === victim);
      // the victim's master is marked once its own mark went through (it was given up when its page's mark failed)
      const marked = step !== 'mark masters' && step !== 'mark pages';
      expect((await bins(s.h, victim))!.deleting).toBe(marked ? true : undefined);
      expect(await s.h.service.runPass({ tip: 1288 })).toMatchObject({ deleted: 1, errors: 0, kept: {} });
      await expectAllDeleted(s);
    });
  }
});
