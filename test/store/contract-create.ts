/** The store contract (store-contract.ts), part: the chain tip, start-up and health, create and get. */
import { SpendFailedError } from '../../lib/domain/errors';
import { createUtxoStore } from '../../lib/store/utxo-store';
import { GOLDEN_CREATED, GOLDEN_EF_HEX, GOLDEN_TXID, GOLDEN_UTXO_HASHES } from '../fixtures/golden-tx';
import { coinbaseTx, makeTx, rootTx, utxoHashOf } from '../fixtures/txs';
import { overriding } from './doubles';
import { type ContractTools, NOW, key } from './contract-harness';

export function describeCreateContract({ useHarness, created, minedRoot, twoParentSpender }: ContractTools): void {
  describe('bounded chain tip (maxTipAdvance = 5)', () => {
    const h = useHarness({ maxTipAdvance: 5 });

    test('moves forward by at most 5 per call; back or further is INVALID_ARGUMENT naming height, H unchanged', async () => {
      await h().store.setChainTip(1000, { force: true });
      await expect(h().store.setChainTip(1000)).resolves.toBe(1000);
      await expect(h().store.setChainTip(1005)).resolves.toBe(1005);
      for (const bad of [1011, 1004, 0]) {
        await expect(h().store.setChainTip(bad)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          details: { field: 'height', current: 1005, maxAdvance: 5 },
        });
      }
      await expect(h().store.getChainTip()).resolves.toBe(1005);
    });

    test('setMined on the longest chain raises H by at most 5: a block further up is INVALID_ARGUMENT naming blockHeight, nothing marked', async () => {
      await h().store.setChainTip(1000, { force: true });
      const f = rootTx(1);
      await h().store.create(f.hex);
      const mined = (blockId: number, blockHeight: number, more: object = {}) =>
        h().store.setMined({ txids: [f.txid], blockId, blockHeight, subtreeIdx: 0, ...more });
      await expect(mined(1, 1006)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'blockHeight', current: 1000, maxAdvance: 5 },
      });
      expect(await h().store.get(f.txid)).toMatchObject({ blockIDs: [] });
      await expect(h().store.getChainTip()).resolves.toBe(1000);
      // within the bound: marked, and H follows the block
      await expect(mined(2, 1005)).resolves.toEqual({ blockIds: { [f.txid]: [2] } });
      await expect(h().store.getChainTip()).resolves.toBe(1005);
      // not bounded, since H does not move: a side chain's block, an older block, removing a block
      await mined(3, 9000, { onLongestChain: false });
      await mined(4, 900);
      await mined(3, 9000, { unsetMined: true });
      expect(await h().store.get(f.txid)).toMatchObject({ blockIDs: [2, 4] });
      await expect(h().store.getChainTip()).resolves.toBe(1005);
    });

    test('force moves it anywhere, back or far forward', async () => {
      await expect(h().store.setChainTip(5_000_000, { force: true })).resolves.toBe(5_000_000);
      await expect(h().store.setChainTip(1000, { force: true })).resolves.toBe(1000);
      await expect(h().store.getChainTip()).resolves.toBe(1000);
    });

    test('concurrent forward moves never take H back nor past one bound from where each started', async () => {
      await h().store.setChainTip(2000, { force: true });
      const targets = [2001, 2003, 2005, 2002, 2004];
      const results = await Promise.allSettled(targets.map((t) => h().store.setChainTip(t)));
      const tip = await h().store.getChainTip();
      const applied = targets.filter((_, i) => results[i].status === 'fulfilled');
      expect(applied.length).toBeGreaterThan(0);
      expect(applied).toContain(tip);
      // every refusal is a bound refusal (the tip had moved past it), never a storage error
      for (const r of results)
        if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(tip).toBeGreaterThanOrEqual(2001);
      expect(tip).toBeLessThanOrEqual(2005);
    });
  });

  describe('start-up, chain tip and health', () => {
    const h = useHarness();

    test('the module name is content-versioned', () => {
      expect(h().store.moduleName).toMatch(/^utxo_[0-9a-f]{12}$/);
    });

    test('setChainTip / getChainTip; a bad height is INVALID_ARGUMENT', async () => {
      await expect(h().store.setChainTip(1234)).resolves.toBe(1234);
      await expect(h().store.getChainTip()).resolves.toBe(1234);
      await expect(h().store.setChainTip(-1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    test('a store refuses to start with another B than the one recorded; the same B is fine', async () => {
      const again = await createUtxoStore({
        engine: h().engine,
        blobs: h().blobs,
        signals: h().queue,
        settings: h().settings,
      });
      expect(again.moduleName).toBe(h().store.moduleName);
      await expect(
        createUtxoStore({
          engine: h().engine,
          blobs: h().blobs,
          signals: h().queue,
          settings: { ...h().settings, utxoBatchSize: 5 },
        }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'UTXO_BATCH_SIZE' } });
    });

    test('health reports ok, and degraded naming the failing port', async () => {
      await expect(h().store.health()).resolves.toMatchObject({ status: 'ok' });
      const down = async (): Promise<void> => Promise.reject(new Error('down'));
      const engine = overriding(h().engine, { ping: down });
      const store = await createUtxoStore({
        engine,
        blobs: h().blobs,
        signals: h().queue,
        settings: h().settings,
      });
      const report = await store.health();
      expect(report.status).toBe('degraded');
      expect(report.engine).toContain('down');
      expect(report.blobStore).toContain('ok');
    });
  });

  describe('create and get', () => {
    const h = useHarness();

    test('single record: result, default fields, unminedSince = H, createdAt = now', async () => {
      const f = rootTx(2);
      await expect(h().store.create(f.hex)).resolves.toEqual({
        txid: f.txid,
        fee: 0,
        sizeInBytes: f.tx.toBinary().length,
        extendedSize: f.tx.toBinary().length,
        external: false,
        records: 1,
      });
      const view = await h().store.get(f.txid);
      expect(view).toMatchObject({
        txid: f.txid,
        fee: 0,
        blockIDs: [],
        blockHeights: [],
        subtreeIdxs: [],
        isCoinbase: false,
        conflicting: false,
        locked: false,
        unminedSince: 1000,
      });
      const more = await h().store.get(f.txid, [
        'createdAt',
        'txID',
        'totalUtxos',
        'recordUtxos',
        'external',
        'tx',
        'utxos',
      ]);
      expect(more).toMatchObject({
        createdAt: NOW,
        txID: f.txid,
        totalUtxos: 2,
        recordUtxos: 2,
        external: false,
        tx: f.hex,
      });
      expect(more.utxos).toEqual([
        { utxoHash: utxoHashOf(f, 0), status: 'UNSPENT' },
        { utxoHash: utxoHashOf(f, 1), status: 'UNSPENT' },
      ]);
    });

    test('an EF tx keeps its EF bytes: get tx returns them; inputs/outputs bins hold the serialized parts', async () => {
      const parent = await minedRoot(h().store);
      const child = makeTx({ inputs: [{ parent, vout: 0 }], outputs: [300, 200] });
      const result = await h().store.create(child.hex);
      expect(result.fee).toBe(500);
      const view = await h().store.get(child.txid, ['tx', 'inputs', 'outputs']);
      expect(view.tx).toBe(child.hex);
      expect((view.inputs as string[]).length).toBe(1);
      expect((view.outputs as string[]).length).toBe(2);
    });

    test('minedBlocks sets the block lists and no unminedSince; blockHeight overrides H', async () => {
      const f = rootTx();
      await h().store.create(f.hex, { minedBlocks: [{ blockId: 7, blockHeight: 950, subtreeIdx: 2 }] });
      const view = await h().store.get(f.txid);
      expect(view).toMatchObject({ blockIDs: [7], blockHeights: [950], subtreeIdxs: [2] });
      expect(view.unminedSince).toBeUndefined();
      const g = rootTx();
      await h().store.create(g.hex, { blockHeight: 42 });
      expect((await h().store.get(g.txid)).unminedSince).toBe(42);
    });

    test('a tx created mined without a stored output is fully spent: its DAH is set at creation (H + R)', async () => {
      await h().store.setChainTip(500);
      const mined = [{ blockId: 7, blockHeight: 480, subtreeIdx: 0 }];
      const dataOnly = rootTx([{ satoshis: 0, opReturn: true }]);
      await h().store.create(dataOnly.hex, { minedBlocks: mined });
      expect((await h().engine.get(key(dataOnly.txid)))?.bins.deleteAtHeight).toBe(510);
      // not when an output is stored, when unmined (setMined runs the rule) or locked
      const spendable = rootTx([{ satoshis: 0, opReturn: true }, 1000]);
      await h().store.create(spendable.hex, { minedBlocks: mined });
      const unmined = rootTx([{ satoshis: 0, opReturn: true }]);
      await h().store.create(unmined.hex);
      const locked = rootTx([{ satoshis: 0, opReturn: true }]);
      await h().store.create(locked.hex, { minedBlocks: mined, locked: true });
      for (const f of [spendable, unmined, locked])
        expect((await h().engine.get(key(f.txid)))?.bins.deleteAtHeight).toBeUndefined();
      await h().store.setMined({ txids: [unmined.txid], blockId: 8, blockHeight: 501, subtreeIdx: 0 });
      expect((await h().engine.get(key(unmined.txid)))?.bins.deleteAtHeight).toBe(511);
    });

    test('a second create of the same tx is TX_EXISTS', async () => {
      const f = await created(h().store, rootTx());
      await expect(h().store.create(f.hex)).rejects.toMatchObject({ code: 'TX_EXISTS', details: { txid: f.txid } });
    });

    test('a tx with inputs must be EF; garbage is INVALID_ARGUMENT naming tx', async () => {
      const parent = rootTx();
      const child = makeTx({ inputs: [{ parent, vout: 0 }] });
      await expect(h().store.create(child.tx.toHex())).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'tx' },
      });
      await expect(h().store.create('zz')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(h().store.create(rootTx().hex, { minedBlocks: [{ blockId: -1 } as never] })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    });

    test('an OP_RETURN output has no slot: utxos entry null, getSpend NOT_FOUND', async () => {
      const f = await created(h().store, rootTx([1000, { satoshis: 0, opReturn: true }]));
      const view = await h().store.get(f.txid, ['utxos', 'recordUtxos']);
      expect(view.utxos).toEqual([{ utxoHash: utxoHashOf(f, 0), status: 'UNSPENT' }, null]);
      expect(view.recordUtxos).toBe(1);
      await expect(h().store.getSpend({ txid: f.txid, vout: 1 })).resolves.toEqual({ status: 'NOT_FOUND' });
    });

    test('coinbase: spendingHeight = height + maturity; IMMATURE until then', async () => {
      const cb = coinbaseTx(1);
      await h().store.create(cb.hex, { blockHeight: 1000 });
      expect((await h().store.get(cb.txid, ['isCoinbase', 'spendingHeight'])).spendingHeight).toBe(1100);
      await expect(h().store.getSpend({ txid: cb.txid, vout: 0 })).resolves.toEqual({
        status: 'IMMATURE',
        spendableAt: 1100,
      });
      const spender = makeTx({ inputs: [{ parent: cb, vout: 0 }] });
      const err = await h()
        .store.spend({ tx: spender.hex })
        .catch((e) => e);
      expect(err).toBeInstanceOf(SpendFailedError);
      expect(err).toMatchObject({ code: 'COINBASE_IMMATURE', details: { txid: cb.txid, vout: 0 } });
      // evaluated at blockHeight + 1 = 1100
      await expect(h().store.spend({ tx: spender.hex }, { blockHeight: 1099 })).resolves.toMatchObject({
        spends: [{ txid: cb.txid, vout: 0, status: 'OK' }],
      });
    });

    test('coinbase created with its block: maturity counts from that block, not from the tip', async () => {
      // the tip (1000) has not moved to the coinbase's block yet
      const early = coinbaseTx(1);
      await h().store.create(early.hex, { minedBlocks: [{ blockId: 77, blockHeight: 1001, subtreeIdx: 0 }] });
      expect((await h().store.get(early.txid, ['spendingHeight'])).spendingHeight).toBe(1101);
      // a backfilled coinbase from an old block is mature already
      const old = coinbaseTx(1);
      await h().store.create(old.hex, { minedBlocks: [{ blockId: 5, blockHeight: 850, subtreeIdx: 0 }] });
      expect((await h().store.get(old.txid, ['spendingHeight'])).spendingHeight).toBe(950);
      const spender = makeTx({ inputs: [{ parent: old, vout: 0 }] });
      await expect(h().store.spend({ tx: spender.hex })).resolves.toMatchObject({
        spends: [{ txid: old.txid, vout: 0, status: 'OK' }],
      });
    });

    test('get: unknown field is INVALID_ARGUMENT; missing tx is TX_NOT_FOUND; bad txid is INVALID_ARGUMENT', async () => {
      const f = await created(h().store, rootTx());
      await expect(h().store.get(f.txid, ['nope'])).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'fields' },
      });
      await expect(h().store.get(rootTx().txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
      await expect(h().store.get('xyz')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    test('pagination: more than B outputs -> master + pagination records, external, utxos across records', async () => {
      const f = rootTx(10);
      await expect(h().store.create(f.hex)).resolves.toMatchObject({ records: 3, external: true });
      expect(await h().blobs.exists(f.txid, 'outputs')).toBe(true);
      const view = await h().store.get(f.txid, ['utxos', 'totalExtraRecs', 'totalUtxos', 'tx', 'creating']);
      expect(view).toMatchObject({ totalExtraRecs: 2, totalUtxos: 10, tx: f.hex });
      expect(view.creating).toBeUndefined();
      expect((view.utxos as unknown[]).map((u) => (u as { utxoHash: string }).utxoHash)).toEqual(
        Array.from({ length: 10 }, (_, i) => utxoHashOf(f, i)),
      );
      expect(await h().engine.get(key(f.txid, 2))).not.toBeNull();
      expect(await h().engine.get(key(f.txid, 3))).toBeNull();
      expect(await h().engine.get(key(f.txid, 0xffffffff))).toBeNull();
      const spender = makeTx({
        inputs: [
          { parent: f, vout: 9 },
          { parent: f, vout: 4 },
          { parent: f, vout: 0 },
        ],
      });
      await h().store.spend({ tx: spender.hex });
      const after = (await h().store.get(f.txid, ['utxos'])).utxos as { status: string }[];
      expect(after.map((u) => u.status)).toEqual([
        'SPENT',
        'UNSPENT',
        'UNSPENT',
        'UNSPENT',
        'SPENT',
        ...Array(4).fill('UNSPENT'),
        'SPENT',
      ]);
    });

    test('golden tx: fee 215, sizes 328/368, UTXO hashes; paginated with B = 4', async () => {
      const result = await h().store.create(GOLDEN_EF_HEX);
      expect(result).toEqual({ ...GOLDEN_CREATED, external: true, records: 2 });
      const view = await h().store.get(GOLDEN_TXID, ['utxos', 'tx']);
      expect((view.utxos as { utxoHash: string }[]).map((u) => u.utxoHash)).toEqual(GOLDEN_UTXO_HASHES);
      expect(view.tx).toBe(GOLDEN_EF_HEX);
    });

    test('conflicting create registers the child in each parent conflictingCs; its outputs are CONFLICTING', async () => {
      const { p1, p2, tx: child } = await twoParentSpender(h().store);
      await h().store.create(child.hex, { conflicting: true });
      for (const p of [p1, p2]) {
        expect((await h().store.get(p.txid, ['conflictingCs'])).conflictingCs).toEqual([child.txid]);
      }
      await expect(h().store.getSpend({ txid: child.txid, vout: 0 })).resolves.toMatchObject({
        status: 'CONFLICTING',
      });
      expect((await h().store.get(child.txid, ['deleteAtHeight'])).deleteAtHeight).toBe(1010);
      const grandchild = makeTx({ inputs: [{ parent: child, vout: 0 }] });
      await expect(h().store.spend({ tx: grandchild.hex })).rejects.toMatchObject({ code: 'CONFLICTING' });
      await expect(h().store.spend({ tx: grandchild.hex }, { ignoreConflicting: true })).resolves.toBeDefined();
    });

    test('a conflicting create that died before registering in its parents registers on retry (still TX_EXISTS)', async () => {
      const p = await minedRoot(h().store);
      const child = makeTx({ inputs: [{ parent: p, vout: 0 }] });
      h().plan.arm(3); // 1 tip read, 2 the record, 3 the parents' registration: the process dies there
      await expect(h().store.create(child.hex, { conflicting: true })).rejects.toMatchObject({
        code: 'STORAGE_ERROR',
      });
      h().plan.disarm();
      expect((await h().store.get(p.txid, ['conflictingCs'])).conflictingCs ?? []).toEqual([]);
      await expect(h().store.create(child.hex, { conflicting: true })).rejects.toMatchObject({ code: 'TX_EXISTS' });
      expect((await h().store.get(p.txid, ['conflictingCs'])).conflictingCs).toEqual([child.txid]);
      // a non-conflicting tx that exists is not registered by a conflicting create of the same bytes
      const plain = await created(h().store, makeTx({ inputs: [{ parent: p, vout: 0 }] }));
      await expect(h().store.create(plain.hex, { conflicting: true })).rejects.toMatchObject({ code: 'TX_EXISTS' });
      expect((await h().store.get(p.txid, ['conflictingCs'])).conflictingCs).toEqual([child.txid]);
    });

    test('locked create: LOCKED until unlocked, ignoreLocked spends', async () => {
      const f = await created(h().store, rootTx(2), { locked: true });
      await expect(h().store.getSpend({ txid: f.txid, vout: 0 })).resolves.toMatchObject({ status: 'LOCKED' });
      const a = makeTx({ inputs: [{ parent: f, vout: 0 }] });
      await expect(h().store.spend({ tx: a.hex })).rejects.toMatchObject({
        code: 'LOCKED',
        details: { txid: f.txid },
      });
      await expect(h().store.spend({ tx: a.hex }, { ignoreLocked: true })).resolves.toBeDefined();
      await h().store.setLocked([f.txid], false);
      await expect(h().store.spend({ tx: makeTx({ inputs: [{ parent: f, vout: 1 }] }).hex })).resolves.toBeDefined();
    });
  });
}
