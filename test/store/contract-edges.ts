/** The store contract (store-contract.ts), part: two-phase multi-record create, signals and reconciliation, retries and edge cases. */
import fc from 'fast-check';
import { EngineError } from '../../lib/engine/port';
import { UtxoStoreError } from '../../lib/domain/errors';
import { makeTx, rootTx, spendItem, utxoHashOf, type Fixture } from '../fixtures/txs';
import { overriding } from './doubles';
import { type ContractTools, key, codeOf, expectUnlocked } from './contract-harness';

export function describeEdgeContract({ withOpen, useHarness, created, minedRoot, makeDeps }: ContractTools): void {
  describe('two-phase multi-record create', () => {
    const h = useHarness();

    async function spendableCount(f: Fixture): Promise<number> {
      let ok = 0;
      for (let vout = 0; vout < f.outputs; vout++) {
        if ((await h().store.getSpend({ txid: f.txid, vout })).status === 'OK') ok++;
      }
      return ok;
    }

    async function steps(): Promise<string[]> {
      const probe = rootTx(9);
      h().plan.arm(Number.MAX_SAFE_INTEGER);
      await h().store.create(probe.hex);
      const log = [...h().plan.log];
      h().plan.disarm();
      return log;
    }

    test('the lock record: TTL min(30 + 2 x records, 300), released after the create', async () => {
      const f = rootTx(9);
      h().plan.arm(4); // 1 tip, 2 master read, 3 lock; the process dies before the blob write (step 4)
      await expect(h().store.create(f.hex)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
      h().plan.disarm();
      const lock = await h().engine.get(key(f.txid, 0xffffffff));
      expect(lock?.bins).toMatchObject({ lock_type: 'tx_creation', expected_recs: 3, process_id: process.pid });
      expect(lock!.ttl).toBeGreaterThan(0);
      expect(lock!.ttl).toBeLessThanOrEqual(36);
      await expect(h().store.create(f.hex)).rejects.toMatchObject({ code: 'TX_EXISTS' });
      await h().engine.remove(key(f.txid, 0xffffffff)); // the TTL expired
      await expect(h().store.create(f.hex)).resolves.toMatchObject({ records: 3 });
      expect(await h().engine.get(key(f.txid, 0xffffffff))).toBeNull();
      expect(await spendableCount(f)).toBe(9);
    });

    test('a crash after any step leaves no spendable output; a retry completes the create', async () => {
      const log = await steps();
      expect(log.length).toBeGreaterThanOrEqual(7);
      h().queue.hold = true; // no reconciler: the retry alone must finish
      for (let n = 1; n <= log.length; n++) {
        const f = rootTx(9);
        h().plan.arm(n);
        await codeOf(h().store.create(f.hex));
        h().plan.disarm();
        const spendable = await spendableCount(f);
        if (spendable === 9) continue; // the crash came after the commit marker
        expect({ step: log[n - 1], spendable }).toEqual({ step: log[n - 1], spendable: 0 });
        const attempt = makeTx({
          inputs: [
            { parent: f, vout: 0 },
            { parent: f, vout: 8 },
          ],
        });
        expect(await codeOf(h().store.spend({ tx: attempt.hex }))).not.toBe('OK');
        await h().engine.remove(key(f.txid, 0xffffffff)); // the abandoned lock expires
        expect(await codeOf(h().store.create(f.hex))).toBe('OK');
        expect(await spendableCount(f)).toBe(9);
        await expect(h().store.spend({ tx: attempt.hex })).resolves.toBeDefined();
      }
    });

    test('phase 2 failing: success returned, CREATING signalled, nothing spendable; the reconciler finishes', async () => {
      const log = await steps();
      const phase2 = log.findIndex((s) => s.includes('clearCreating')) + 1;
      const f = rootTx(9);
      h().queue.hold = true;
      h().plan.arm(phase2, 'once');
      await expect(h().store.create(f.hex)).resolves.toMatchObject({ records: 3 });
      h().plan.disarm();
      expect(h().queue.sent).toContainEqual({ txid: f.txid, signal: 'CREATING', height: 1000 });
      expect(await spendableCount(f)).toBe(0);
      await expect(h().store.getSpend({ txid: f.txid, vout: 0 })).resolves.toMatchObject({ status: 'CREATING' });
      for (const s of h().queue.sent) await h().reconciler.handle(s);
      expect(await spendableCount(f)).toBe(9);
    });

    test('pagination records cleared but the master (commit marker) not: a page output alone is not spendable', async () => {
      const log = await steps();
      // the pagination records' batch, then the master's (the last clearCreating step)
      const clears = log.flatMap((s, i) => (s.includes('clearCreating') ? [i + 1] : []));
      expect(clears.length).toBe(2);
      const masterClear = clears[1];
      const f = rootTx(9);
      h().queue.hold = true;
      h().plan.arm(masterClear);
      await h().store.create(f.hex);
      h().plan.disarm();
      expect((await h().store.get(f.txid, ['creating'])).creating).toBe(true);
      await expect(h().store.getSpend({ txid: f.txid, vout: 8 })).resolves.toMatchObject({ status: 'CREATING' });
      const attempt = makeTx({ inputs: [{ parent: f, vout: 8 }] });
      expect(await codeOf(h().store.spend({ tx: attempt.hex }))).toBe('CREATING');
      await expect(h().store.getSpend({ txid: f.txid, vout: 8 })).resolves.toMatchObject({ status: 'CREATING' });
      for (const s of h().queue.sent) await h().reconciler.handle(s);
      await expect(h().store.spend({ tx: attempt.hex })).resolves.toBeDefined();
    });

    test('records all written but flags left: setMined completes it', async () => {
      const log = await steps();
      const phase2 = log.findIndex((s) => s.includes('clearCreating')) + 1;
      const f = rootTx(9);
      h().queue.hold = true;
      h().plan.arm(phase2);
      await h().store.create(f.hex);
      h().plan.disarm();
      expect(await spendableCount(f)).toBe(0);
      await h().store.setMined({ txids: [f.txid], blockId: 1, blockHeight: 1001, subtreeIdx: 0 });
      expect(await spendableCount(f)).toBe(9);
      expect((await h().store.get(f.txid, ['creating'])).creating).toBeUndefined();
    });

    test('a retry of a completed multi-record create is TX_EXISTS', async () => {
      const f = await created(h().store, rootTx(5));
      await expect(h().store.create(f.hex)).rejects.toMatchObject({ code: 'TX_EXISTS' });
    });
  });

  describe('signals and reconciliation', () => {
    const h = useHarness();

    async function records(f: Fixture, pages: number) {
      const out = [];
      for (let n = 0; n <= pages; n++) out.push((await h().engine.get(n === 0 ? key(f.txid) : key(f.txid, n)))?.bins);
      return out;
    }

    test('fully spent pagination records: ALLSPENT with the master txid; reconciled DAH on master, pages and blob', async () => {
      const f = await minedRoot(h().store, 8); // records 0 and 1
      const page1 = makeTx({ inputs: [4, 5, 6, 7].map((vout) => ({ parent: f, vout })) });
      await h().store.spend({ tx: page1.hex });
      expect(h().queue.sent).toContainEqual({ txid: f.txid, signal: 'ALLSPENT', height: 1001 });
      expect((await records(f, 1))[0]?.spentExtraRecs).toBe(1);
      const master = makeTx({ inputs: [0, 1, 2, 3].map((vout) => ({ parent: f, vout })) });
      await h().store.spend({ tx: master.hex });
      const [m, p] = await records(f, 1);
      expect(m?.deleteAtHeight).toBe(1011);
      expect(p?.deleteAtHeight).toBe(1011);
      expect(await h().blobs.getDeleteAtHeight(f.txid, 'outputs')).toBe(1011);
      await h().store.unspend([spendItem(f, 5, page1, 1)]);
      expect(h().queue.sent.map((s) => s.signal)).toEqual(expect.arrayContaining(['NOTALLSPENT']));
      const [m2, p2] = await records(f, 1);
      expect(m2?.spentExtraRecs).toBe(0);
      expect(m2?.deleteAtHeight).toBeUndefined();
      expect(p2?.deleteAtHeight).toBeUndefined();
      expect(await h().blobs.getDeleteAtHeight(f.txid, 'outputs')).toBeNull();
    });

    test('a signal for a missing master is a no-op', async () => {
      await expect(
        h().reconciler.handle({ txid: rootTx().txid, signal: 'DAHSET', height: 5 }),
      ).resolves.toBeUndefined();
    });

    test('duplicated and reordered signals converge to the same records (property)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.subarray([4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3], { minLength: 1 }),
          fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
          async (vouts, picks) => {
            const f = await minedRoot(h().store, 12);
            h().queue.hold = true;
            h().queue.clear();
            const spender = makeTx({ inputs: vouts.map((vout) => ({ parent: f, vout })) });
            await h().store.spend({ tx: spender.hex });
            const sent = [...h().queue.sent];
            const shuffled = picks.map((p) => sent[p % Math.max(sent.length, 1)]).filter(Boolean);
            for (const s of [...shuffled, ...sent.slice().reverse()]) await h().reconciler.handle(s);
            const [m, p1, p2] = await records(f, 2);
            const pageSpent = [p1, p2].filter((p) => p?.spentUtxos === 4).length;
            expect(m?.spentExtraRecs).toBe(pageSpent);
            const all = vouts.length === 12;
            expect(m?.deleteAtHeight).toBe(all ? 1011 : undefined);
            expect(p1?.deleteAtHeight).toBe(m?.deleteAtHeight);
            expect(p2?.deleteAtHeight).toBe(m?.deleteAtHeight);
            expect(await h().blobs.getDeleteAtHeight(f.txid, 'outputs')).toBe(all ? 1011 : null);
          },
        ),
        { numRuns: 12 },
      );
    });
  });

  describe('retries and edge cases', () => {
    const h = useHarness();

    test('a create retried at another height after a crash that left only the .outputs blob completes', async () => {
      const f = rootTx(9); // records 0..2, external .outputs blob
      h().queue.hold = true;
      h().plan.arm(5); // 1 tip, 2 master read, 3 lock, 4 blob put; the process dies at the first record
      await expect(h().store.create(f.hex)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
      h().plan.disarm();
      expect(await h().blobs.exists(f.txid, 'outputs')).toBe(true);
      await h().engine.remove(key(f.txid, 0xffffffff)); // the abandoned lock expires
      await h().store.setChainTip(1001); // a block later
      await expect(h().store.create(f.hex)).resolves.toMatchObject({ records: 3 });
      await expect(h().store.getSpend({ txid: f.txid, vout: 8 })).resolves.toEqual({ status: 'OK' });
    });

    test('setMined with unsetMined clears `locked` on the pagination records as on the master', async () => {
      const f = await created(h().store, rootTx(9), { locked: true });
      await h().store.setMined({ txids: [f.txid], blockId: 7, blockHeight: 1001, subtreeIdx: 0, unsetMined: true });
      await expectUnlocked(h().store, f, 0);
    });

    test('a failed spend rolls back a record whose batch answer was lost (in doubt) when the spender is not stored', async () => {
      const t = await makeDeps();
      const inner = t.engine;
      let loseFirstAnswer = false;
      t.engine = overriding(inner, {
        async batchApply(items) {
          const results = await inner.batchApply(items);
          if (loseFirstAnswer && items[0]?.fn === 'spendMulti') {
            loseFirstAnswer = false; // applied, but the answer for this record was lost (timeout)
            results[0] = { ok: false, error: new EngineError('TIMEOUT', 'injected: answer lost') };
          }
          return results;
        },
      });
      await withOpen(
        {},
        async (e) => {
          await e.store.setChainTip(1000);
          const a = await minedRoot(e.store);
          const b = await minedRoot(e.store);
          await e.store.freeze([{ txid: b.txid, vout: 0, utxoHash: utxoHashOf(b, 0) }]);
          const spender = makeTx({
            inputs: [
              { parent: a, vout: 0 },
              { parent: b, vout: 0 },
            ],
          });
          loseFirstAnswer = true;
          expect(await codeOf(e.store.spend({ tx: spender.hex }))).not.toBe('OK');
          await expect(e.store.getSpend({ txid: a.txid, vout: 0 })).resolves.toEqual({ status: 'OK' });
        },
        t,
      );
    });

    test('unspend and reassign of an output beyond the last record of an existing tx: UTXO_NOT_FOUND', async () => {
      const f = await minedRoot(h().store, 6); // records 0 and 1; vout 8 would be in record 2
      const u8 = { txid: f.txid, vout: 8, utxoHash: utxoHashOf(f, 0) };
      await expect(h().store.unspend([{ ...u8, spendingTxid: rootTx().txid, vin: 0 }])).rejects.toMatchObject({
        code: 'UTXO_NOT_FOUND',
      });
      await expect(h().store.reassign({ ...u8, newUtxoHash: utxoHashOf(f, 1) })).rejects.toMatchObject({
        code: 'UTXO_NOT_FOUND',
      });
      const ghost = rootTx();
      await expect(
        h().store.reassign({ txid: ghost.txid, vout: 8, utxoHash: utxoHashOf(f, 0), newUtxoHash: utxoHashOf(f, 1) }),
      ).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
    });

    test('a spend or unspend batch applied but answered with a failure still has the pages reconciled', async () => {
      const t = await makeDeps();
      const inner = t.engine;
      let loseAnswer = false;
      t.engine = overriding(inner, {
        async batchApply(items) {
          const results = await inner.batchApply(items);
          if (loseAnswer && (items[0]?.fn === 'spendMulti' || items[0]?.fn === 'unspend')) {
            loseAnswer = false; // every record written, the answer lost
            throw new EngineError('TIMEOUT', 'injected: batch answer lost');
          }
          return results;
        },
      });
      await withOpen(
        {},
        async (e) => {
          await e.store.setChainTip(1000);
          const f = await minedRoot(e.store, 8); // records 0 and 1
          const spender = makeTx({ inputs: [0, 1, 2, 3, 4, 5, 6, 7].map((vout) => ({ parent: f, vout })) });
          await e.store.create(spender.hex); // the spending tx is stored: its inputs are kept
          loseAnswer = true;
          expect(await codeOf(e.store.spend({ tx: spender.hex }))).toBe('STORAGE_ERROR');
          await expect(e.store.spend({ tx: spender.hex })).resolves.toBeDefined(); // the retry: nothing to write
          const view = await e.store.get(f.txid, ['spentExtraRecs', 'deleteAtHeight']);
          expect(view).toEqual({ txid: f.txid, spentExtraRecs: 1, deleteAtHeight: 1011 });
          expect((await e.engine.get(key(f.txid, 1)))?.bins.deleteAtHeight).toBe(1011);
          // the same for an unspend whose answer was lost
          loseAnswer = true;
          const item = { ...spendItem(f, 5, spender, 5) };
          expect(await codeOf(e.store.unspend([item]))).toBe('STORAGE_ERROR');
          await e.store.unspend([item]); // the retry: nothing to clear
          expect(await e.store.get(f.txid, ['spentExtraRecs', 'deleteAtHeight'])).toEqual({
            txid: f.txid,
            spentExtraRecs: 0,
          });
        },
        t,
      );
    });

    test('a spend or unspend whose signals could not be sent: the retry (nothing left to write) sends them', async () => {
      const t = await makeDeps();
      const inner = t.signals;
      let failSends = false;
      t.signals = overriding(inner, {
        async send(signals) {
          if (failSends) throw new Error('injected: queue unavailable');
          return inner.send(signals);
        },
      });
      await withOpen(
        {},
        async (e) => {
          await e.store.setChainTip(1000);
          const f = await minedRoot(e.store, 8); // records 0 and 1
          const spender = makeTx({ inputs: [0, 1, 2, 3, 4, 5, 6, 7].map((vout) => ({ parent: f, vout })) });
          failSends = true;
          expect(await codeOf(e.store.spend({ tx: spender.hex }))).toBe('STORAGE_ERROR');
          failSends = false;
          await expect(e.store.spend({ tx: spender.hex })).resolves.toBeDefined();
          const view = await e.store.get(f.txid, ['spentExtraRecs', 'deleteAtHeight']);
          expect(view).toEqual({ txid: f.txid, spentExtraRecs: 1, deleteAtHeight: 1011 });
          // the same for an unspend: the retry finds the slot cleared already
          failSends = true;
          const item = spendItem(f, 5, spender, 5);
          expect(await codeOf(e.store.unspend([item]))).toBe('STORAGE_ERROR');
          failSends = false;
          await e.store.unspend([item]);
          expect(await e.store.get(f.txid, ['spentExtraRecs', 'deleteAtHeight'])).toEqual({
            txid: f.txid,
            spentExtraRecs: 0,
          });
        },
        t,
      );
    });

    test('get tx of an external tx without inputs never answers other bytes than the tx (an OP_RETURN output has no slot)', async () => {
      await withOpen({ utxoBatchSize: 100, externalizeAll: true }, async (e) => {
        const f = rootTx([500, { satoshis: 0, opReturn: true }, 700]);
        await e.store.create(f.hex);
        const got = await e.store.get(f.txid, ['tx']).then(
          (v) => v.tx,
          (err: UtxoStoreError) => err.code,
        );
        expect([f.hex, 'STORAGE_ERROR']).toContain(got);
        const plain = rootTx([500, 700]);
        await e.store.create(plain.hex);
        expect((await e.store.get(plain.txid, ['tx'])).tx).toBe(plain.hex);
      });
    });

    test('explicit spends whose spending data is the frozen marker are INVALID_ARGUMENT before anything is written', async () => {
      const a = await minedRoot(h().store);
      const b = await minedRoot(h().store);
      const marker = { spendingTxid: 'ff'.repeat(32), vin: 0xffffffff };
      await expect(
        h().store.spend({ spends: [spendItem(a, 0, rootTx()), { ...spendItem(b, 0, rootTx()), ...marker }] }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'spends[1]' } });
      expect(h().queue.sent).toEqual([]);
      expect((await h().store.get(a.txid, ['spentUtxos'])).spentUtxos).toBe(0);
    });

    test('a single-record external create retried at another height after the blob write completes', async () => {
      await withOpen({ utxoBatchSize: 100, externalizeAll: true }, async (e) => {
        await e.store.setChainTip(1000);
        const f = rootTx(2);
        e.plan.arm(3); // 1 tip, 2 blob put; the process dies at the record create
        await expect(e.store.create(f.hex)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
        e.plan.disarm();
        await e.store.setChainTip(1001);
        await expect(e.store.create(f.hex, { blockHeight: 1001 })).resolves.toMatchObject({ external: true });
        await expect(e.store.create(f.hex)).rejects.toMatchObject({ code: 'TX_EXISTS' });
      });
    });
  });
}
