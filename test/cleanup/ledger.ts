/**
 * The cleanup tests' way of building histories on the embedded engine. Records are created directly (synthetic
 * txids and UTXO hashes, bins as in docs/records.md: the `inputs` bin is the list of serialized inputs, an external
 * tx has its EF bytes in a `.tx` blob), but every state change afterwards goes through the real UDF module
 * (lua/utxo.lua): spendMulti, unspend, setMined (unsetMined for reorgs), setConflicting, setLocked, preserveUntil,
 * setDeletedChild, at the given current block height and retention R. The signals the UDFs raise are handled by the
 * store's Reconciler, as the store's signal queue would (a pagination record's ALLSPENT / NOTALLSPENT updates the
 * master's spentExtraRecs and re-runs its DAH rule; pagination records and blobs follow the master's DAH).
 */
import { createHash } from 'crypto';
import type { BlobStore } from '../../lib/blob/port';
import type { BinMap, BinValue, Bins, RecordEngine } from '../../lib/engine/port';
import { BIN } from '../../lib/domain/bins';
import { encodeOutputsBlob } from '../../lib/domain/outputs-blob';
import { locateOutput, recordCount, recordKey } from '../../lib/domain/keys';
import { encodeSpendingData } from '../../lib/domain/spending-data';
import { unspentSlot } from '../../lib/domain/slots';
import { assembleTx, serializeInput, serializeOutput, type ParsedInput } from '../../lib/domain/tx';
import { txidToBytes } from '../../lib/domain/txid';
import type { UdfFunction } from '../../lib/domain/udf';
import { Reconciler } from '../../lib/signals/reconciler';
import type { SignalName, SignalQueue } from '../../lib/signals/port';

export interface Outpoint {
  txid: string;
  vout: number;
}

/** A UDF (or ledger-level) refusal: the UDF's errorCode. */
export class LedgerError extends Error {
  constructor(
    readonly code: string,
    message = code,
  ) {
    super(message);
  }
}

let counter = 0;
/** a fresh synthetic txid (display hex) */
export function newTxid(): string {
  counter++;
  return createHash('sha256').update(`tx${counter}`).digest().toString('hex');
}

function utxoHashOf(txid: string, vout: number): Buffer {
  return createHash('sha256').update(`${txid}:${vout}`).digest();
}

const LOCK = Buffer.from([0x51]);

/** An EF input spending `o` (OP_TRUE unlocking; the previous output as 1000 sat OP_TRUE, covering the outputs). */
function efInput(o: Outpoint): ParsedInput {
  return {
    prevTxid: txidToBytes(o.txid),
    prevTxidHex: o.txid,
    vout: o.vout,
    unlockingScript: LOCK,
    sequence: 0xffffffff,
    satoshis: 1000,
    lockingScript: LOCK,
  };
}

interface LedgerTx {
  id: Buffer;
  outputs: number;
  records: number;
}

export interface CreateOptions {
  external?: boolean;
  conflicting?: boolean;
  coinbase?: boolean;
  /** creation height (unminedSince; a conflicting tx's DAH is height + R) */
  height?: number;
}

export class Ledger {
  private readonly txs = new Map<string, LedgerTx>();
  private readonly reconciler: Reconciler;
  /** a signal queue that hands every signal to the reconciler at once (the store's local, in-process queue) */
  readonly queue: SignalQueue;

  constructor(
    readonly engine: RecordEngine,
    readonly blobs: BlobStore,
    readonly moduleName: string,
    readonly B: number,
    readonly R: number,
  ) {
    this.reconciler = new Reconciler({
      engine,
      blobs,
      moduleName,
      settings: { blockHeightRetention: R },
      getTip: async () => 0,
    });
    this.queue = {
      kind: 'ledger',
      send: async (signals) => {
        for (const s of signals) await this.reconciler.handle(s);
      },
      ping: async () => {},
    };
  }

  private tx(txid: string): LedgerTx {
    const t = this.txs.get(txid);
    if (!t) throw new LedgerError('TX_NOT_FOUND', `ledger does not know ${txid}`);
    return t;
  }

  /** Key of the record holding output `vout`, and its offset there. */
  locate(o: Outpoint): { key: Buffer; offset: number } {
    const { recordNumber, offset } = locateOutput(o.vout, this.B);
    return { key: recordKey(txidToBytes(o.txid), recordNumber), offset };
  }

