/**
 * The reorg part of the store contract, run unchanged on any RecordEngine: counter-conflicting txs and conflicting
 * children, marking txs on or off the longest chain, double-spend resolution (processConflicting, with a property test
 * over random double-spend trees, crash points and third-party spends), unspend with flagAsLocked, and the unmined
 * iteration for block-assembly recovery.
 */
import fc from 'fast-check';
import { Reconciler } from '../../lib/signals/reconciler';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { StoreSettings, UnminedTx, UtxoStore } from '../../lib/store/types';
import { makeTx, rootTx, spendItem, type Fixture } from '../fixtures/txs';
import { FaultPlan, faultyBlobs, faultyEngine } from './doubles';
import { BASE_SETTINGS, codeOf, type MakeDeps } from './store-contract';

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

    describe('verifySpenders (after a split brain)', () => {
      /**
       * What a healed partition leaves: A's spend of p:0 was acknowledged and A stored, then the merge kept the
       * other side's version of p's record, where B spent p:0 (simulated: A's spend undone, B's applied).
       */
      async function splitBrain() {
        const p = await root(2);
        const a = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: [1000, 1000] }));
        const child = await spent(makeTx({ inputs: [{ parent: a, vout: 1 }], outputs: [100] }));
        await store.unspend([spendItem(p, 0, a)]);
        const b = makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: [999] });
        await store.spend({ tx: b.hex });
        await store.create(b.hex);
        const clean = await spent(makeTx({ inputs: [{ parent: p, vout: 1 }], outputs: [1000] }));
        return { p, a, b, child, clean };
      }

      test('finds the stored tx whose acknowledged spend did not stand; marks it and its descendants conflicting', async () => {
        const { p, a, b, child, clean } = await splitBrain();
        const report = await store.verifySpenders([a.txid, b.txid, child.txid, clean.txid]);
        expect(report.checked).toBe(4);
        expect(report.lost).toEqual([
          { txid: p.txid, vout: 0, spendingTxid: a.txid, vin: 0, recorded: b.txid, state: 'spent-by-other' },
        ]);
        expect([...report.markedConflicting].sort()).toEqual([a.txid, child.txid].sort());
        for (const t of [a, child]) expect((await store.get(t.txid, ['conflicting'])).conflicting).toBe(true);
        for (const t of [b, clean]) expect((await store.get(t.txid, ['conflicting'])).conflicting).toBe(false);
        expect(await holder(p.txid, 0)).toBe(b.txid);

        // again: the loser is conflicting now and is skipped; nothing new is marked
        expect(await store.verifySpenders([a.txid, b.txid])).toEqual({ checked: 2, lost: [], markedConflicting: [] });
      });

      test('repair false only reports; an unspent input is reported, not marked; unknown txids are skipped', async () => {
        const { a } = await splitBrain();
        const report = await store.verifySpenders([a.txid, rootTx().txid], { repair: false });
        expect(report.checked).toBe(1);
        expect(report.lost.map((l) => l.spendingTxid)).toEqual([a.txid]);
        expect(report.markedConflicting).toEqual([]);
        expect((await store.get(a.txid, ['conflicting'])).conflicting).toBe(false);

        const q = await root(1);
        const lonely = makeTx({ inputs: [{ parent: q, vout: 0 }], outputs: [10] });
        await store.create(lonely.hex); // stored, its spend never applied
        const r2 = await store.verifySpenders([lonely.txid]);
        expect(r2.lost).toEqual([{ txid: q.txid, vout: 0, spendingTxid: lonely.txid, vin: 0, state: 'unspent' }]);
        expect(r2.markedConflicting).toEqual([]);
      });

      test('bad input names the field', async () => {
        await expect(store.verifySpenders('nope' as unknown as string[])).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          details: { field: 'txids' },
        });
      });
    });

    describe('processConflicting', () => {
      test('the winner takes its inputs; loser and descendants conflicting; the loser-only input freed', async () => {
        const p1 = await root();
        const p2 = await root();
        const p3 = await root();
        const loser = await spent(
          makeTx({
            inputs: [
              { parent: p1, vout: 0 },
              { parent: p2, vout: 0 },
            ],
            // more outputs than B: an external tx (its inputs in the blob) with a pagination record
            outputs: [1000, 1000, 1000, 1000, 1000],
          }),
        );
        expect((await store.get(loser.txid, ['external'])).external).toBe(true);
        const child = await spent(makeTx({ inputs: [{ parent: loser, vout: 4 }], outputs: [100] }));
        const grandchild = await spent(makeTx({ inputs: [{ parent: child, vout: 0 }], outputs: [10] }));
        const winner = await spent(
          makeTx({
            inputs: [
              { parent: p1, vout: 0 },
              { parent: p3, vout: 1 },
            ],
            outputs: [10, 10, 10, 10, 10],
          }),
          true,
        );
        const result = await store.processConflicting([winner.txid]);
        expect(result.losingTxids).toEqual([loser.txid]);
        expect([...result.markedConflicting].sort()).toEqual([loser.txid, child.txid, grandchild.txid].sort());
        expect(await holder(p1.txid, 0)).toBe(winner.txid);
        expect(await holder(p3.txid, 1)).toBe(winner.txid);
        expect(await store.getSpend({ txid: p2.txid, vout: 0 })).toEqual({ status: 'OK' });
        expect(await holder(loser.txid, 4)).toBe(child.txid);
        for (const t of [loser, child, grandchild])
          expect((await store.get(t.txid, ['conflicting'])).conflicting).toBe(true);
        expect(await store.get(winner.txid, ['conflicting'])).toEqual({ txid: winner.txid, conflicting: false });
        for (const p of [p1, p2, p3]) expect((await store.get(p.txid, ['locked'])).locked).toBe(false);

        // the same call again: the same answer, nothing changes
        expect(await store.processConflicting([winner.txid])).toEqual(result);
      });

      test('several winners in one call, each against its own loser', async () => {
        const p = await root(3);
        const losers = [
          await spent(makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: [1000] })),
          await spent(makeTx({ inputs: [{ parent: p, vout: 1 }], outputs: [1000] })),
        ];
        const winners = [
          await spent(makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: [900] }), true),
          await spent(
            makeTx({
              inputs: [
                { parent: p, vout: 1 },
                { parent: p, vout: 2 },
              ],
              outputs: [900],
            }),
            true,
          ),
        ];
        const result = await store.processConflicting(winners.map((w) => w.txid));
        expect([...result.losingTxids].sort()).toEqual(losers.map((l) => l.txid).sort());
        expect(await holder(p.txid, 0)).toBe(winners[0].txid);
        expect(await holder(p.txid, 1)).toBe(winners[1].txid);
        expect(await holder(p.txid, 2)).toBe(winners[1].txid);
      });

      test('engine round trips grow with the depth of the tree, not with its size', async () => {
        const calls = async (children: number): Promise<number> => {
          const p = await root(1);
          const loser = await spent(
            makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: Array.from({ length: children }, () => 100) }),
          );
          for (let k = 0; k < children; k++)
            await spent(makeTx({ inputs: [{ parent: loser, vout: k }], outputs: [10] }));
          const winner = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: [900] }), true);
          plan.arm(1_000_000);
          await store.processConflicting([winner.txid]);
          const n = plan.log.length;
          plan.disarm();
          return n;
        };
        // both losers are external with pagination records (more outputs than B): 5 children or 16, same calls
        expect(await calls(16)).toBe(await calls(5));
      });

      test('a parent locked before the operation stays locked', async () => {
        const p1 = await root();
        const loser = await spent(makeTx({ inputs: [{ parent: p1, vout: 0 }] }));
        const winner = await spent(makeTx({ inputs: [{ parent: p1, vout: 0 }] }), true);
        await store.setLocked([p1.txid], true);
        await store.processConflicting([winner.txid]);
        expect((await store.get(p1.txid, ['locked'])).locked).toBe(true);
        expect(await holder(p1.txid, 0)).toBe(winner.txid);
        expect((await store.get(loser.txid, ['conflicting'])).conflicting).toBe(true);
      });

      test('errors: missing winner, winner not conflicting, frozen contested output, bad input', async () => {
        expect(await codeOf(store.processConflicting([rootTx().txid]))).toBe('TX_NOT_FOUND');
        const p = await root();
        const first = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }));
        expect(await codeOf(store.processConflicting([first.txid]))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.processConflicting([]))).toBe('INVALID_ARGUMENT');
        expect(await codeOf(store.processConflicting(['nope']))).toBe('INVALID_ARGUMENT');
        const q = await root();
        const winner = await spent(makeTx({ inputs: [{ parent: q, vout: 0 }] }), true);
        await store.freeze([{ txid: q.txid, vout: 0, utxoHash: spendItem(q, 0, winner.txid, 0).utxoHash }]);
        expect(await codeOf(store.processConflicting([winner.txid]))).toBe('FROZEN');
        expect((await store.get(winner.txid, ['conflicting'])).conflicting).toBe(true);
      });

      test('property: random double-spend trees, crash points and third-party spends', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.record({
              winnerInputs: fc.integer({ min: 1, max: 3 }),
              contested: fc.integer({ min: 1, max: 3 }),
              loserExtra: fc.integer({ min: 0, max: 2 }),
              depth: fc.integer({ min: 0, max: 3 }),
              fanOut: fc.integer({ min: 1, max: 2 }),
              twoLosers: fc.boolean(),
              crashAt: fc.integer({ min: 1, max: 28 }),
              thirdParty: fc.boolean(),
            }),
            async (c) => {
              await runScenario(c);
            },
          ),
          {
            numRuns: 25,
            // a crash after the parents were released: the freed output may be taken before the retry
            examples: [
              [
                {
                  winnerInputs: 1,
                  contested: 1,
                  loserExtra: 1,
                  depth: 3,
                  fanOut: 1,
                  twoLosers: false,
                  crashAt: 25,
                  thirdParty: true,
                },
              ],
            ],
          },
        );
      });

      /** n outputs of 100,000 sat at level 0 (the losers), tenfold less per level below */
      const sats = (n: number, level: number) => Array.from({ length: n }, () => 100_000 / 10 ** level);

      async function runScenario(c: {
        winnerInputs: number;
        contested: number;
        loserExtra: number;
        depth: number;
        fanOut: number;
        twoLosers: boolean;
        crashAt: number;
        thirdParty: boolean;
      }): Promise<void> {
        // shared parents: the winner's inputs come from two parents with several outputs each
        const parents = [await root(6), await root(6)];
        const winnerIns = Array.from({ length: Math.max(c.winnerInputs, c.contested) }, (_, i) => ({
          parent: parents[i % 2],
          vout: Math.floor(i / 2) * 4,
        }));
        const contested = winnerIns.slice(0, c.contested);
        // the loser(s): the contested outputs, plus outputs only they spend (other outputs of the shared parents)
        const loserSpecs =
          c.twoLosers && contested.length > 1 ? [contested.slice(0, 1), contested.slice(1)] : [contested];
        const losers: Fixture[] = [];
        const loserOnly: { parent: Fixture; vout: number }[] = [];
        for (const [n, ins] of loserSpecs.entries()) {
          const extra = Array.from({ length: n === 0 ? c.loserExtra : 0 }, (_, i) => ({
            parent: parents[i % 2],
            vout: 5,
          }));
          const own = extra.slice(0, 2).filter((x, i, all) => all.findIndex((y) => y.parent === x.parent) === i);
          loserOnly.push(...own);
          losers.push(await spent(makeTx({ inputs: [...ins, ...own], outputs: sats(c.fanOut + 1, 0) })));
        }
        // descendants several levels deep
        const descendants: Fixture[] = [];
        let level = losers;
        for (let d = 0; d < c.depth; d++) {
          const next: Fixture[] = [];
          for (const tx of level) {
            for (let k = 0; k < c.fanOut; k++) {
              next.push(await spent(makeTx({ inputs: [{ parent: tx, vout: k }], outputs: sats(c.fanOut + 1, d + 1) })));
            }
          }
          descendants.push(...next);
          level = next;
        }
        const winner = await spent(makeTx({ inputs: winnerIns }), true);
        const bystander = await spent(makeTx({ inputs: [{ parent: parents[0], vout: 2 }] }));
        const snapshot = async () =>
          Promise.all([...parents, bystander].map((p) => store.get(p.txid, ['utxos', 'locked', 'conflicting'])));
        const before = await snapshot();

        // a crashed run, third-party spends while it is half done, then the same call again
        plan.arm(c.crashAt, 'crash');
        const firstRun = await codeOf(store.processConflicting([winner.txid]));
        plan.disarm();
        // an injected crash surfaces as a retryable storage error, never as a state error
        expect(['OK', 'STORAGE_ERROR']).toContain(firstRun);
        if (c.thirdParty) {
          for (const out of [...contested, ...loserOnly]) {
            const thief = makeTx({ inputs: [out] });
            await store.create(thief.hex).catch(() => undefined);
            // even a spend that ignores locks cannot take a contested output
            const isContested = contested.includes(out as never);
            const code = await codeOf(store.spend({ tx: thief.hex }, { ignoreLocked: isContested }));
            // a contested output is never free; a loser-only output is free only once the winner holds its inputs
            if (isContested) expect(code).not.toBe('OK');
            else if (code === 'OK') {
              expect((await store.get(winner.txid, ['conflicting'])).conflicting).toBe(false);
            }
          }
        }
        const result = await store.processConflicting([winner.txid]);

        expect([...result.losingTxids].sort()).toEqual(losers.map((l) => l.txid).sort());
        for (const out of winnerIns) expect(await holder(out.parent.txid, out.vout)).toBe(winner.txid);
        for (const t of [...losers, ...descendants]) {
          expect((await store.get(t.txid, ['conflicting'])).conflicting).toBe(true);
        }
        expect((await store.get(winner.txid, ['conflicting'])).conflicting).toBe(false);
        // nothing else changed: every other output of the parents, their flags, the bystander
        const after = await snapshot();
        const touched = new Set([...winnerIns, ...loserOnly].map((o) => `${o.parent.txid}:${o.vout}`));
        after.forEach((view, i) => {
          expect(view.locked).toBe(before[i].locked);
          expect(view.conflicting).toBe(before[i].conflicting);
          (view.utxos as unknown[]).forEach((u, vout) => {
            const id = `${view.txid}:${vout}`;
            if (!touched.has(id)) expect(u).toEqual((before[i].utxos as unknown[])[vout]);
          });
        });
        for (const out of loserOnly) {
          if (winnerIns.some((w) => w.parent === out.parent && w.vout === out.vout)) continue;
          const h = await holder(out.parent.txid, out.vout);
          // freed, or taken by a third party once the first run had finished
          expect(h === undefined || !losers.some((l) => l.txid === h)).toBe(true);
        }
      }
    });
  });
}
