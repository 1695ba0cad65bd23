/**
 * The reconciler on the embedded engine: records are set up through the store, then bent by hand into the states
 * a lost, duplicated or reordered signal leaves behind.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { FileBlobStore } from '../../lib/blob';
import type { BlobStore } from '../../lib/blob/port';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import type { RecordEngine } from '../../lib/engine/port';
import type { Signal, SignalQueue } from '../../lib/signals/port';
import { pageFullySpent, Reconciler, TIP_REUSE_MS } from '../../lib/signals/reconciler';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { UtxoStore } from '../../lib/store/types';
import { makeTx, rootTx, utxoHashOf, type Fixture } from '../fixtures/txs';
import { overriding } from '../store/doubles';

const settings = {
  utxoBatchSize: 4,
  blockHeightRetention: 10,
  maxTxSizeInStore: 1048576,
  externalizeAll: false,
  coinbaseMaturity: 100,
};

let engine: RecordEngine;
let blobs: BlobStore;
let dir: string;
let store: UtxoStore & { moduleName: string };
let reconciler: Reconciler;
const held: Signal[] = [];
const queue: SignalQueue = {
  kind: 'held',
  send: async (s) => {
    held.push(...s);
  },
  ping: async () => undefined,
};

function key(txid: string, n?: number): Buffer {
  const bytes = Buffer.from(txid, 'hex').reverse();
  if (n === undefined) return bytes;
  const suffix = Buffer.alloc(4);
  suffix.writeUInt32LE(n);
  return Buffer.concat([bytes, suffix]);
}

async function bins(txid: string, n?: number) {
  return (await engine.get(key(txid, n)))?.bins;
}

async function minedRoot(outputs: number): Promise<Fixture> {
  const f = rootTx(outputs);
  await store.create(f.hex, { minedBlocks: [{ blockId: 1, blockHeight: 900, subtreeIdx: 0 }] });
  return f;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'reconciler-'));
  engine = await openEmbeddedEngine({ path: ':memory:' });
  blobs = new FileBlobStore({ dir });
  store = await createUtxoStore({ engine, blobs, signals: queue, settings });
  reconciler = new Reconciler({
    engine,
    blobs,
    settings,
    moduleName: store.moduleName,
    getTip: () => store.getChainTip(),
  });
});

beforeEach(async () => {
  held.length = 0;
  await store.setChainTip(1000);
});

afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('pageFullySpent', () => {
  test('spent == record slots and nothing reassigned', () => {
    expect(pageFullySpent({ recordUtxos: 4, spentUtxos: 4 })).toBe(true);
    expect(pageFullySpent({ recordUtxos: 4, spentUtxos: 3 })).toBe(false);
    expect(pageFullySpent({ recordUtxos: 0, spentUtxos: 0 })).toBe(true);
    expect(pageFullySpent({ recordUtxos: 1, spentUtxos: 1, reassignments: [{ offset: 0 }] })).toBe(false);
  });
});

describe('Reconciler', () => {
  test('a missing master: nothing to do', async () => {
    await expect(reconciler.handle({ txid: rootTx().txid, signal: 'ALLSPENT', height: 1 })).resolves.toBeUndefined();
  });

  test('an unfinished create is finished when every record exists (pages first, master last)', async () => {
    const f = await minedRoot(9);
    for (const n of [undefined, 1, 2]) await engine.update(key(f.txid, n), { creating: true });
    await reconciler.handle({ txid: f.txid, signal: 'CREATING', height: 1000 });
    for (const n of [undefined, 1, 2]) expect((await bins(f.txid, n))?.creating).toBeUndefined();
    await expect(store.getSpend({ txid: f.txid, vout: 8 })).resolves.toMatchObject({ status: 'OK' });
  });

  test('an unfinished create with a missing record is left for a retry', async () => {
    const f = await minedRoot(9);
    await engine.update(key(f.txid), { creating: true });
    await engine.update(key(f.txid, 1), { creating: true });
    await engine.remove(key(f.txid, 2));
    await reconciler.handle({ txid: f.txid, signal: 'CREATING', height: 1000 });
    expect((await bins(f.txid))?.creating).toBe(true);
    expect((await bins(f.txid, 1))?.creating).toBe(true);
  });

  test('spentExtraRecs is recomputed from the pages, and the DAH rule re-runs', async () => {
    const f = await minedRoot(8);
    await store.spend({ tx: makeTx({ inputs: [0, 1, 2, 3, 4, 5, 6, 7].map((vout) => ({ parent: f, vout })) }).hex });
    expect((await bins(f.txid))?.spentExtraRecs).toBe(0); // the ALLSPENT signal was held
    expect((await bins(f.txid))?.deleteAtHeight).toBeUndefined();
    expect(held).toContainEqual({ txid: f.txid, signal: 'ALLSPENT', height: 1001 });
    await reconciler.handle(held.find((s) => s.signal === 'ALLSPENT')!);
    expect(await bins(f.txid)).toMatchObject({ spentExtraRecs: 1, deleteAtHeight: 1011 });
    expect((await bins(f.txid, 1))?.deleteAtHeight).toBe(1011);
    expect(await blobs.getDeleteAtHeight(f.txid, 'outputs')).toBe(1011);
  });

  test('a stale pagination DAH and blob tag are removed when the master has none', async () => {
    const f = await minedRoot(8);
    await engine.update(key(f.txid, 1), { deleteAtHeight: 77 });
    await blobs.setDeleteAtHeight(f.txid, 'outputs', 77);
    await reconciler.handle({ txid: f.txid, signal: 'DAHUNSET', height: 1000 });
    expect((await bins(f.txid, 1))?.deleteAtHeight).toBeUndefined();
    expect(await blobs.getDeleteAtHeight(f.txid, 'outputs')).toBeNull();
  });

  test('engine failures surface as StorageError', async () => {
    const broken = new Reconciler({
      engine: { ...engine, get: async () => Promise.reject(new Error('down')) } as unknown as RecordEngine,
      blobs,
      settings,
      moduleName: store.moduleName,
      getTip: async () => 0,
    });
    await expect(broken.handle({ txid: rootTx().txid, signal: 'DAHSET', height: 1 })).rejects.toMatchObject({
      code: 'STORAGE_ERROR',
    });
    await expect(reconciler.handle({ txid: 'zz', signal: 'DAHSET', height: 1 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  /** A reconciler whose first pages read pauses (the read is done) until release(). */
  function pausingReconciler() {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let paused: () => void = () => undefined;
    const pausedAfterRead = new Promise<void>((resolve) => (paused = resolve));
    let first = true;
    const slow = new Reconciler({
      engine: overriding(engine, {
        async batchGet(...args) {
          const pages = await engine.batchGet(...args);
          if (first) {
            first = false;
            paused();
            await gate; // the other invocation runs meanwhile
          }
          return pages;
        },
      }),
      blobs,
      settings,
      moduleName: store.moduleName,
      getTip: () => store.getChainTip(),
    });
    return { slow, pausedAfterRead, release };
  }

  test('two signals of one tx handled concurrently: the one that read the pages first cannot leave a stale count', async () => {
    const f = await minedRoot(8);
    const { slow, pausedAfterRead, release } = pausingReconciler();
    // an older signal of this tx is being handled: it read the pages before the spend
    const older = slow.handle({ txid: f.txid, signal: 'DAHUNSET', height: 1000 });
    await pausedAfterRead;
    await store.spend({ tx: makeTx({ inputs: [0, 1, 2, 3, 4, 5, 6, 7].map((vout) => ({ parent: f, vout })) }).hex });
    await reconciler.handle(held.find((s) => s.signal === 'ALLSPENT' && s.txid === f.txid)!);
    expect((await bins(f.txid))?.spentExtraRecs).toBe(1);
    release();
    await older;
    expect(await bins(f.txid)).toMatchObject({ spentExtraRecs: 1, deleteAtHeight: 1011 });
    expect((await bins(f.txid, 1))?.deleteAtHeight).toBe(1011);
    expect(await blobs.getDeleteAtHeight(f.txid, 'outputs')).toBe(1011);
  });

  test('concurrently: a count written from pages that changed since is read back and corrected', async () => {
    const f = await minedRoot(8);
    const spender = makeTx({ inputs: [0, 1, 2, 3, 4, 5, 6, 7].map((vout) => ({ parent: f, vout })) });
    await store.spend({ tx: spender.hex }); // ALLSPENT held: the master still counts 0
    const { slow, pausedAfterRead, release } = pausingReconciler();
    const allSpent = slow.handle(held.find((s) => s.signal === 'ALLSPENT' && s.txid === f.txid)!);
    await pausedAfterRead; // it read the page fully spent
    held.length = 0;
    await store.unspend([{ txid: f.txid, vout: 5, utxoHash: utxoHashOf(f, 5), spendingTxid: spender.txid, vin: 5 }]);
    await reconciler.handle(held.find((s) => s.signal === 'NOTALLSPENT' && s.txid === f.txid)!);
    release();
    await allSpent;
    const master = await bins(f.txid);
    expect(master?.spentExtraRecs).toBe(0);
    expect(master?.deleteAtHeight).toBeUndefined();
    expect((await bins(f.txid, 1))?.deleteAtHeight).toBeUndefined();
    expect(await blobs.getDeleteAtHeight(f.txid, 'outputs')).toBeNull();
  });

  test('a page spent, unspent and spent again: the DAH is the same whatever order the three signals come in', async () => {
    const dahs = [];
    for (const reverse of [false, true]) {
      const f = await minedRoot(8);
      held.length = 0;
      const t = makeTx({ inputs: [0, 1, 2, 3, 4, 5, 6, 7].map((vout) => ({ parent: f, vout })) });
      await store.spend({ tx: t.hex }); // ALLSPENT @1001
      await store.setChainTip(1003);
      await store.unspend([{ txid: f.txid, vout: 5, utxoHash: utxoHashOf(f, 5), spendingTxid: t.txid, vin: 5 }]);
      await store.setChainTip(1009);
      await store.spend({ tx: t.hex }); // ALLSPENT @1010
      await store.setChainTip(1000);
      const signals = held.filter((s) => s.txid === f.txid);
      expect(signals.map((s) => s.height)).toEqual(expect.arrayContaining([1001, 1003, 1010]));
      for (const s of reverse ? signals.reverse() : signals) await reconciler.handle(s);
      dahs.push((await bins(f.txid))?.deleteAtHeight);
    }
    expect(dahs).toEqual([1020, 1020]);
  });

  test('property: any order and duplication of the signals gives the same records', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.subarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
        fc.array(fc.nat(), { maxLength: 20 }),
        async (vouts, picks) => {
          const f = await minedRoot(12);
          held.length = 0;
          if (vouts.length > 0)
            await store.spend({ tx: makeTx({ inputs: vouts.map((vout) => ({ parent: f, vout })) }).hex });
          const signals = [...held, { txid: f.txid, signal: 'DAHSET' as const, height: 1001 }];
          const order = picks.map((p) => signals[p % signals.length]);
          for (const s of [...order, ...signals.reverse()]) await reconciler.handle(s);
          const pages = [await bins(f.txid, 1), await bins(f.txid, 2)];
          const master = await bins(f.txid);
          expect(master?.spentExtraRecs).toBe(pages.filter((p) => p?.spentUtxos === 4).length);
          const dah = vouts.length === 12 ? 1011 : undefined;
          expect(master?.deleteAtHeight).toBe(dah);
          for (const p of pages) expect(p?.deleteAtHeight).toBe(dah);
          expect(await blobs.getDeleteAtHeight(f.txid, 'outputs')).toBe(dah ?? null);
        },
      ),
      { numRuns: 15 },
    );
  });
});