  /** Every record key the tx was created with (master first). */
  keys(txid: string): Buffer[] {
    const t = this.tx(txid);
    return Array.from({ length: t.records }, (_, n) => recordKey(t.id, n));
  }

  async create(txid: string, outputs: number, inputs: Outpoint[], options: CreateOptions = {}): Promise<void> {
    const id = txidToBytes(txid);
    const height = options.height ?? 1;
    const count = recordCount(outputs, this.B);
    const slots = Array.from({ length: outputs }, (_, vout) => unspentSlot(utxoHashOf(txid, vout)));
    const common: Bins = { [BIN.txID]: id, [BIN.version]: 1, [BIN.locktime]: 0, [BIN.isCoinbase]: !!options.coinbase };
    if (options.coinbase) common[BIN.spendingHeight] = height + 100;
    const recordBins = (n: number): Bins => {
      const utxos = slots.slice(n * this.B, (n + 1) * this.B);
      return { ...common, [BIN.utxos]: utxos, [BIN.recordUtxos]: utxos.length, [BIN.spentUtxos]: 0 };
    };
    const efInputs = inputs.map(efInput);
    const outs = Array.from({ length: outputs }, () => serializeOutput({ satoshis: 1, lockingScript: LOCK }));
    const extended = !options.coinbase;
    if (options.external && inputs.length > 0) {
      const ef = assembleTx({
        version: 1,
        locktime: 0,
        inputs: efInputs.map((i) => serializeInput(i, extended)),
        outputs: outs,
        extended,
      });
      await this.blobs.put(txid, 'tx', ef);
    } else if (options.external) {
      // a tx without inputs keeps only its outputs (as the store writes it)
      const stored = Array.from({ length: outputs }, (_, index) => ({ index, satoshis: 1, lockingScript: LOCK }));
      await this.blobs.put(
        txid,
        'outputs',
        encodeOutputsBlob({ txid: id, height, isCoinbase: !!options.coinbase, outputs: stored }),
      );
    }
    for (let n = 1; n < count; n++) await this.engine.create(recordKey(id, n), recordBins(n));
    const master: Bins = {
      ...recordBins(0),
      [BIN.totalUtxos]: outputs,
      [BIN.totalExtraRecs]: count - 1,
      [BIN.spentExtraRecs]: 0,
      [BIN.blockIDs]: [],
      [BIN.blockHeights]: [],
      [BIN.subtreeIdxs]: [],
      [BIN.unminedSince]: height,
      [BIN.createdAt]: Date.now(),
      [BIN.external]: !!options.external,
    };
    if (!options.external) {
      master[BIN.inputs] = efInputs.map((i) => serializeInput(i, extended));
      master[BIN.outputs] = outs;
    }
    await this.engine.create(id, master);
    this.txs.set(txid, { id, outputs, records: count });
    if (options.conflicting) await this.setFlag(txid, 'setConflicting', true, height);
  }

  /** Runs one UDF; a status ERROR is thrown as LedgerError; the signal goes to the reconciler. */
  private async udf(txid: string, key: Buffer, fn: UdfFunction, args: BinValue[], height: number): Promise<BinMap> {
    const result = await this.engine.apply(key, { module: this.moduleName, fn, args });
    if (result.status !== 'OK') {
      throw new LedgerError(String(result.errorCode), `${fn} on ${txid}: ${String(result.message)}`);
    }
    await this.signal(txid, result, height);
    return result;
  }

  private async signal(txid: string, result: BinMap, height: number): Promise<void> {
    if (typeof result.signal === 'string') {
      await this.reconciler.handle({ txid, signal: result.signal as SignalName, height });
    }
  }

