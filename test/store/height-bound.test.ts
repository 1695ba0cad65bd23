/**
 * A caller's height is bounded the way the chain tip is (docs/security.md, "The height bound"): a request's
 * blockHeight stands in for H (coinbase maturity, a reassigned output's lock, the delete-at-height it sets), so it may
 * be at most MAX_TIP_ADVANCE above the stored tip. In the store, so that every transport and the batch path share
 * it, and against the one tip read a request makes anyway (never one per item).
 */
import fc from 'fast-check';
import { CHAIN_TIP_KEY } from '../../lib/store/meta';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { RecordEngine } from '../../lib/engine/port';
import type { UtxoStore } from '../../lib/store/types';
import { coinbaseTx, makeTx, rootTx, spendItem, utxoHashOf } from '../fixtures/txs';
import { embeddedTarget } from './contract-target';
import { BASE_SETTINGS } from './store-contract';
import { overriding } from './doubles';
import type { ContractTarget } from './store-contract';

const MAX = 10;
const TIP = 1000;
const FAR = 4294967294;
const refused = (current = TIP) => ({
  code: 'INVALID_ARGUMENT',
  details: { field: 'blockHeight', current, maxAdvance: MAX },
});

let target: ContractTarget;
let store: UtxoStore;
let tipReads = 0;

beforeAll(async () => {
  target = await embeddedTarget('height-bound');
  target.signals.setHandler({ handle: async () => undefined });
  const engine: RecordEngine = overriding(target.engine, {
    get: (key, bins) => {
      if (Buffer.isBuffer(key) && key.equals(CHAIN_TIP_KEY)) tipReads++;
      return target.engine.get(key, bins);
    },
  });
  store = await createUtxoStore({
    engine,
    blobs: target.blobs,
    signals: target.signals,
    settings: { ...BASE_SETTINGS, maxTipAdvance: MAX },
  });
});

beforeEach(async () => {
  await store.setChainTip(TIP, { force: true });
  tipReads = 0;
});

afterAll(async () => {
  await target.close();
});

/** A coinbase created at the tip: spendable from TIP + 100. */
async function immatureCoinbase() {
  const cb = coinbaseTx(1);
  await store.create(cb.hex, { blockHeight: TIP });
  return { cb, spender: makeTx({ inputs: [{ parent: cb, vout: 0 }] }) };
}

async function minedRoot(outputs = 1) {
  const f = rootTx(outputs);
  await store.create(f.hex, { minedBlocks: [{ blockId: 9, blockHeight: 900, subtreeIdx: 0 }] });
  return f;
}

describe('spend: blockHeight at most MAX_TIP_ADVANCE above the tip', () => {
  test('an immature coinbase is not spent with a far blockHeight: 400 naming blockHeight, the output unspent, H unchanged', async () => {
    const { cb, spender } = await immatureCoinbase();
    await expect(store.spend({ tx: spender.hex }, { blockHeight: FAR })).rejects.toMatchObject(refused());
    await expect(store.getSpend({ txid: cb.txid, vout: 0 })).resolves.toEqual({
      status: 'IMMATURE',
      spendableAt: 1100,
    });
    await expect(store.getChainTip()).resolves.toBe(TIP);
  });

  test('the batch path refuses the whole request the same way; nothing is spent', async () => {
    const { cb, spender } = await immatureCoinbase();
    const parent = await minedRoot();
    const other = makeTx({ inputs: [{ parent, vout: 0 }] });
    await expect(
      store.spendMany([{ tx: spender.hex }, { tx: other.hex }], { blockHeight: TIP + MAX + 1 }),
    ).rejects.toMatchObject(refused());
    await expect(store.getSpend({ txid: cb.txid, vout: 0 })).resolves.toMatchObject({ status: 'IMMATURE' });
    await expect(store.getSpend({ txid: parent.txid, vout: 0 })).resolves.toEqual({ status: 'OK' });
  });

  test('a reassigned output stays locked: a blockHeight past its lock and past the bound is refused', async () => {
    const f = await minedRoot();
    const u0 = { txid: f.txid, vout: 0, utxoHash: utxoHashOf(f, 0) };
    const newUtxoHash = 'ab'.repeat(32);
    await store.freeze([u0]);
    await store.reassign({ ...u0, newUtxoHash });
    const spend = { spends: [{ ...spendItem(f, 0, rootTx()), utxoHash: newUtxoHash }] };
    await expect(store.spend(spend, { blockHeight: 1999 })).rejects.toMatchObject(refused());
    await expect(store.getSpend({ ...u0, utxoHash: newUtxoHash })).resolves.toEqual({
      status: 'FROZEN',
      spendableAt: 2000,
    });
  });

  test('within the bound and below the tip it stands in for H as before', async () => {
    const parent = await minedRoot(2);
    const a = makeTx({ inputs: [{ parent, vout: 0 }] });
    const b = makeTx({ inputs: [{ parent, vout: 1 }] });
    await expect(store.spend({ tx: a.hex }, { blockHeight: TIP + MAX })).resolves.toMatchObject({
      spends: [{ status: 'OK' }],
    });
    await expect(store.spend({ tx: b.hex }, { blockHeight: 5 })).resolves.toMatchObject({ spends: [{ status: 'OK' }] });
  });

  test('one tip read per batch with or without a blockHeight, whatever the batch size (none per item)', async () => {
    for (const size of [1, 8, 40]) {
      const parent = await minedRoot(size);
      const txs = Array.from({ length: size }, (_, i) => ({ tx: makeTx({ inputs: [{ parent, vout: i }] }).hex }));
      tipReads = 0;
      const results = await store.spendMany(txs, { blockHeight: TIP + 1 });
      expect(results.every((r) => r.ok)).toBe(true);
      expect(tipReads).toBe(1);
    }
    const parent = await minedRoot(4);
    tipReads = 0;
    await store.spendMany(Array.from({ length: 4 }, (_, i) => ({ tx: makeTx({ inputs: [{ parent, vout: i }] }).hex })));
    expect(tipReads).toBe(1);
  });

  test('property: a blockHeight is refused exactly when it is more than MAX_TIP_ADVANCE above the tip', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 5000 }), async (h, tip) => {
        await store.setChainTip(tip, { force: true });
        // an input of a missing tx: within the bound the spend runs and fails TX_NOT_FOUND, never INVALID_ARGUMENT
        const spender = makeTx({ inputs: [{ parent: rootTx(), vout: 0 }] });
        const err = (await store.spend({ tx: spender.hex }, { blockHeight: h }).catch((e: unknown) => e)) as {
          code?: string;
        };
        expect(err.code === 'INVALID_ARGUMENT').toBe(h > tip + MAX);
      }),
      { numRuns: 40 },
    );
  });
});

