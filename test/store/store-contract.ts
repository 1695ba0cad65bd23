/**
 * The store contract: every operation of docs/operations.md and its errors, run unchanged on any RecordEngine.
 * `describeStoreContract(name, makeDeps)`: makeDeps returns fresh, empty ports (a new ':memory:' engine, or a new
 * Aerospike set) and a queue whose handler the suite sets to the Reconciler.
 */
import fc from 'fast-check';
import type { BlobStore } from '../../lib/blob/port';
import { EngineError, type RecordEngine } from '../../lib/engine/port';
import { SpendFailedError, UtxoStoreError } from '../../lib/domain/errors';
import { Reconciler } from '../../lib/signals/reconciler';
import { createUtxoStore } from '../../lib/store/utxo-store';
import { UNMINED_CURSOR_TTL_SECONDS } from '../../lib/store/unmined-cursor';
import { unminedCursorKey } from '../../lib/domain/keys';
import type { StoreSettings, UtxoStore } from '../../lib/store/types';
import {
  GOLDEN_EF_HEX,
  GOLDEN_EXTENDED_SIZE,
  GOLDEN_FEE,
  GOLDEN_SIZE,
  GOLDEN_TXID,
  GOLDEN_UTXO_HASHES,
} from '../fixtures/golden-tx';
import { coinbaseTx, makeTx, rootTx, spendItem, utxoHashOf, type Fixture } from '../fixtures/txs';
import { FaultPlan, faultyBlobs, faultyEngine, overriding, RecordingQueue, type HandledQueue } from './doubles';

export interface ContractTarget {
  engine: RecordEngine;
  blobs: BlobStore;
  signals: HandledQueue;
  close(): Promise<void>;
}
export type MakeDeps = () => Promise<ContractTarget>;

type Store = UtxoStore & { moduleName: string };

export interface Harness {
  store: Store;
  engine: RecordEngine;
  blobs: BlobStore;
  queue: RecordingQueue;
  reconciler: Reconciler;
  plan: FaultPlan;
  settings: StoreSettings;
  target: ContractTarget;
}

export const BASE_SETTINGS: StoreSettings = {
  utxoBatchSize: 4,
  blockHeightRetention: 10,
  maxTxSizeInStore: 1048576,
  externalizeAll: false,
  coinbaseMaturity: 100,
};

const NOW = 1_700_000_000_000;

function key(txid: string, n?: number): Buffer {
  const bytes = Buffer.from(txid, 'hex').reverse();
  if (n === undefined) return bytes;
  const suffix = Buffer.alloc(4);
  suffix.writeUInt32LE(n >>> 0);
  return Buffer.concat([bytes, suffix]);
}

/** The code of the UtxoStoreError `p` rejects with, or 'OK'. */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (err) {
    if (err instanceof UtxoStoreError) return err.code;
    throw err;
  }
}

