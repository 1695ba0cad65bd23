/** The store contract (store-contract.ts), part: setMined, flags and admin operations. */
import { UNMINED_CURSOR_TTL_SECONDS } from '../../lib/store/unmined-cursor';
import { unminedCursorKey } from '../../lib/domain/keys';
import { makeTx, rootTx, utxoHashOf, spendItem } from '../fixtures/txs';
import { type ContractTools, key, codeOf, expectUnlocked } from './contract-harness';

export function describeAdminContract({ useHarness, created, minedRoot }: ContractTools): void {
  describe('setMined, flags and admin operations', () => {
    const h = useHarness();

    test('setMined clears `locked` on the pagination records too: every output spendable', async () => {
      const f = await created(h().store, rootTx(9), { locked: true });
      await h().store.setMined({ txids: [f.txid], blockId: 7, blockHeight: 1001, subtreeIdx: 0 });
      await expectUnlocked(h().store, f, 8);
    });

    test('setMined: pagination records it could not unlock are STORAGE_ERROR (outputs stay LOCKED); a retry unlocks them', async () => {
      const req = { blockId: 7, blockHeight: 1001, subtreeIdx: 0 };
      // find the step of the pagination-record batch on a twin tx
      const probe = await created(h().store, rootTx(9), { locked: true });
      h().plan.arm(1_000_000, 'once');
      await h().store.setMined({ txids: [probe.txid], ...req });
      const pageBatch = h().plan.log.indexOf('engine.batchApply:clearCreating') + 1;
      h().plan.disarm();
      expect(pageBatch).toBeGreaterThan(0);

      const f = await created(h().store, rootTx(9), { locked: true });
      h().plan.arm(pageBatch, 'once');
      await expect(h().store.setMined({ txids: [f.txid], ...req })).rejects.toMatchObject({
        code: 'STORAGE_ERROR',
        details: { txid: f.txid },
      });
      h().plan.disarm();
      const spender = makeTx({ inputs: [{ parent: f, vout: 8 }] });
      expect(await codeOf(h().store.spend({ tx: spender.hex }))).toBe('LOCKED');
      await h().store.setMined({ txids: [f.txid], ...req });
      await expect(h().store.spend({ tx: spender.hex })).resolves.toEqual({
        spends: [{ txid: f.txid, vout: 8, status: 'OK' }],
      });
    });

    test('setMined: blockIds per txid, idempotent per block, removes unminedSince, raises the tip', async () => {
      const a = await created(h().store, rootTx());
      const b = await created(h().store, rootTx());
      const req = { txids: [a.txid, b.txid], blockId: 5, blockHeight: 1001, subtreeIdx: 3 };
      await expect(h().store.setMined(req)).resolves.toEqual({ blockIds: { [a.txid]: [5], [b.txid]: [5] } });
      await expect(h().store.setMined(req)).resolves.toEqual({ blockIds: { [a.txid]: [5], [b.txid]: [5] } });
      expect(await h().store.getChainTip()).toBe(1001);
      const view = await h().store.get(a.txid);
      expect(view).toMatchObject({ blockIDs: [5], blockHeights: [1001], subtreeIdxs: [3] });
      expect(view.unminedSince).toBeUndefined();
      await h().store.setMined({ ...req, blockId: 6, blockHeight: 1500, onLongestChain: false });
      expect(await h().store.getChainTip()).toBe(1001);
      await expect(h().store.setMined({ ...req, unsetMined: true })).resolves.toEqual({
        blockIds: { [a.txid]: [6], [b.txid]: [6] },
      });
    });

    test('setMined: TX_NOT_FOUND for a missing txid, unless unsetting; validation', async () => {
      const missing = rootTx().txid;
      const req = { txids: [missing], blockId: 5, blockHeight: 1001, subtreeIdx: 0 };
      await expect(h().store.setMined(req)).rejects.toMatchObject({
        code: 'TX_NOT_FOUND',
        details: { txid: missing },
      });
      await expect(h().store.setMined({ ...req, unsetMined: true })).resolves.toEqual({
        blockIds: { [missing]: [] },
      });
      await expect(h().store.setMined({ ...req, txids: [] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(h().store.setMined({ ...req, blockHeight: 1.5 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    });

    test('queryUnmined: unminedSince <= cutoff, masters only, paged', async () => {
      await h().store.setChainTip(5);
      const txs = [rootTx(), rootTx(), rootTx(9)];
      for (const t of txs) await h().store.create(t.hex, { blockHeight: 3 });
      await h().store.create(rootTx().hex, { blockHeight: 4 });
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await h().store.queryUnmined({ cutoff: 3, limit: 2, cursor });
        seen.push(...page.txids);
        cursor = page.cursor;
      } while (cursor);
      expect(seen.sort()).toEqual(txs.map((t) => t.txid).sort());
      await expect(h().store.queryUnmined({ cutoff: -1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(h().store.queryUnmined({ cutoff: 3, cursor: 'not-a-cursor' })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'cursor' },
      });
    });

    test('queryUnmined cursors are short (a URL query parameter, whatever the engine paging state is), tied to their cutoff; unknown ones are refused', async () => {
      await h().store.setChainTip(5);
      for (let i = 0; i < 3; i++) await h().store.create(rootTx().hex, { blockHeight: 3 });
      const first = await h().store.queryUnmined({ cutoff: 3, limit: 1 });
      expect(first.cursor).toMatch(/^[0-9a-f]{32}$/);
      // the same cursor can be read again (a retried request)
      const second = await h().store.queryUnmined({ cutoff: 3, limit: 1, cursor: first.cursor });
      const again = await h().store.queryUnmined({ cutoff: 3, limit: 1, cursor: first.cursor });
      expect(again.txids).toEqual(second.txids);
      // kept for an hour
      const record = await h().engine.get(unminedCursorKey(Buffer.from(first.cursor!, 'hex')));
      expect(record?.ttl).toBeGreaterThan(UNMINED_CURSOR_TTL_SECONDS - 60);
      expect(record?.ttl).toBeLessThanOrEqual(UNMINED_CURSOR_TTL_SECONDS);
      await expect(h().store.queryUnmined({ cutoff: 4, limit: 1, cursor: first.cursor })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'cursor' },
      });
      await expect(h().store.queryUnmined({ cutoff: 3, limit: 1, cursor: 'ab'.repeat(16) })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'cursor' },
      });
    });

    test('setLocked / setConflicting apply to pagination records too; TX_NOT_FOUND', async () => {
      const f = await minedRoot(h().store, 9);
      await h().store.setLocked([f.txid], true);
      for (const vout of [0, 5, 8]) {
        await expect(h().store.getSpend({ txid: f.txid, vout })).resolves.toMatchObject({ status: 'LOCKED' });
      }
      expect((await h().engine.get(key(f.txid, 2)))?.bins.locked).toBe(true);
      await h().store.setLocked([f.txid], false);
      await h().store.setConflicting([f.txid], true);
      expect((await h().engine.get(key(f.txid, 1)))?.bins.conflicting).toBe(true);
      const s = makeTx({ inputs: [{ parent: f, vout: 8 }] });
      await expect(h().store.spend({ tx: s.hex })).rejects.toMatchObject({ code: 'CONFLICTING' });
      await h().store.setConflicting([f.txid], false);
      await expect(h().store.spend({ tx: s.hex })).resolves.toBeDefined();
      await expect(h().store.setLocked([rootTx().txid], true)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
      await expect(h().store.setConflicting([f.txid], 'yes' as never)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    });

    test('freeze / unfreeze: per-UTXO errors', async () => {
      const f = await minedRoot(h().store, 2);
      const u0 = { txid: f.txid, vout: 0, utxoHash: utxoHashOf(f, 0) };
      const u1 = { txid: f.txid, vout: 1, utxoHash: utxoHashOf(f, 1) };
      await h().store.freeze([u0]);
      await expect(h().store.getSpend(u0)).resolves.toEqual({ status: 'FROZEN' });
      const err = await h()
        .store.freeze([u1, u0])
        .catch((e) => e);
      expect(err).toMatchObject({ code: 'ALREADY_FROZEN', details: { txid: f.txid, vout: 0 } });
      expect(err.details.utxos).toEqual([
        { txid: f.txid, vout: 1, status: 'OK' },
        expect.objectContaining({ txid: f.txid, vout: 0, status: 'ERROR', code: 'ALREADY_FROZEN' }),
      ]);
      await h().store.unfreeze([u0, u1]);
      await expect(h().store.unfreeze([u0])).rejects.toMatchObject({ code: 'UTXO_NOT_FROZEN' });
      await h().store.spend({ tx: makeTx({ inputs: [{ parent: f, vout: 0 }] }).hex });
      await expect(h().store.freeze([u0])).rejects.toMatchObject({ code: 'SPENT' });
      await expect(h().store.freeze([{ ...u1, utxoHash: u0.utxoHash }])).rejects.toMatchObject({
        code: 'UTXO_HASH_MISMATCH',
      });
      await expect(h().store.freeze([{ ...u1, vout: 7 }])).rejects.toMatchObject({ code: 'UTXO_NOT_FOUND' });
      await expect(h().store.freeze([{ ...u1, txid: rootTx().txid }])).rejects.toMatchObject({
        code: 'TX_NOT_FOUND',
      });
    });

    test('reassign: requires a frozen UTXO; new hash spendable 1000 blocks later', async () => {
      const f = await minedRoot(h().store, 1);
      const u0 = { txid: f.txid, vout: 0, utxoHash: utxoHashOf(f, 0) };
      const newHash = 'ab'.repeat(32);
      await expect(h().store.reassign({ ...u0, newUtxoHash: newHash })).rejects.toMatchObject({
        code: 'UTXO_NOT_FROZEN',
      });
      await h().store.freeze([u0]);
      await h().store.reassign({ ...u0, newUtxoHash: newHash });
      await expect(h().store.getSpend({ ...u0, utxoHash: newHash })).resolves.toEqual({
        status: 'FROZEN',
        spendableAt: 2000,
      });
      const view = await h().store.get(f.txid, ['reassignments', 'utxos']);
      expect(view.reassignments).toEqual([
        expect.objectContaining({ offset: 0, utxoHash: u0.utxoHash, newUtxoHash: newHash, blockHeight: 1000 }),
      ]);
      const spend = { spends: [{ ...spendItem(f, 0, rootTx()), utxoHash: newHash }] };
      await expect(h().store.spend(spend)).rejects.toMatchObject({ code: 'FROZEN_UNTIL' });
      await expect(h().store.spend(spend, { blockHeight: 1999 })).resolves.toBeDefined();
      await expect(h().store.reassign({ ...u0, newUtxoHash: 'zz' })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    });

    test('preserve: sets preserveUntil and removes DAH; TX_NOT_FOUND', async () => {
      const f = await minedRoot(h().store, 1);
      await h().store.spend({ tx: makeTx({ inputs: [{ parent: f, vout: 0 }] }).hex });
      expect((await h().store.get(f.txid, ['deleteAtHeight'])).deleteAtHeight).toBe(1011);
      await h().store.preserve([f.txid], 5000);
      const view = await h().store.get(f.txid, ['deleteAtHeight', 'preserveUntil']);
      expect(view).toMatchObject({ preserveUntil: 5000 });
      expect(view.deleteAtHeight).toBeUndefined();
      await expect(h().store.preserve([rootTx().txid], 5000)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
    });

    test('getSpend statuses: OK, SPENT, NOT_FOUND for a missing tx or another hash', async () => {
      const f = await minedRoot(h().store, 1);
      await expect(h().store.getSpend({ txid: f.txid, vout: 0, utxoHash: utxoHashOf(f, 0) })).resolves.toEqual({
        status: 'OK',
      });
      await expect(h().store.getSpend({ txid: f.txid, vout: 0, utxoHash: 'cd'.repeat(32) })).resolves.toEqual({
        status: 'NOT_FOUND',
      });
      await expect(h().store.getSpend({ txid: rootTx().txid, vout: 0 })).resolves.toEqual({ status: 'NOT_FOUND' });
      await expect(h().store.getSpend({ txid: f.txid, vout: -2 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    });

    test('delete: master, pagination records and blob; TX_NOT_FOUND afterwards', async () => {
      const f = await created(h().store, rootTx(6));
      await h().store.delete(f.txid);
      expect(await h().engine.get(key(f.txid))).toBeNull();
      expect(await h().engine.get(key(f.txid, 1))).toBeNull();
      expect(await h().blobs.exists(f.txid, 'outputs')).toBe(false);
      await expect(h().store.get(f.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
      await expect(h().store.delete(f.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
    });

    // Community Edition: a removed record returns after a cold restart; a delete leaves tombstones instead, which
    // every operation treats as a missing tx until they expire, and which a new create of the tx replaces
    test('a deleted tx is a tombstone per record: absent for spend, setMined, flags and reads; it can be created again', async () => {
      const f = await minedRoot(h().store, 6);
      await h().store.delete(f.txid);
      for (const k of [key(f.txid), key(f.txid, 1)]) {
        expect(await h().engine.get(k)).toBeNull();
        expect(
          await h()
            .engine.create(k, { probe: 1 })
            .then(() => h().engine.remove(k)),
        ).toBe(true);
      }
      const child = makeTx({ inputs: [{ parent: f, vout: 0 }] });
      await expect(h().store.spend({ tx: child.hex })).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
      await expect(h().store.setLocked([f.txid], true)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
      await expect(
        h().store.setMined({ txids: [f.txid], blockId: 3, blockHeight: 901, subtreeIdx: 0 }),
      ).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
      await expect(h().store.getSpend({ txid: f.txid, vout: 5 })).resolves.toEqual({ status: 'NOT_FOUND' });
      await h().store.create(f.hex);
      await expect(h().store.getSpend({ txid: f.txid, vout: 5 })).resolves.toMatchObject({ status: 'OK' });
      await expect(h().store.spend({ tx: child.hex })).resolves.toMatchObject({ spends: [{ status: 'OK' }] });
    });
  });
}
