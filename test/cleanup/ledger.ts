/**
 * A minimal stand-in for the UTXO store over MemoryEngine: create (master + pagination records, `inputs` bin or an
 * external `.tx` blob), spend, unspend, setMined / unsetMined and the DAH rule of DESIGN section 5, all through
 * engine.update so that generations move as in the real store. Spends and unspends of a record marked `deleting`
 * are refused with DELETING.
 */
import { createHash } from 'crypto';
import type { Bins } from '../../lib/engine/port';
import { keyOfRecord, txidBytes, txidHex } from '../../lib/cleanup/record-facts';
import type { MemoryBlobs, MemoryEngine } from './fakes';

export interface Outpoint {
  txid: string;
  vout: number;
}

export class LedgerError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

let counter = 0;
export function newTxid(): string {
  counter++;
  return createHash('sha256').update(`tx${counter}`).digest().toString('hex');
}

function varint(n: number): Buffer {
  return n < 0xfd ? Buffer.from([n]) : Buffer.from([0xfd, n & 0xff, n >> 8]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

/** The `inputs` bin as the store writes it: one serialized EF input per list element. */
function efInputs(inputs: Outpoint[]): Buffer[] {
  return inputs.map((i) =>
    Buffer.concat([
      txidBytes(i.txid),
      u32(i.vout),
      varint(1),
      Buffer.from([0x51]),
      u32(0xffffffff),
      Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]),
      varint(1),
      Buffer.from([0x51]),
    ]),
  );
}

function efTx(inputs: Outpoint[]): Buffer {
  return Buffer.concat([
    u32(1),
    Buffer.from('0000000000ef', 'hex'),
    varint(inputs.length),
    ...efInputs(inputs),
    varint(0),
    u32(0),
  ]);
}

function utxoHash(txid: string, vout: number): Buffer {
  return createHash('sha256').update(`${txid}:${vout}`).digest();
}

export class Ledger {
  constructor(
    readonly engine: MemoryEngine,
    readonly blobs: MemoryBlobs,
    readonly B: number,
    readonly R: number,
  ) {
    engine.onExpirePreserve = (key, tip) => {
      void this.rerunDah(txidHex(key.subarray(0, 32)), tip);
    };
  }

  private recordCount(outputs: number): number {
    return Math.max(1, Math.ceil(outputs / this.B));
  }

  async create(
    txid: string,
    outputs: number,
    inputs: Outpoint[],
    options: { external?: boolean; conflicting?: boolean; height?: number } = {},
  ): Promise<void> {
    const id = txidBytes(txid);
    const n = this.recordCount(outputs);
    if (options.external) await this.blobs.put(txid, 'tx', efTx(inputs));
    for (let r = 1; r < n; r++) {
      const utxos = [];
      for (let v = r * this.B; v < Math.min(outputs, (r + 1) * this.B); v++) utxos.push(utxoHash(txid, v));
      await this.engine.create(keyOfRecord(id, r), { txID: id, utxos, recordUtxos: utxos.length, spentUtxos: 0 });
    }
    const utxos = [];
    for (let v = 0; v < Math.min(outputs, this.B); v++) utxos.push(utxoHash(txid, v));
    const bins: Bins = {
      txID: id,
      utxos,
      recordUtxos: utxos.length,
      spentUtxos: 0,
      totalUtxos: outputs,
      totalExtraRecs: n - 1,
      spentExtraRecs: 0,
      blockIDs: [],
      blockHeights: [],
      subtreeIdxs: [],
      unminedSince: options.height ?? 1,
    };
    if (options.external) bins.external = true;
    else bins.inputs = efInputs(inputs);
    if (options.conflicting) bins.conflicting = true;
    await this.engine.create(id, bins);
    if (options.conflicting) await this.rerunDah(txid, options.height ?? 1);
  }

  private key(o: Outpoint): Buffer {
    return keyOfRecord(txidBytes(o.txid), Math.floor(o.vout / this.B));
  }

  /** Spends every input for the child (all-or-nothing is not modelled: tests spend valid outputs). */
  async spend(child: string, inputs: Outpoint[], height: number): Promise<void> {
    for (const [vin, o] of inputs.entries()) {
      const rec = await this.engine.get(this.key(o));
      if (!rec) throw new LedgerError('TX_NOT_FOUND');
      if (rec.bins.deleting === true) throw new LedgerError('DELETING');
      const utxos = rec.bins.utxos as Buffer[];
      const slot = utxos[o.vout % this.B];
      if (slot.length !== 32) throw new LedgerError('SPENT');
      utxos[o.vout % this.B] = Buffer.concat([slot, txidBytes(child), u32(vin)]);
      await this.engine.update(this.key(o), { utxos, spentUtxos: (rec.bins.spentUtxos as number) + 1 });
      await this.rerunDah(o.txid, height);
    }
  }