  /**
   * The child spends every input, one spendMulti per parent record (as the store does). All-or-nothing: when a
   * record refuses, what was spent is unspent again and the first error is thrown.
   */
  async spend(
    child: string,
    inputs: Outpoint[],
    height: number,
    options: { ignoreConflicting?: boolean; ignoreLocked?: boolean } = {},
  ): Promise<void> {
    const groups = new Map<string, { txid: string; key: Buffer; items: { o: Outpoint; vin: number }[] }>();
    inputs.forEach((o, vin) => {
      const { key } = this.locate(o);
      const g = groups.get(key.toString('hex')) ?? { txid: o.txid, key, items: [] };
      g.items.push({ o, vin });
      groups.set(key.toString('hex'), g);
    });
    const childId = txidToBytes(child);
    const done: { o: Outpoint; vin: number }[] = [];
    let failure: LedgerError | undefined;
    for (const g of groups.values()) {
      const spends = g.items.map(({ o, vin }) => ({
        offset: this.locate(o).offset,
        utxoHash: utxoHashOf(o.txid, o.vout),
        spendingData: encodeSpendingData(childId, vin),
      }));
      const result = await this.engine.apply(g.key, {
        module: this.moduleName,
        fn: 'spendMulti',
        args: [spends, !!options.ignoreConflicting, !!options.ignoreLocked, height, this.R],
      });
      await this.signal(g.txid, result, height);
      const errors = (result.errors ?? {}) as Record<string, BinMap>;
      g.items.forEach((item, i) => {
        if (result.status === 'OK' || (result.errors !== undefined && errors[String(i)] === undefined)) {
          done.push(item);
        }
      });
      if (result.status !== 'OK') {
        const first = Object.values(errors)[0];
        failure ??= new LedgerError(
          String(first?.errorCode ?? result.errorCode),
          String(first?.message ?? result.message),
        );
      }
    }
    if (failure) {
      await this.unspendItems(child, done, height);
      throw failure;
    }
  }

  /** Unspends the child's spends (no-op where the child is not the spender). */
  async unspend(child: string, inputs: Outpoint[], height: number): Promise<void> {
    await this.unspendItems(
      child,
      inputs.map((o, vin) => ({ o, vin })),
      height,
    );
  }

  private async unspendItems(child: string, items: { o: Outpoint; vin: number }[], height: number): Promise<void> {
    const childId = txidToBytes(child);
    for (const { o, vin } of items) {
      const { key, offset } = this.locate(o);
      const result = await this.engine.apply(key, {
        module: this.moduleName,
        fn: 'unspend',
        args: [offset, utxoHashOf(o.txid, o.vout), encodeSpendingData(childId, vin), height, this.R],
      });
      if (result.status !== 'OK') {
        if (result.errorCode === 'TX_NOT_FOUND') continue;
        throw new LedgerError(String(result.errorCode), `unspend of ${o.txid}:${o.vout}: ${String(result.message)}`);
      }
      await this.signal(o.txid, result, height);
    }
  }

  /** setMined on the longest chain, evaluated at `currentHeight` (default: the block's height). */
  async setMined(txid: string, blockId: number, blockHeight: number, currentHeight = blockHeight): Promise<void> {
    await this.udf(
      txid,
      txidToBytes(txid),
      'setMined',
      [blockId, blockHeight, 0, currentHeight, this.R, true, false],
      currentHeight,
    );
  }

  /** A reorg: the block is removed from the tx (unsetMined), evaluated at `height`. */
  async unsetMined(txid: string, blockId: number, height: number): Promise<void> {
    await this.udf(txid, txidToBytes(txid), 'setMined', [blockId, 0, 0, height, this.R, true, true], height);
  }

  /** setConflicting / setLocked on every record of the tx (pagination records first), as the store does. */
  async setFlag(txid: string, fn: 'setConflicting' | 'setLocked', value: boolean, height: number): Promise<void> {
    const [master, ...pages] = this.keys(txid);
    for (const key of [...pages, master]) await this.udf(txid, key, fn, [value, height, this.R], height);
  }

  async preserve(txid: string, until: number, height: number): Promise<void> {
    await this.udf(txid, txidToBytes(txid), 'preserveUntil', [until, height, this.R], height);
  }

  /** What cleanup records on the record that held an output of a deleted child (record `n` of `txid`). */
  async setDeletedChild(txid: string, n: number, child: string): Promise<void> {
    await this.udf(txid, recordKey(txidToBytes(txid), n), 'setDeletedChild', [child], 0);
  }

  async exists(txid: string): Promise<boolean> {
    return (await this.engine.get(txidToBytes(txid), [BIN.txID])) !== null;
  }

  /** Any record (master or pagination) or blob of the tx that is left, by key hex / blob name. */
  async leftovers(txid: string): Promise<string[]> {
    const keys = this.keys(txid);
    const records = await this.engine.batchGet(keys, [BIN.txID]);
    const out = keys.filter((_, i) => records[i] !== null).map((k) => k.toString('hex'));
    for (const kind of ['tx', 'outputs'] as const) if (await this.blobs.exists(txid, kind)) out.push(`${txid}.${kind}`);
    return out;
  }
}
