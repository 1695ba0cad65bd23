/** The reorg contract (reorg-contract.ts), part: verifySpenders after a split brain, and processConflicting. */
import fc from 'fast-check';
import { makeTx, rootTx, spendItem, type Fixture } from '../fixtures/txs';
import type { FaultPlan } from './doubles';
import { codeOf } from './contract-harness';
import type { UtxoStore } from '../../lib/store/types';

type Store = UtxoStore & { moduleName: string };

/** What the reorg contract's parts share: its store (opened in beforeAll), fault plan and fixtures. */
export interface ReorgTools {
  readonly store: Store;
  readonly plan: FaultPlan;
  root(outputs?: number): Promise<Fixture>;
  spent(f: Fixture, conflicting?: boolean): Promise<Fixture>;
  holder(txid: string, vout: number): Promise<string | undefined>;
}

export function describeReorgResolution(r: ReorgTools): void {
  const { root, spent, holder } = r;
  describe('verifySpenders (after a split brain)', () => {
    /**
     * What a healed partition leaves: A's spend of p:0 was acknowledged and A stored, then the merge kept the
     * other side's version of p's record, where B spent p:0 (simulated: A's spend undone, B's applied).
     */
    async function splitBrain() {
      const p = await root(2);
      const a = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: [1000, 1000] }));
      const child = await spent(makeTx({ inputs: [{ parent: a, vout: 1 }], outputs: [100] }));
      await r.store.unspend([spendItem(p, 0, a)]);
      const b = makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: [999] });
      await r.store.spend({ tx: b.hex });
      await r.store.create(b.hex);
      const clean = await spent(makeTx({ inputs: [{ parent: p, vout: 1 }], outputs: [1000] }));
      return { p, a, b, child, clean };
    }

    test('finds the stored tx whose acknowledged spend did not stand; marks it and its descendants conflicting', async () => {
      const { p, a, b, child, clean } = await splitBrain();
      const report = await r.store.verifySpenders([a.txid, b.txid, child.txid, clean.txid]);
      expect(report.checked).toBe(4);
      expect(report.lost).toEqual([
        { txid: p.txid, vout: 0, spendingTxid: a.txid, vin: 0, recorded: b.txid, state: 'spent-by-other' },
      ]);
      expect([...report.markedConflicting].sort()).toEqual([a.txid, child.txid].sort());
      for (const t of [a, child]) expect((await r.store.get(t.txid, ['conflicting'])).conflicting).toBe(true);
      for (const t of [b, clean]) expect((await r.store.get(t.txid, ['conflicting'])).conflicting).toBe(false);
      expect(await holder(p.txid, 0)).toBe(b.txid);

      // again: the loser is conflicting now and is skipped; nothing new is marked
      expect(await r.store.verifySpenders([a.txid, b.txid])).toEqual({ checked: 2, lost: [], markedConflicting: [] });
    });

    test('repair false only reports; an unspent input is reported, not marked; unknown txids are skipped', async () => {
      const { a } = await splitBrain();
      const report = await r.store.verifySpenders([a.txid, rootTx().txid], { repair: false });
      expect(report.checked).toBe(1);
      expect(report.lost.map((l) => l.spendingTxid)).toEqual([a.txid]);
      expect(report.markedConflicting).toEqual([]);
      expect((await r.store.get(a.txid, ['conflicting'])).conflicting).toBe(false);

      const q = await root(1);
      const lonely = makeTx({ inputs: [{ parent: q, vout: 0 }], outputs: [10] });
      await r.store.create(lonely.hex); // stored, its spend never applied
      const r2 = await r.store.verifySpenders([lonely.txid]);
      expect(r2.lost).toEqual([{ txid: q.txid, vout: 0, spendingTxid: lonely.txid, vin: 0, state: 'unspent' }]);
      expect(r2.markedConflicting).toEqual([]);
    });

    test('bad input names the field', async () => {
      await expect(r.store.verifySpenders('nope' as unknown as string[])).rejects.toMatchObject({
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
          inputs: [p1, p2].map((parent) => ({ parent, vout: 0 })),
          // more outputs than B: an external tx (its inputs in the blob) with a pagination record
          outputs: [1000, 1000, 1000, 1000, 1000],
        }),
      );
      expect((await r.store.get(loser.txid, ['external'])).external).toBe(true);
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
      const result = await r.store.processConflicting([winner.txid]);
      expect(result.losingTxids).toEqual([loser.txid]);
      expect([...result.markedConflicting].sort()).toEqual([loser.txid, child.txid, grandchild.txid].sort());
      expect(await holder(p1.txid, 0)).toBe(winner.txid);
      expect(await holder(p3.txid, 1)).toBe(winner.txid);
      expect(await r.store.getSpend({ txid: p2.txid, vout: 0 })).toEqual({ status: 'OK' });
      expect(await holder(loser.txid, 4)).toBe(child.txid);
      for (const t of [loser, child, grandchild])
        expect((await r.store.get(t.txid, ['conflicting'])).conflicting).toBe(true);
      expect(await r.store.get(winner.txid, ['conflicting'])).toEqual({ txid: winner.txid, conflicting: false });
      for (const p of [p1, p2, p3]) expect((await r.store.get(p.txid, ['locked'])).locked).toBe(false);

      // the same call again: the same answer, nothing changes
      expect(await r.store.processConflicting([winner.txid])).toEqual(result);
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
      const result = await r.store.processConflicting(winners.map((w) => w.txid));
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
        for (let k = 0; k < children; k++) await spent(makeTx({ inputs: [{ parent: loser, vout: k }], outputs: [10] }));
        const winner = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }], outputs: [900] }), true);
        r.plan.arm(1_000_000);
        await r.store.processConflicting([winner.txid]);
        const n = r.plan.log.length;
        r.plan.disarm();
        return n;
      };
      // both losers are external with pagination records (more outputs than B): 5 children or 16, same calls
      expect(await calls(16)).toBe(await calls(5));
    });

    test('a parent locked before the operation stays locked', async () => {
      const p1 = await root();
      const loser = await spent(makeTx({ inputs: [{ parent: p1, vout: 0 }] }));
      const winner = await spent(makeTx({ inputs: [{ parent: p1, vout: 0 }] }), true);
      await r.store.setLocked([p1.txid], true);
      await r.store.processConflicting([winner.txid]);
      expect((await r.store.get(p1.txid, ['locked'])).locked).toBe(true);
      expect(await holder(p1.txid, 0)).toBe(winner.txid);
      expect((await r.store.get(loser.txid, ['conflicting'])).conflicting).toBe(true);
    });

    test('errors: missing winner, winner not conflicting, frozen contested output, bad input', async () => {
      expect(await codeOf(r.store.processConflicting([rootTx().txid]))).toBe('TX_NOT_FOUND');
      const p = await root();
      const first = await spent(makeTx({ inputs: [{ parent: p, vout: 0 }] }));
      expect(await codeOf(r.store.processConflicting([first.txid]))).toBe('INVALID_ARGUMENT');
      expect(await codeOf(r.store.processConflicting([]))).toBe('INVALID_ARGUMENT');
      expect(await codeOf(r.store.processConflicting(['nope']))).toBe('INVALID_ARGUMENT');
      const q = await root();
      const winner = await spent(makeTx({ inputs: [{ parent: q, vout: 0 }] }), true);
      await r.store.freeze([{ txid: q.txid, vout: 0, utxoHash: spendItem(q, 0, winner.txid, 0).utxoHash }]);
      expect(await codeOf(r.store.processConflicting([winner.txid]))).toBe('FROZEN');
      expect((await r.store.get(winner.txid, ['conflicting'])).conflicting).toBe(true);
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
        Promise.all([...parents, bystander].map((p) => r.store.get(p.txid, ['utxos', 'locked', 'conflicting'])));
      const before = await snapshot();

      // a crashed run, third-party spends while it is half done, then the same call again
      r.plan.arm(c.crashAt, 'crash');
      const firstRun = await codeOf(r.store.processConflicting([winner.txid]));
      r.plan.disarm();
      // an injected crash surfaces as a retryable storage error, never as a state error
      expect(['OK', 'STORAGE_ERROR']).toContain(firstRun);
      if (c.thirdParty) {
        for (const out of [...contested, ...loserOnly]) {
          const thief = makeTx({ inputs: [out] });
          await r.store.create(thief.hex).catch(() => undefined);
          // even a spend that ignores locks cannot take a contested output
          const isContested = contested.includes(out as never);
          const code = await codeOf(r.store.spend({ tx: thief.hex }, { ignoreLocked: isContested }));
          // a contested output is never free; a loser-only output is free only once the winner holds its inputs
          if (isContested) expect(code).not.toBe('OK');
          else if (code === 'OK') {
            expect((await r.store.get(winner.txid, ['conflicting'])).conflicting).toBe(false);
          }
        }
      }
      const result = await r.store.processConflicting([winner.txid]);

      expect([...result.losingTxids].sort()).toEqual(losers.map((l) => l.txid).sort());
      for (const out of winnerIns) expect(await holder(out.parent.txid, out.vout)).toBe(winner.txid);
      for (const t of [...losers, ...descendants]) {
        expect((await r.store.get(t.txid, ['conflicting'])).conflicting).toBe(true);
      }
      expect((await r.store.get(winner.txid, ['conflicting'])).conflicting).toBe(false);
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
}
