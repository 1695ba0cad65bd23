/**
 * The store contract's harness (store-contract.ts): the ports a target gives, the store, reconciler and fault plan
 * opened on them, and the fixtures most tests start from.
 */
import type { BlobStore } from '../../lib/blob/port';
import { type RecordEngine } from '../../lib/engine/port';
import { UtxoStoreError } from '../../lib/domain/errors';
import { Reconciler } from '../../lib/signals/reconciler';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { StoreSettings, UtxoStore } from '../../lib/store/types';
import { makeTx, rootTx, type Fixture } from '../fixtures/txs';
import { FaultPlan, faultyBlobs, faultyEngine, perDescribe, RecordingQueue, type HandledQueue } from './doubles';

export interface ContractTarget {
  engine: RecordEngine;
  blobs: BlobStore;
  signals: HandledQueue;
  close(): Promise<void>;
}
export type MakeDeps = () => Promise<ContractTarget>;

export type Store = UtxoStore & { moduleName: string };

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

export const NOW = 1_700_000_000_000;

export function key(txid: string, n?: number): Buffer {
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

/** What every part of the contract builds on: fresh harnesses and the fixtures most tests start from. */
/** The 9-output f is no longer locked: output checkedVout is spendable, and a spend of output 8 (on a page) is OK. */
export async function expectUnlocked(store: Store, f: Fixture, checkedVout: number): Promise<void> {
  expect((await store.get(f.txid, ['locked'])).locked).toBe(false);
  await expect(store.getSpend({ txid: f.txid, vout: checkedVout })).resolves.toEqual({ status: 'OK' });
  const spender = makeTx({ inputs: [{ parent: f, vout: 8 }] });
  await expect(store.spend({ tx: spender.hex })).resolves.toEqual({
    spends: [{ txid: f.txid, vout: 8, status: 'OK' }],
  });
}

export interface ContractTools {
  makeDeps: MakeDeps;
  open(overrides?: Partial<StoreSettings>, target?: ContractTarget): Promise<Harness>;
  /** opens a harness, runs fn on it and closes its target whatever fn does */
  withOpen(
    overrides: Partial<StoreSettings>,
    fn: (h: Harness) => Promise<void>,
    target?: ContractTarget,
  ): Promise<void>;
  useHarness(overrides?: Partial<StoreSettings>): () => Harness;
  created(store: Store, f: Fixture, options?: object): Promise<Fixture>;
  minedRoot(store: Store, outputs?: number): Promise<Fixture>;
  twoParentSpender(store: Store): Promise<{ p1: Fixture; p2: Fixture; tx: Fixture }>;
}

export function contractTools(makeDeps: MakeDeps): ContractTools {
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
    return perDescribe(
      () => open(overrides),
      async (h) => {
        h.plan.disarm();
        h.queue.hold = false;
        h.queue.clear();
        await h.store.setChainTip(1000, { force: true });
      },
    );
  }

  async function created(store: Store, f: Fixture, options = {}): Promise<Fixture> {
    await store.create(f.hex, options);
    return f;
  }

  async function withOpen(
    overrides: Partial<StoreSettings>,
    fn: (h: Harness) => Promise<void>,
    target?: ContractTarget,
  ): Promise<void> {
    const h = await open(overrides, target);
    try {
      await fn(h);
    } finally {
      await h.target.close();
    }
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

  return { makeDeps, open, withOpen, useHarness, created, minedRoot, twoParentSpender };
}
