/**
 * Shared helpers of the UDF module tests: the embedded engine with lua/utxo.lua registered, record builders (bins per
 * docs/records.md) and byte helpers. Every test runs the real module through the RecordEngine port.
 */
import { createHash, randomBytes } from 'crypto';
import { openEmbeddedEngine } from '../../lib/engine/embedded';
import type { BinMap, BinValue, Bins, RecordEngine } from '../../lib/engine/port';
import { loadUdfSource, udfModuleName } from '../../lib/store/udf-module';

/** lua/utxo.lua, or $UTXO_UDF_PATH (e.g. a mutated copy) */
export const SOURCE = loadUdfSource();
export const MODULE = udfModuleName(SOURCE);
export const R = 10;
export const H = 1000;
export const FROZEN = Buffer.alloc(36, 0xff);

/** 32 bytes derived from a label (deterministic). */
export function hash32(label: string | number): Buffer {
  return createHash('sha256').update(String(label)).digest();
}

export function txid(): Buffer {
  return randomBytes(32);
}

export function pageKey(master: Buffer, n: number): Buffer {
  const key = Buffer.alloc(36);
  master.copy(key, 0);
  key.writeUInt32LE(n, 32);
  return key;
}

/** Spending data: spending txid (internal order) || uint32 LE vin. */
export function sd(spendingTxid: Buffer, vin = 0): Buffer {
  const out = Buffer.alloc(36);
  spendingTxid.copy(out, 0);
  out.writeUInt32LE(vin, 32);
  return out;
}

/** Display hex of a txid: reversed bytes, lowercase hex. */
export function displayHex(id: Buffer): string {
  return Buffer.from(id).reverse().toString('hex');
}

export function spentSlot(utxoHash: Buffer, spendingData: Buffer): Buffer {
  return Buffer.concat([utxoHash, spendingData]);
}

export function frozenSlot(utxoHash: Buffer): Buffer {
  return Buffer.concat([utxoHash, FROZEN]);
}

/** Slot spec: a hash label (unspent), null (no slot), or an explicit slot buffer. */
export type SlotSpec = Buffer | null;

export interface RecordOptions {
  /** slots of this record; default three unspent slots hashed from 'u0'..'u2' */
  utxos?: SlotSpec[];
  /** master record (totalExtraRecs present) unless false */
  master?: boolean;
  totalExtraRecs?: number;
  spentExtraRecs?: number;
  /** mined blocks; default one block on the longest chain */
  blockIDs?: number[];
  unminedSince?: number | null;
  locked?: boolean;
  conflicting?: boolean;
  creating?: boolean;
  deleting?: boolean;
  external?: boolean;
  isCoinbase?: boolean;
  spendingHeight?: number;
  preserveUntil?: number;
  deleteAtHeight?: number;
  extra?: Bins;
}

export function defaultSlots(n = 3): Buffer[] {
  return Array.from({ length: n }, (_, i) => hash32(`u${i}`));
}

/** Bins of a master (default) or pagination record; counters derived from the slots. */
export function recordBins(o: RecordOptions = {}): Bins {
  const utxos = o.utxos ?? defaultSlots();
  const stored = utxos.filter((s): s is Buffer => s !== null);
  const spent = stored.filter((s) => s.length === 68 && !s.subarray(32).equals(FROZEN)).length;
  const bins: Bins = {
    txID: hash32('tx'),
    version: 1,
    locktime: 0,
    fee: 100,
    sizeInBytes: 200,
    extendedSize: 250,
    isCoinbase: o.isCoinbase ?? false,
    conflicting: o.conflicting ?? false,
    locked: o.locked ?? false,
    utxos: utxos as BinValue[],
    recordUtxos: stored.length,
    spentUtxos: spent,
  };
  if (o.spendingHeight !== undefined) bins.spendingHeight = o.spendingHeight;
  if (o.creating) bins.creating = true;
  if (o.deleting) bins.deleting = true;
  if (o.preserveUntil !== undefined) bins.preserveUntil = o.preserveUntil;
  if (o.deleteAtHeight !== undefined) bins.deleteAtHeight = o.deleteAtHeight;
  if (o.master !== false) {
    const blockIDs = o.blockIDs ?? [1];
    bins.totalUtxos = utxos.length;
    bins.totalExtraRecs = o.totalExtraRecs ?? 0;
    bins.spentExtraRecs = o.spentExtraRecs ?? 0;
    bins.blockIDs = blockIDs;
    bins.blockHeights = blockIDs.map(() => H - 5);
    bins.subtreeIdxs = blockIDs.map(() => 0);
    const unmined = o.unminedSince === undefined ? (blockIDs.length === 0 ? H - 10 : null) : o.unminedSince;
    if (unmined !== null) bins.unminedSince = unmined;
    bins.createdAt = 1_700_000_000_000;
    bins.external = o.external ?? false;
  }
  return { ...bins, ...(o.extra ?? {}) };
}

export interface Harness {
  engine: RecordEngine;
  /** runs a UDF of the module on `key` */
  call(key: Buffer, fn: string, ...args: BinValue[]): Promise<BinMap>;
  /** creates a record, returns its key */
  put(o?: RecordOptions, key?: Buffer): Promise<Buffer>;
  bins(key: Buffer): Promise<Bins>;
  generation(key: Buffer): Promise<number>;
}

/** One embedded engine per test file (`:memory:`), the module registered once. */
export function useEngine(): () => Harness {
  let harness: Harness | undefined;
  beforeAll(async () => {
    const engine = await openEmbeddedEngine({ path: ':memory:' });
    await engine.ensureModule(MODULE, SOURCE);
    harness = {
      engine,
      call: (key, fn, ...args) => engine.apply(key, { module: MODULE, fn, args }),
      put: async (o = {}, key = txid()) => {
        await engine.create(key, recordBins(o));
        return key;
      },
      bins: async (key) => {
        const rec = await engine.get(key);
        if (!rec) throw new Error(`record ${key.toString('hex')} not found`);
        return rec.bins;
      },
      generation: async (key) => {
        const rec = await engine.get(key);
        if (!rec) throw new Error(`record ${key.toString('hex')} not found`);
        return rec.generation;
      },
    };
  });
  afterAll(async () => {
    await harness?.engine.close();
  });
  return () => {
    if (!harness) throw new Error('engine not open');
    return harness;
  };
}

/** spendMulti item */
export function item(offset: number, utxoHash: Buffer, spendingData: Buffer): BinMap {
  return { offset, utxoHash, spendingData };
}

/** spendMulti arguments after the spends: ignoreConflicting, ignoreLocked, height, retention */
export function spendArgs(spends: BinMap[], o: { ic?: boolean; il?: boolean; h?: number; r?: number } = {}) {
  return [spends, o.ic ?? false, o.il ?? false, o.h ?? H, o.r ?? R] as BinValue[];
}

/** The bins that describe a record's UTXO state (slots and counters). */
export function slotState(bins: Bins): Bins {
  return { utxos: bins.utxos, spentUtxos: bins.spentUtxos, recordUtxos: bins.recordUtxos };
}