export function describeStoreContract(name: string, makeDeps: MakeDeps): void {
  async function open(overrides: Partial<StoreSettings> = {}, target?: ContractTarget): Promise<Harness> {
    const t = target ?? (await makeDeps());
    const plan = new FaultPlan();
    const engine = faultyEngine(t.engine, plan);
    const blobs = faultyBlobs(t.blobs, plan);
    const queue = new RecordingQueue(t.signals);
    const settings = { ...BASE_SETTINGS, ...overrides };
    const store = await createUtxoStore({ engine, blobs, signals: queue, settings, now: () => NOW });
    const reconciler = new Reconciler({
      engine: t.engine,
      blobs: t.blobs,
      settings,
      moduleName: store.moduleName,
      getTip: () => store.getChainTip(),
    });
    t.signals.setHandler(reconciler);
    return { store, engine: t.engine, blobs: t.blobs, queue, reconciler, plan, settings, target: t };
  }

  /** One harness per describe block (txids are unique per test); the tip is reset before each test. */
  function useHarness(overrides: Partial<StoreSettings> = {}): () => Harness {
    let h: Harness | undefined;
    beforeAll(async () => {
      h = await open(overrides);
    });
    beforeEach(async () => {
      h!.plan.disarm();
      h!.queue.hold = false;
      h!.queue.clear();
      await h!.store.setChainTip(1000, { force: true });
    });
    afterAll(async () => {
      await h?.target.close();
    });
    return () => h!;
  }

  async function created(store: Store, f: Fixture, options = {}): Promise<Fixture> {
    await store.create(f.hex, options);
    return f;
  }

  /** A root with n outputs, created and mined at 900 (tip 1000). */
  async function minedRoot(store: Store, outputs = 1): Promise<Fixture> {
    const f = rootTx(outputs);
    await store.create(f.hex, { minedBlocks: [{ blockId: 9, blockHeight: 900, subtreeIdx: 0 }] });
    return f;
  }

  /** Two mined one-output roots and a tx spending output 0 of each (not spent yet). */
  async function twoParentSpender(store: Store): Promise<{ p1: Fixture; p2: Fixture; tx: Fixture }> {
    const p1 = await minedRoot(store);
    const p2 = await minedRoot(store);
    const tx = makeTx({
      inputs: [
        { parent: p1, vout: 0 },
        { parent: p2, vout: 0 },
      ],
    });
    return { p1, p2, tx };
  }

  describe(`UtxoStore contract: ${name}`, () => {
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
        await expect(h().store.create(rootTx().hex, { minedBlocks: [{ blockId: -1 } as never] })).rejects.toMatchObject(
          {
            code: 'INVALID_ARGUMENT',
          },
        );
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
        expect(result).toEqual({
          txid: GOLDEN_TXID,
          fee: GOLDEN_FEE,
          sizeInBytes: GOLDEN_SIZE,
          extendedSize: GOLDEN_EXTENDED_SIZE,
          external: true,
          records: 2,
        });
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

    describe('external transactions', () => {
      test('above maxTxSizeInStore: .tx blob first, record without inputs/outputs; get tx from the blob', async () => {
        const h = await open({ utxoBatchSize: 100, maxTxSizeInStore: 150 });
        try {
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
        } finally {
          await h.target.close();
        }
      });

      test('externalizeAll: every tx external; a tx without inputs as a .outputs blob', async () => {
        const h = await open({ utxoBatchSize: 100, externalizeAll: true });
        try {
          const f = rootTx([500, { satoshis: 0, opReturn: true }, 700]);
          await expect(h.store.create(f.hex)).resolves.toMatchObject({ external: true });
          expect(await h.blobs.exists(f.txid, 'outputs')).toBe(true);
          expect(await h.blobs.exists(f.txid, 'tx')).toBe(false);
          const golden = await h.store.create(GOLDEN_EF_HEX);
          expect(golden.external).toBe(true);
          expect((await h.store.get(GOLDEN_TXID, ['tx'])).tx).toBe(GOLDEN_EF_HEX);
          await h.store.delete(GOLDEN_TXID);
          expect(await h.blobs.exists(GOLDEN_TXID, 'tx')).toBe(false);
        } finally {
          await h.target.close();
        }
      });

      test('a single internal record: golden tx round-trips from the record bins', async () => {
        const h = await open({ utxoBatchSize: 100 });
        try {
          await expect(h.store.create(GOLDEN_EF_HEX)).resolves.toMatchObject({ external: false, records: 1 });
          expect((await h.store.get(GOLDEN_TXID, ['tx'])).tx).toBe(GOLDEN_EF_HEX);
        } finally {
          await h.target.close();
        }
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
        await expect(
          h().store.spend({ spends: [{ ...spendItem(parent, 0, spender), vout: -1 }] }),
        ).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          details: { field: 'spends[0].vout' },
        });
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

    describe('setMined, flags and admin operations', () => {
      const h = useHarness();

      test('setMined clears `locked` on the pagination records too: every output spendable', async () => {
        const f = await created(h().store, rootTx(9), { locked: true });
        await h().store.setMined({ txids: [f.txid], blockId: 7, blockHeight: 1001, subtreeIdx: 0 });
        expect((await h().store.get(f.txid, ['locked'])).locked).toBe(false);
        await expect(h().store.getSpend({ txid: f.txid, vout: 8 })).resolves.toEqual({ status: 'OK' });
        const spender = makeTx({ inputs: [{ parent: f, vout: 8 }] });
        await expect(h().store.spend({ tx: spender.hex })).resolves.toEqual({
          spends: [{ txid: f.txid, vout: 8, status: 'OK' }],
        });
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
        expect((await h().store.get(f.txid, ['locked'])).locked).toBe(false);
        await expect(h().store.getSpend({ txid: f.txid, vout: 0 })).resolves.toEqual({ status: 'OK' });
        const spender = makeTx({ inputs: [{ parent: f, vout: 8 }] });
        await expect(h().store.spend({ tx: spender.hex })).resolves.toEqual({
          spends: [{ txid: f.txid, vout: 8, status: 'OK' }],
        });
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
        const e = await open({}, t);
        try {
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
        } finally {
          await e.target.close();
        }
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
        const e = await open({}, t);
        try {
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
        } finally {
          await e.target.close();
        }
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
        const e = await open({}, t);
        try {
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
        } finally {
          await e.target.close();
        }
      });

      test('get tx of an external tx without inputs never answers other bytes than the tx (an OP_RETURN output has no slot)', async () => {
        const e = await open({ utxoBatchSize: 100, externalizeAll: true });
        try {
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
        } finally {
          await e.target.close();
        }
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
        const e = await open({ utxoBatchSize: 100, externalizeAll: true });
        try {
          await e.store.setChainTip(1000);
          const f = rootTx(2);
          e.plan.arm(3); // 1 tip, 2 blob put; the process dies at the record create
          await expect(e.store.create(f.hex)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
          e.plan.disarm();
          await e.store.setChainTip(1001);
          await expect(e.store.create(f.hex, { blockHeight: 1001 })).resolves.toMatchObject({ external: true });
          await expect(e.store.create(f.hex)).rejects.toMatchObject({ code: 'TX_EXISTS' });
        } finally {
          await e.target.close();
        }
      });
    });
  });
}