  async unspend(child: string, inputs: Outpoint[], height: number): Promise<void> {
    for (const o of inputs) {
      const rec = await this.engine.get(this.key(o));
      if (!rec) continue;
      if (rec.bins.deleting === true) throw new LedgerError('DELETING');
      const utxos = rec.bins.utxos as Buffer[];
      const slot = utxos[o.vout % this.B];
      if (slot.length !== 68 || !slot.subarray(32, 64).equals(txidBytes(child))) continue;
      utxos[o.vout % this.B] = slot.subarray(0, 32);
      await this.engine.update(this.key(o), { utxos, spentUtxos: (rec.bins.spentUtxos as number) - 1 });
      await this.rerunDah(o.txid, height);
    }
  }

  async setMined(txid: string, blockId: number, blockHeight: number): Promise<void> {
    const rec = await this.engine.get(txidBytes(txid));
    if (!rec) throw new LedgerError('TX_NOT_FOUND');
    const ids = rec.bins.blockIDs as number[];
    if (ids.includes(blockId)) return;
    await this.engine.update(txidBytes(txid), {
      blockIDs: [...ids, blockId],
      blockHeights: [...(rec.bins.blockHeights as number[]), blockHeight],
      subtreeIdxs: [...(rec.bins.subtreeIdxs as number[]), 0],
      unminedSince: null,
    });
    await this.rerunDah(txid, blockHeight);
  }

  async unsetMined(txid: string, blockId: number, height: number): Promise<void> {
    const rec = await this.engine.get(txidBytes(txid));
    if (!rec) return;
    const ids = rec.bins.blockIDs as number[];
    const at = ids.indexOf(blockId);
    if (at < 0) return;
    const keep = (l: unknown) => (l as number[]).filter((_, i) => i !== at);
    const blockIDs = keep(ids);
    await this.engine.update(txidBytes(txid), {
      blockIDs,
      blockHeights: keep(rec.bins.blockHeights),
      subtreeIdxs: keep(rec.bins.subtreeIdxs),
      unminedSince: blockIDs.length === 0 ? height : null,
    });
    await this.rerunDah(txid, height);
  }

  async preserve(txid: string, until: number): Promise<void> {
    await this.engine.update(txidBytes(txid), { preserveUntil: until, deleteAtHeight: null });
  }

  /** The DAH rule on the master; pagination records get the master's DAH as the reconciler would set it. */
  async rerunDah(txid: string, height: number): Promise<void> {
    const id = txidBytes(txid);
    const master = await this.engine.get(id);
    if (!master || this.R === 0) return;
    const b = master.bins;
    if (b.preserveUntil !== undefined) return;
    let dah: number | null;
    const existing = typeof b.deleteAtHeight === 'number' ? b.deleteAtHeight : null;
    if (b.conflicting === true) {
      dah = existing ?? height + this.R;
    } else {
      let allSpent = true;
      for (let r = 0; r <= (b.totalExtraRecs as number); r++) {
        const rec = r === 0 ? master : await this.engine.get(keyOfRecord(id, r));
        if (!rec || (rec.bins.utxos as Buffer[]).some((s) => s.length !== 68)) allSpent = false;
      }
      const mined = (b.blockIDs as number[]).length > 0 && b.unminedSince === undefined;
      dah = allSpent && mined ? Math.max(existing ?? 0, height + this.R) : null;
    }
    if (dah === existing) return;
    await this.engine.update(id, { deleteAtHeight: dah });
    for (let r = 1; r <= (b.totalExtraRecs as number); r++) {
      if (this.engine.records.has(keyOfRecord(id, r).toString('hex'))) {
        await this.engine.update(keyOfRecord(id, r), { deleteAtHeight: dah });
      }
    }
  }

  exists(txid: string): boolean {
    return this.engine.records.has(txidBytes(txid).toString('hex'));
  }

  /** Any record, pagination record or blob of the tx left. */
  leftovers(txid: string): string[] {
    const prefix = txidBytes(txid).toString('hex');
    const out = [...this.engine.records.keys()].filter((k) => k.startsWith(prefix));
    for (const k of this.blobs.blobs.keys()) if (k.startsWith(txid)) out.push(k);
    return out;
  }
}
