/**
 * The reorg part of the store contract, run unchanged on any RecordEngine: counter-conflicting txs and conflicting
 * children, marking txs on or off the longest chain, double-spend resolution (processConflicting, with a property test
 * over random double-spend trees, crash points and third-party spends), unspend with flagAsLocked, and the unmined
 * iteration for block-assembly recovery. The verifySpenders and processConflicting part is reorg-resolution.ts.
 */
import { Reconciler } from '../../lib/signals/reconciler';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { StoreSettings, UnminedTx, UtxoStore } from '../../lib/store/types';
import { makeTx, rootTx, spendItem, type Fixture } from '../fixtures/txs';
import { FaultPlan, faultyBlobs, faultyEngine } from './doubles';
import { BASE_SETTINGS, codeOf, type MakeDeps } from './store-contract';
import { describeReorgResolution } from './reorg-resolution';

type Store = UtxoStore & { moduleName: string };

const NOW = 1_700_000_000_000;
const MINED = { minedBlocks: [{ blockId: 9, blockHeight: 900, subtreeIdx: 0 }] };

export function describeReorgContract(name: string, makeDeps: MakeDeps): void {
  describe(`UtxoStore reorg contract: ${name}`, () => {
    let store: Store;
    let plan: FaultPlan;
    let clock = NOW;
    let close: () => Promise<void>;

    beforeAll(async () => {
      const t = await makeDeps();
      plan = new FaultPlan();
      const settings: StoreSettings = { ...BASE_SETTINGS };
      store = await createUtxoStore({
        engine: faultyEngine(t.engine, plan),
        blobs: faultyBlobs(t.blobs, plan),
        signals: t.signals,
        settings,
        now: () => clock++,
      });
      t.signals.setHandler(
        new Reconciler({
          engine: t.engine,
          blobs: t.blobs,
          settings,
          moduleName: store.moduleName,
          getTip: () => store.getChainTip(),
        }),
      );
      close = () => t.close();
    });
    beforeEach(async () => {
      plan.disarm();
      await store.setChainTip(1000);
    });
    afterAll(async () => {
      await close();
    });

    /** A mined root with outputs of 1,000,000 sat (its spenders' outputs shrink tenfold per level). */
    async function root(outputs = 2): Promise<Fixture> {
      const f = rootTx(Array.from({ length: outputs }, () => 1_000_000));
      await store.create(f.hex, MINED);
      return f;
    }

    async function spent(f: Fixture, conflicting = false): Promise<Fixture> {
      await store.create(f.hex, { conflicting });
      if (!conflicting) await store.spend({ tx: f.hex });
      return f;
    }

    async function holder(txid: string, vout: number): Promise<string | undefined> {
      const s = await store.getSpend({ txid, vout });
      return s.status === 'SPENT' ? s.spendingTxid : undefined;
    }

    describe('iterateUnmined', () => {
      test('every unmined tx once, with fee, size, parents and flags; createdAt order within a page; retry-safe cursors', async () => {
        const p = await root(3);
        const a = makeTx({ inputs: [{ parent: p, vout: 0 }] });
        await store.create(a.hex);
        const b = makeTx({
          inputs: [
            { parent: p, vout: 1 },
            { parent: p, vout: 2 },
          ],
        });
        await store.create(b.hex, { locked: true });
        const c = rootTx();
        await store.create(c.hex, { conflicting: true });

        const all: UnminedTx[] = [];
        const first = await store.iterateUnmined({ limit: 2 });
        let page = first;
        for (;;) {
          expect(page.txs.length).toBeLessThanOrEqual(2);
          const created = page.txs.map((t) => t.createdAt);
          expect(created).toEqual([...created].sort((x, y) => x - y));
          all.push(...page.txs);
          if (!page.cursor) break;
          const again = await store.iterateUnmined({ limit: 2, cursor: page.cursor });
          const next = await store.iterateUnmined({ limit: 2, cursor: page.cursor });
          expect(next).toEqual(again);
          page = next;
        }
        const ours = all.filter((t) => [a.txid, b.txid, c.txid].includes(t.txid));
        expect(ours.map((t) => t.txid).sort()).toEqual([a.txid, b.txid, c.txid].sort());
        expect(new Set(all.map((t) => t.txid)).size).toBe(all.length);
        expect(all.find((t) => t.txid === p.txid)).toBeUndefined();
        const fb = all.find((t) => t.txid === b.txid)!;
        expect(fb).toMatchObject({ parentTxids: [p.txid], locked: true, conflicting: false });
        expect(fb).toEqual(expect.objectContaining({ fee: expect.any(Number), sizeInBytes: expect.any(Number) }));
        expect((await store.get(b.txid, ['fee', 'sizeInBytes'])) as object).toMatchObject({
          fee: fb.fee,
          sizeInBytes: fb.sizeInBytes,
        });
        expect(all.find((t) => t.txid === c.txid)).toMatchObject({ parentTxids: [], conflicting: true });
      });

      test('a tx mined after its page was fixed is left out of that page when read again', async () => {
        const a = rootTx();
        await store.create(a.hex);
        const first = await store.iterateUnmined({ limit: 1 });
        let cursor = first.cursor;
        await store.setMined({ txids: [a.txid], blockId: 77, blockHeight: 999, subtreeIdx: 0 });
        const seen: string[] = [...first.txs.map((t) => t.txid)];
        while (cursor) {
          const page = await store.iterateUnmined({ limit: 50, cursor });
          seen.push(...page.txs.map((t) => t.txid));
          cursor = page.cursor;
        }
        if (first.txs[0]?.txid !== a.txid) expect(seen).not.toContain(a.txid);
      });

      test('bad limit or cursor -> INVALID_ARGUMENT; an engine failure -> STORAGE_ERROR', async () => {
        expect(await codeOf(store.iterateUnmined({ limit: 0 }))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.iterateUnmined({ limit: 10001 }))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.iterateUnmined({ cursor: 'abc' }))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.iterateUnmined({ cursor: `${'0'.repeat(32)}-0` }))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.iterateUnmined({ cursor: '0'.repeat(32) }))).toBe('INVALID_ARGUMENT');
        plan.arm(1, 'once');
        expect(await codeOf(store.iterateUnmined())).toBe('STORAGE_ERROR');
      });
    });
    describe('counter-conflicting and conflicting children', () => {
      test('the other spenders of the outputs a tx spends; none for the holder itself', async () => {
        const p1 = await root();
        const p2 = await root();
        const first = await spent(makeTx({ inputs: [{ parent: p1, vout: 0 }] }));
        const other = await spent(makeTx({ inputs: [{ parent: p2, vout: 1 }] }));
        const double = await spent(
          makeTx({
            inputs: [
              { parent: p1, vout: 0 },
              { parent: p2, vout: 1 },
              { parent: p2, vout: 0 },
            ],
          }),
          true,
        );
        expect((await store.getCounterConflicting(double.txid)).sort()).toEqual([first.txid, other.txid].sort());
        expect(await store.getCounterConflicting(first.txid)).toEqual([]);
      });

      test('conflicting children: the conflicting txs created on the tx', async () => {
        const p = await root();
        await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }));
        const c1 = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }), true);
        const c2 = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }), true);
        expect((await store.getConflictingChildren(p.txid)).sort()).toEqual([c1.txid, c2.txid].sort());
        expect(await store.getConflictingChildren(c1.txid)).toEqual([]);
      });

      test('a missing tx -> TX_NOT_FOUND; a bad txid -> INVALID_ARGUMENT', async () => {
        const missing = rootTx().txid;
        expect(await codeOf(store.getCounterConflicting(missing))).toBe('TX_NOT_FOUND');
        expect(await codeOf(store.getConflictingChildren(missing))).toBe('TX_NOT_FOUND');
        expect(await codeOf(store.getCounterConflicting('xyz'))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.getConflictingChildren('xyz'))).toBe('INVALID_ARGUMENT');
      });

      test('an engine failure -> STORAGE_ERROR', async () => {
        const p = await root();
        plan.arm(1, 'once');
        expect(await codeOf(store.getCounterConflicting(p.txid))).toBe('STORAGE_ERROR');
        plan.arm(1, 'once');
        expect(await codeOf(store.getConflictingChildren(p.txid))).toBe('STORAGE_ERROR');
      });
    });

    describe('setOnLongestChain', () => {
      test('off: unminedSince = H, blocks kept; on: cleared and the DAH rule runs again', async () => {
        const p = await root(1);
        const tx = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }));
        await store.setMined({ txids: [tx.txid], blockId: 11, blockHeight: 990, subtreeIdx: 1 });
        const before = await store.get(p.txid, ['deleteAtHeight', 'blockIDs']);
        expect(before.deleteAtHeight).toBeDefined();

        await store.setOnLongestChain([p.txid, tx.txid], false);
        const off = await store.get(p.txid, ['unminedSince', 'blockIDs', 'deleteAtHeight']);
        expect(off).toEqual({ txid: p.txid, unminedSince: 1000, blockIDs: [9] });
        expect((await store.get(tx.txid, ['unminedSince', 'blockIDs'])).blockIDs).toEqual([11]);

        await store.setChainTip(1005);
        await store.setOnLongestChain([p.txid], true);
        const on = await store.get(p.txid, ['unminedSince', 'blockIDs', 'deleteAtHeight']);
        expect(on).toEqual({ txid: p.txid, blockIDs: [9], deleteAtHeight: 1005 + BASE_SETTINGS.blockHeightRetention });
      });

      test('a tx in no block stays unmined when marked on the longest chain', async () => {
        const f = rootTx();
        await store.create(f.hex);
        await store.setOnLongestChain([f.txid], true);
        expect((await store.get(f.txid, ['unminedSince'])).unminedSince).toBe(1000);
      });

      test('a missing tx -> TX_NOT_FOUND after the others changed; bad input changes nothing', async () => {
        const p = await root();
        const missing = rootTx().txid;
        expect(await codeOf(store.setOnLongestChain([missing, p.txid], false))).toBe('TX_NOT_FOUND');
        expect((await store.get(p.txid, ['unminedSince'])).unminedSince).toBe(1000);
        const q = await root();
        expect(await codeOf(store.setOnLongestChain([q.txid, 'zz'], false))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.setOnLongestChain([], false))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.setOnLongestChain([q.txid], 'no' as never))).toBe('INVALID_ARGUMENT');
        expect((await store.get(q.txid, ['unminedSince'])).unminedSince).toBeUndefined();
      });

      test('an engine failure -> STORAGE_ERROR; the retry completes', async () => {
        const p = await root();
        plan.arm(2, 'once');
        expect(await codeOf(store.setOnLongestChain([p.txid], false))).toBe('STORAGE_ERROR');
        await store.setOnLongestChain([p.txid], false);
        expect((await store.get(p.txid, ['unminedSince'])).unminedSince).toBe(1000);
      });
    });

    describe('unspend with flagAsLocked', () => {
      test('the freed parent stays locked (LOCKED) until unlocked', async () => {
        const p = await root();
        const tx = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }));
        await store.unspend([spendItem(p, 0, tx.txid, 0)], { flagAsLocked: true });
        expect(await store.getSpend({ txid: p.txid, vout: 0 })).toMatchObject({ status: 'LOCKED' });
        const other = makeTx({ inputs: [{ parent: p, vout: 0 }] });
        expect(await codeOf(store.spend({ tx: other.hex }))).toBe('LOCKED');
        await store.setLocked([p.txid], false);
        await store.spend({ tx: other.hex });
        expect(await holder(p.txid, 0)).toBe(other.txid);
      });

      test('a missing parent -> TX_NOT_FOUND and nothing unspent; a bad flag -> INVALID_ARGUMENT', async () => {
        const p = await root();
        const tx = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }));
        const missing = rootTx(1);
        const items = [spendItem(p, 0, tx.txid, 0), spendItem(missing, 0, tx.txid, 1)];
        expect(await codeOf(store.unspend(items, { flagAsLocked: true }))).toBe('TX_NOT_FOUND');
        expect(await codeOf(store.unspend([items[0]], { flagAsLocked: 'yes' as never }))).toBe('INVALID_ARGUMENT');
        expect(await holder(p.txid, 0)).toBe(tx.txid);
      });

      test('a crash after the lock leaves the output spent and locked; the retry frees it locked', async () => {
        const p = await root();
        const tx = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }));
        plan.arm(3, 'crash');
        expect(await codeOf(store.unspend([spendItem(p, 0, tx.txid, 0)], { flagAsLocked: true }))).toBe(
          'STORAGE_ERROR',
        );
        plan.disarm();
        expect(await holder(p.txid, 0)).toBe(tx.txid);
        await store.unspend([spendItem(p, 0, tx.txid, 0)], { flagAsLocked: true });
        expect(await store.getSpend({ txid: p.txid, vout: 0 })).toMatchObject({ status: 'LOCKED' });
      });
    });

    describeReorgResolution({
      get store() {
        return store;
      },
      get plan() {
        return plan;
      },
      root,
      spent,
      holder,
    });
  });
}