describe('the height a signal names is clamped to the stored tip (security review #10)', () => {
  const bounded = () =>
    new Reconciler({
      engine,
      blobs,
      settings: { ...settings, maxTipAdvance: 10 },
      moduleName: store.moduleName,
      getTip: () => store.getChainTip(),
    });

  test('[H, H + MAX_TIP_ADVANCE]: below H is H, far above is H + MAX_TIP_ADVANCE, within is its own', async () => {
    const r = bounded();
    const at = (height: number) => r.heightFor({ txid: rootTx().txid, signal: 'ALLSPENT', height });
    await expect(at(0)).resolves.toBe(1000);
    await expect(at(4294967294)).resolves.toBe(1010);
    await expect(at(1001)).resolves.toBe(1001);
    await expect(r.heightFor({ txid: rootTx().txid, signal: 'ALLSPENT', height: NaN })).resolves.toBe(1000);
  });

  test('a forged ALLSPENT at height 0 sets the DAH from the stored tip, not from 0', async () => {
    const f = await minedRoot(8);
    await store.spend({ tx: makeTx({ inputs: [0, 1, 2, 3, 4, 5, 6, 7].map((vout) => ({ parent: f, vout })) }).hex });
    expect((await bins(f.txid))?.deleteAtHeight).toBeUndefined(); // the real signal was held
    await bounded().handle({ txid: f.txid, signal: 'ALLSPENT', height: 0 });
    expect(await bins(f.txid)).toMatchObject({ spentExtraRecs: 1, deleteAtHeight: 1010 });
  });

  test('one tip read serves the signals of a batch (TIP_REUSE_MS), not one per signal', async () => {
    let reads = 0;
    let clock = 0;
    const r = new Reconciler({
      engine,
      blobs,
      settings: { ...settings, maxTipAdvance: 10 },
      moduleName: store.moduleName,
      getTip: () => {
        reads++;
        return store.getChainTip();
      },
      now: () => clock,
    });
    for (let i = 0; i < 20; i++) await r.handle({ txid: rootTx().txid, signal: 'ALLSPENT', height: 1001 });
    expect(reads).toBe(1);
    clock += TIP_REUSE_MS;
    await r.handle({ txid: rootTx().txid, signal: 'ALLSPENT', height: 1001 });
    expect(reads).toBe(2);
  });
});