describe('unspend, create and reassign: the same bound', () => {
  test('unspend: a far blockHeight is refused before anything is written (not even flagAsLocked)', async () => {
    const parent = await minedRoot();
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    await store.spend({ tx: child.hex });
    const spends = [spendItem(parent, 0, child)];
    await expect(store.unspend(spends, { blockHeight: FAR, flagAsLocked: true })).rejects.toMatchObject(refused());
    await expect(store.getSpend({ txid: parent.txid, vout: 0 })).resolves.toMatchObject({ status: 'SPENT' });
    expect(await store.get(parent.txid, ['locked'])).toMatchObject({ locked: false });
  });

  test('create: a tx whose blockHeight is past the bound fails alone, naming blockHeight; the others are created', async () => {
    const far = coinbaseTx(1);
    const ok = rootTx(1);
    const results = await store.createMany([
      { tx: far.hex, options: { blockHeight: TIP + MAX + 1 } },
      { tx: ok.hex, options: { blockHeight: TIP + MAX } },
    ]);
    expect(results[0]).toMatchObject({ ok: false, error: refused() });
    expect(results[1]).toMatchObject({ ok: true });
    await expect(store.get(far.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
    expect(tipReads).toBe(1);
    await expect(store.create(rootTx(1).hex, { blockHeight: FAR })).rejects.toMatchObject(refused());
  });

  test('create: a coinbase without minedBlocks may not count its maturity from more than MAX_TIP_ADVANCE below the tip (security review N2)', async () => {
    // the review: at tip 1000, a coinbase created with blockHeight 0 was spendable at once (spendableAt 100)
    const early = coinbaseTx(1);
    await expect(store.create(early.hex, { isCoinbase: true, blockHeight: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'blockHeight', current: TIP, maxBelow: MAX },
    });
    await expect(store.get(early.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
    // the batch path: that tx alone fails; the edge of the window is accepted
    const edge = coinbaseTx(1);
    const results = await store.createMany([
      { tx: coinbaseTx(1).hex, options: { blockHeight: TIP - MAX - 1 } },
      { tx: edge.hex, options: { blockHeight: TIP - MAX } },
    ]);
    expect(results[0]).toMatchObject({ ok: false, error: { details: { field: 'blockHeight', maxBelow: MAX } } });
    expect(results[1]).toMatchObject({ ok: true });
    await expect(store.getSpend({ txid: edge.txid, vout: 0 })).resolves.toMatchObject({
      status: 'IMMATURE',
      spendableAt: TIP - MAX + 100,
    });
    // a coinbase whose block is named counts from that block (minedBlocks: blockValidation's field), and a tx that
    // is no coinbase is not bounded below (its height sets only unminedSince)
    const backfilled = coinbaseTx(1);
    await store.create(backfilled.hex, {
      blockHeight: 0,
      minedBlocks: [{ blockId: 7, blockHeight: 900, subtreeIdx: 0 }],
    });
    await expect(store.getSpend({ txid: backfilled.txid, vout: 0 })).resolves.toMatchObject({ spendableAt: 1000 });
    await expect(store.create(rootTx(1).hex, { blockHeight: 5 })).resolves.toMatchObject({ records: 1 });
  });

  test('reassign: a blockHeight past the bound is refused (the lock counts from it)', async () => {
    const f = await minedRoot();
    const u0 = { txid: f.txid, vout: 0, utxoHash: utxoHashOf(f, 0) };
    await store.freeze([u0]);
    await expect(store.reassign({ ...u0, newUtxoHash: 'cd'.repeat(32), blockHeight: FAR })).rejects.toMatchObject(
      refused(),
    );
    await expect(store.getSpend(u0)).resolves.toMatchObject({ status: 'FROZEN' });
  });
});
