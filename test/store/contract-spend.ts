/** The store contract (store-contract.ts), part: external transactions, spend and unspend. */
import fc from 'fast-check';
import { SpendFailedError } from '../../lib/domain/errors';
import { GOLDEN_EF_HEX, GOLDEN_FEE, GOLDEN_TXID } from '../fixtures/golden-tx';
import { makeTx, rootTx, spendItem, utxoHashOf } from '../fixtures/txs';
import { type ContractTools, codeOf } from './contract-harness';

export function describeSpendContract({
  withOpen,
  useHarness,
  created,
  minedRoot,
  twoParentSpender,
}: ContractTools): void {
  describe('external transactions', () => {
    test('above maxTxSizeInStore: .tx blob first, record without inputs/outputs; get tx from the blob', async () => {
      await withOpen({ utxoBatchSize: 100, maxTxSizeInStore: 150 }, async (h) => {
        await h.store.setChainTip(1000);
        const parent = await minedRoot(h.store);
        const big = makeTx({ inputs: [{ parent, vout: 0 }], outputs: Array.from({ length: 12 }, () => 10) });
        expect(big.hex.length / 2).toBeGreaterThan(150);
        await expect(h.store.create(big.hex)).resolves.toMatchObject({ external: true, records: 1 });
        expect(await h.blobs.get(big.txid, 'tx')).toEqual(Buffer.from(big.hex, 'hex'));
        const view = await h.store.get(big.txid, ['external', 'inputs', 'outputs', 'tx']);
        expect(view).toMatchObject({ external: true, tx: big.hex });
        expect(view.inputs).toBeUndefined();
        const small = rootTx(1);
        await expect(h.store.create(small.hex)).resolves.toMatchObject({ external: false });
        const golden = await h.store.create(GOLDEN_EF_HEX);
        expect(golden).toMatchObject({ external: true, fee: GOLDEN_FEE });
      });
    });

    test('externalizeAll: every tx external; a tx without inputs as a .outputs blob', async () => {
      await withOpen({ utxoBatchSize: 100, externalizeAll: true }, async (h) => {
        const f = rootTx([500, { satoshis: 0, opReturn: true }, 700]);
        await expect(h.store.create(f.hex)).resolves.toMatchObject({ external: true });
        expect(await h.blobs.exists(f.txid, 'outputs')).toBe(true);
        expect(await h.blobs.exists(f.txid, 'tx')).toBe(false);
        const golden = await h.store.create(GOLDEN_EF_HEX);
        expect(golden.external).toBe(true);
        expect((await h.store.get(GOLDEN_TXID, ['tx'])).tx).toBe(GOLDEN_EF_HEX);
        await h.store.delete(GOLDEN_TXID);
        expect(await h.blobs.exists(GOLDEN_TXID, 'tx')).toBe(false);
      });
    });

    test('a single internal record: golden tx round-trips from the record bins', async () => {
      await withOpen({ utxoBatchSize: 100 }, async (h) => {
        await expect(h.store.create(GOLDEN_EF_HEX)).resolves.toMatchObject({ external: false, records: 1 });
        expect((await h.store.get(GOLDEN_TXID, ['tx'])).tx).toBe(GOLDEN_EF_HEX);
      });
    });
  });

  describe('spend and unspend', () => {
    const h = useHarness();

    test('EF spend: OK per input; idempotent for the same spender; SPENT with the existing spender', async () => {
      const parent = await minedRoot(h().store, 2);
      const a = makeTx({
        inputs: [
          { parent, vout: 0 },
          { parent, vout: 1 },
        ],
      });
      const ok = {
        spends: [
          { txid: parent.txid, vout: 0, status: 'OK' },
          { txid: parent.txid, vout: 1, status: 'OK' },
        ],
      };
      await expect(h().store.spend({ tx: a.hex })).resolves.toEqual(ok);
      await expect(h().store.spend({ tx: a.hex })).resolves.toEqual(ok);
      await expect(h().store.getSpend({ txid: parent.txid, vout: 1 })).resolves.toEqual({
        status: 'SPENT',
        spendingTxid: a.txid,
        vin: 1,
      });
      const b = makeTx({ inputs: [{ parent, vout: 1 }] });
      const err = (await h()
        .store.spend({ tx: b.hex })
        .catch((e) => e)) as SpendFailedError;
      expect(err).toBeInstanceOf(SpendFailedError);
      expect(err).toMatchObject({
        code: 'SPENT',
        details: { txid: parent.txid, vout: 1, spendingTxid: a.txid, vin: 1 },
      });
      expect(err.outcomes).toEqual([
        expect.objectContaining({
          txid: parent.txid,
          vout: 1,
          status: 'ERROR',
          code: 'SPENT',
          spendingTxid: a.txid,
          vin: 1,
        }),
      ]);
    });

    test('explicit spends and their validation', async () => {
      const parent = await minedRoot(h().store, 2);
      const spender = rootTx();
      await expect(h().store.spend({ spends: [spendItem(parent, 1, spender, 3)] })).resolves.toEqual({
        spends: [{ txid: parent.txid, vout: 1, status: 'OK' }],
      });
      await expect(h().store.spend({ spends: [] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(h().store.spend({ spends: [{ ...spendItem(parent, 0, spender), vout: -1 }] })).rejects.toMatchObject(
        {
          code: 'INVALID_ARGUMENT',
          details: { field: 'spends[0].vout' },
        },
      );
      await expect(
        h().store.spend({ spends: [{ ...spendItem(parent, 0, spender), utxoHash: 'ab' }] }),
      ).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(h().store.spend({ tx: rootTx().hex })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      const nonEf = makeTx({ inputs: [{ parent, vout: 0 }] });
      await expect(h().store.spend({ tx: nonEf.tx.toHex() })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      // a spending tx without outputs is refused before anything is spent
      const noOutputs = makeTx({ inputs: [{ parent, vout: 0 }], outputs: 0 });
      await expect(h().store.spend({ tx: noOutputs.hex })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'tx' },
      });
      await expect(h().store.getSpend({ txid: parent.txid, vout: 0 })).resolves.toEqual({ status: 'OK' });
    });

    test('per-item errors: UTXO_HASH_MISMATCH, UTXO_NOT_FOUND, FROZEN', async () => {
      const parent = await minedRoot(h().store, 3);
      const s = rootTx();
      const codes = async (item: ReturnType<typeof spendItem>) => codeOf(h().store.spend({ spends: [item] }));
      expect(await codes({ ...spendItem(parent, 0, s), utxoHash: utxoHashOf(parent, 1) })).toBe('UTXO_HASH_MISMATCH');
      expect(await codes({ ...spendItem(parent, 0, s), vout: 3 })).toBe('UTXO_NOT_FOUND');
      await h().store.freeze([{ txid: parent.txid, vout: 2, utxoHash: utxoHashOf(parent, 2) }]);
      expect(await codes(spendItem(parent, 2, s))).toBe('FROZEN');
    });

    test('missing parent: TX_NOT_FOUND, unless the spending tx itself is stored', async () => {
      const ghost = rootTx();
      const child = makeTx({ inputs: [{ parent: ghost, vout: 0 }] });
      await expect(h().store.spend({ tx: child.hex })).rejects.toMatchObject({
        code: 'TX_NOT_FOUND',
        details: { txid: ghost.txid },
      });
      await h().store.create(child.hex);
      await expect(h().store.spend({ tx: child.hex })).resolves.toEqual({
        spends: [{ txid: ghost.txid, vout: 0, status: 'OK' }],
      });
    });

    test('an output beyond the last record of an existing tx is UTXO_NOT_FOUND, even for a stored spender', async () => {
      const parent = await minedRoot(h().store, 2); // B = 4: vout 5 would live in pagination record 1
      const spender = await created(h().store, rootTx());
      const item = { ...spendItem(parent, 1, spender), vout: 5 };
      expect(await codeOf(h().store.spend({ spends: [item] }))).toBe('UTXO_NOT_FOUND');
      const unknown = { ...item, spendingTxid: rootTx().txid };
      expect(await codeOf(h().store.spend({ spends: [unknown] }))).toBe('UTXO_NOT_FOUND');
    });

    test('all-or-nothing: a failing input rolls back every input this call spent', async () => {
      const p1 = await minedRoot(h().store, 2);
      const p2 = await minedRoot(h().store, 1);
      const other = makeTx({ inputs: [{ parent: p2, vout: 0 }] });
      await h().store.spend({ tx: other.hex });
      const tx = makeTx({
        inputs: [
          { parent: p1, vout: 0 },
          { parent: p1, vout: 1 },
          { parent: p2, vout: 0 },
        ],
      });
      const err = (await h()
        .store.spend({ tx: tx.hex })
        .catch((e) => e)) as SpendFailedError;
      expect(err).toBeInstanceOf(SpendFailedError);
      expect(err.code).toBe('SPENT');
      expect(err.outcomes).toEqual([
        { txid: p1.txid, vout: 0, status: 'ROLLED_BACK' },
        { txid: p1.txid, vout: 1, status: 'ROLLED_BACK' },
        expect.objectContaining({
          txid: p2.txid,
          vout: 0,
          status: 'ERROR',
          code: 'SPENT',
          spendingTxid: other.txid,
          vin: 0,
        }),
      ]);
      await expect(h().store.getSpend({ txid: p1.txid, vout: 0 })).resolves.toEqual({ status: 'OK' });
      await expect(h().store.getSpend({ txid: p1.txid, vout: 1 })).resolves.toEqual({ status: 'OK' });
      expect((await h().store.get(p1.txid, ['spentUtxos'])).spentUtxos).toBe(0);
    });

    test('a retry that fails never rolls back inputs an earlier call of the same spender spent', async () => {
      const { p1, p2, tx } = await twoParentSpender(h().store);
      await h().store.spend({ tx: tx.hex });
      await h().store.setConflicting([p2.txid], true);
      // the same spending tx again (e.g. block validation): p2 now refuses, p1 was not spent by this call
      const err = (await h()
        .store.spend({ tx: tx.hex })
        .catch((e) => e)) as SpendFailedError;
      expect(err).toBeInstanceOf(SpendFailedError);
      expect(err.code).toBe('CONFLICTING');
      await expect(h().store.getSpend({ txid: p1.txid, vout: 0 })).resolves.toEqual({
        status: 'SPENT',
        spendingTxid: tx.txid,
        vin: 0,
      });
      const other = makeTx({ inputs: [{ parent: p1, vout: 0 }] });
      expect(await codeOf(h().store.spend({ tx: other.hex }))).toBe('SPENT');
    });

    test('a failed spend batch is STORAGE_ERROR and leaves nothing spent', async () => {
      const { p1, tx } = await twoParentSpender(h().store);
      h().plan.arm(2, 'once'); // step 1 = tip read, step 2 = the spendMulti batch
      await expect(h().store.spend({ tx: tx.hex })).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
      h().plan.disarm();
      await expect(h().store.getSpend({ txid: p1.txid, vout: 0 })).resolves.toEqual({ status: 'OK' });
    });

    test('a failed spend batch of an already stored spending tx keeps its inputs spent (no rollback)', async () => {
      const { p1, p2, tx } = await twoParentSpender(h().store);
      await h().store.spend({ tx: tx.hex });
      await h().store.create(tx.hex);
      // a replay of the accepted tx whose batch fails must not make its inputs spendable again
      h().plan.arm(2, 'once'); // step 1 = tip read, step 2 = the spendMulti batch
      await expect(h().store.spend({ tx: tx.hex })).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
      h().plan.disarm();
      for (const p of [p1, p2]) {
        await expect(h().store.getSpend({ txid: p.txid, vout: 0 })).resolves.toMatchObject({
          status: 'SPENT',
          spendingTxid: tx.txid,
        });
      }
    });

    test('unspend: clears only the expected spender; TX_NOT_FOUND for a missing tx', async () => {
      const parent = await minedRoot(h().store, 1);
      const a = makeTx({ inputs: [{ parent, vout: 0 }] });
      await h().store.spend({ tx: a.hex });
      await h().store.unspend([spendItem(parent, 0, rootTx())]);
      await expect(h().store.getSpend({ txid: parent.txid, vout: 0 })).resolves.toMatchObject({ status: 'SPENT' });
      await h().store.unspend([spendItem(parent, 0, a)]);
      await expect(h().store.getSpend({ txid: parent.txid, vout: 0 })).resolves.toEqual({ status: 'OK' });
      await expect(h().store.unspend([spendItem(rootTx(), 0, a)])).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
      await expect(h().store.unspend([])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    test('concurrent spenders of one output: exactly one wins (property over N and order)', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 2, max: 20 }), fc.integer({ min: 0, max: 1_000_000 }), async (n, seed) => {
          const parent = await minedRoot(h().store, 1);
          const spenders = Array.from({ length: n }, () => makeTx({ inputs: [{ parent, vout: 0 }] }));
          const order = spenders.map((_, i) => i).sort((a, b) => ((a * 7919 + seed) % n) - ((b * 7919 + seed) % n));
          const results = await Promise.all(order.map((i) => codeOf(h().store.spend({ tx: spenders[i].hex }))));
          expect(results.filter((r) => r === 'OK')).toHaveLength(1);
          expect(results.filter((r) => r === 'SPENT')).toHaveLength(n - 1);
          const winner = spenders[order[results.indexOf('OK')]];
          await expect(h().store.getSpend({ txid: parent.txid, vout: 0 })).resolves.toEqual({
            status: 'SPENT',
            spendingTxid: winner.txid,
            vin: 0,
          });
        }),
        { numRuns: 8 },
      );
      // and the full 20
      const parent = await minedRoot(h().store, 1);
      const spenders = Array.from({ length: 20 }, () => makeTx({ inputs: [{ parent, vout: 0 }] }));
      const results = await Promise.all(spenders.map((s) => codeOf(h().store.spend({ tx: s.hex }))));
      expect(results.filter((r) => r === 'OK')).toHaveLength(1);
    });
  });
}
