/**
 * The reconciler (docs/signals.md): state-based, so duplicated and reordered signals converge. For a signal's
 * txid it reads the master and its pagination records and makes everything agree with them:
 * - unfinished `creating` flags cleared once every record exists (pagination records first, master last);
 * - master `spentExtraRecs` = number of fully spent pagination records (setSpentExtraRecs re-runs the DAH rule);
 * - each pagination record's `deleteAtHeight` = the master's, or removed;
 * - the blob's delete-at-height tag = the master's, or removed.
 * A missing master means there is nothing to do.
 */
import type { BlobStore } from '../blob/port';
import type { BinMap, BinValue, EngineRecord, RecordEngine } from '../engine/port';
import { BIN } from '../domain/bins';
import { StorageError } from '../domain/errors';
import { masterKey, paginationKey } from '../domain/keys';
import { txidToBytes } from '../domain/txid';
import type { UdfFunction } from '../domain/udf';
import type { StoreSettings } from '../store/types';
import type { Signal, SignalHandler } from './port';

export interface ReconcilerOptions {
  engine: RecordEngine;
  blobs: BlobStore;
  settings: Pick<StoreSettings, 'blockHeightRetention'> & Partial<Pick<StoreSettings, 'maxTipAdvance'>>;
  /** registered UDF module name (store.moduleName) */
  moduleName: string;
  getTip: () => Promise<number>;
  /** clock for the tip's reuse window (default Date.now) */
  now?: () => number;
}

/** a tip read serves the signals handled within this window (an SQS batch), then is read again */
export const TIP_REUSE_MS = 1000;

/** passes before a tx whose records keep changing is left to the signal's retry */
const MAX_PASSES = 5;
const PAGE_BINS = [BIN.creating, BIN.recordUtxos, BIN.spentUtxos, BIN.reassignments, BIN.deleteAtHeight];

function toInt(v: BinValue | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/** A pagination record is fully spent when every slot it holds is spent and nothing was reassigned. */
export function pageFullySpent(bins: Record<string, BinValue>): boolean {
  const recordUtxos = toInt(bins[BIN.recordUtxos]) ?? 0;
  const spentUtxos = toInt(bins[BIN.spentUtxos]) ?? 0;
  const reassigned = Array.isArray(bins[BIN.reassignments]) && (bins[BIN.reassignments] as BinValue[]).length > 0;
  return spentUtxos >= recordUtxos && !reassigned;
}

export class Reconciler implements SignalHandler {
  private tipRead?: { at: number; tip: Promise<number> };

  constructor(private readonly options: ReconcilerOptions) {}

  /** The stored tip, read at most once per TIP_REUSE_MS (the tip only rises; a failed read is not kept). */
  private tip(): Promise<number> {
    const now = (this.options.now ?? Date.now)();
    if (this.tipRead && now - this.tipRead.at < TIP_REUSE_MS) return this.tipRead.tip;
    const tip = this.options.getTip();
    this.tipRead = { at: now, tip };
    tip.catch(() => (this.tipRead = undefined));
    return tip;
  }

  /**
   * The height the DAH rule re-runs at: the signal's own, clamped to [H, H + MAX_TIP_ADVANCE] of the stored tip H
   * (security review #10). A signal is not trusted to name a height: a forged one below H would set an earlier
   * delete-at-height on a record whose state qualifies, one far above H would keep it for ever. H itself is what a
   * signal without a height uses.
   */
  async heightFor(signal: Signal): Promise<number> {
    const tip = await this.tip();
    const own = Number.isInteger(signal.height) ? signal.height : tip;
    const max = this.options.settings.maxTipAdvance;
    return Math.min(Math.max(own, tip), max === undefined ? Number.MAX_SAFE_INTEGER : tip + max);
  }

  async handle(signal: Signal): Promise<void> {
    const txid = txidToBytes(signal.txid, 'txid');
    const height = await this.heightFor(signal);
    try {
      await this.reconcile(signal.txid, txid, height);
    } catch (err) {
      if (err instanceof StorageError) throw err;
      throw new StorageError(
        `reconciling ${signal.signal} of ${signal.txid} failed: ${(err as Error).message}`,
        {
          txid: signal.txid,
        },
        err,
      );
    }
  }

  private async udf(key: Buffer, fn: UdfFunction, args: BinValue[]): Promise<BinMap> {
    const result = await this.options.engine.apply(key, { module: this.options.moduleName, fn, args });
    if (result.status !== 'OK' && result.errorCode !== 'TX_NOT_FOUND') {
      throw new Error(`${fn}: ${String(result.errorCode)} ${String(result.message ?? '')}`);
    }
    return result;
  }

  /**
   * Passes until a read after this invocation's own writes finds the records agreeing: another invocation handling a
   * signal of the same tx at the same time may have written from an older read (SQS delivers concurrently).
   */
  private async reconcile(txidHex: string, txid: Buffer, height: number): Promise<void> {
    for (let pass = 1; pass <= MAX_PASSES; pass++) {
      if (await this.pass(txidHex, txid, height)) return;
    }
    throw new StorageError(`reconciling ${txidHex}: the records kept changing, retry`, { txid: txidHex });
  }

  private readPages(pageKeys: Buffer[]): Promise<(EngineRecord | null)[]> {
    if (pageKeys.length === 0) return Promise.resolve([]);
    return this.options.engine.batchGet(pageKeys, PAGE_BINS);
  }

  /** One reconciliation; true when the records read back afterwards agree with each other and with what it wrote. */
  private async pass(txidHex: string, txid: Buffer, height: number): Promise<boolean> {
    const { engine } = this.options;
    const R = this.options.settings.blockHeightRetention;
    const master = await engine.get(masterKey(txid));
    if (!master) return true;
    const extra = toInt(master.bins[BIN.totalExtraRecs]) ?? 0;
    const pageKeys: Buffer[] = [];
    for (let n = 1; n <= extra; n++) pageKeys.push(paginationKey(txid, n));
    const pages = await this.readPages(pageKeys);
    const allExist = pages.every((p) => p !== null);

    // 1. an unfinished multi-record create whose records all exist
    if (allExist) {
      for (let n = 0; n < pages.length; n++) {
        if (pages[n]?.bins[BIN.creating]) await this.udf(pageKeys[n], 'clearCreating', [height, R]);
      }
      if (master.bins[BIN.creating]) await this.udf(masterKey(txid), 'clearCreating', [height, R]);
    }

    // 2. spentExtraRecs from the pagination records' own state, then the master's DAH rule re-runs at the signal's
    // height (DAH = max over the signals: any order gives the same). The count is written only when it differs from
    // the master read with the pages, so that an invocation holding an older read of both does not write it back.
    if (extra > 0 && allExist) {
      const spent = pages.filter((p) => p && pageFullySpent(p.bins)).length;
      if (spent !== (toInt(master.bins[BIN.spentExtraRecs]) ?? 0)) {
        await this.udf(masterKey(txid), 'setSpentExtraRecs', [spent, height, R]);
      } else {
        await this.udf(masterKey(txid), 'rerunDah', [height, R]);
      }
    }

    // 3. pagination records and blob follow the master's deleteAtHeight
    const now = await engine.get(masterKey(txid), [BIN.deleteAtHeight, BIN.external]);
    if (!now) return true;
    const dah = toInt(now.bins[BIN.deleteAtHeight]) ?? null;
    for (let n = 0; n < pages.length; n++) {
      const page = pages[n] as EngineRecord | null;
      if (!page) continue;
      const pageDah = toInt(page.bins[BIN.deleteAtHeight]) ?? null;
      if (pageDah !== dah) {
        try {
          await engine.update(pageKeys[n], { [BIN.deleteAtHeight]: dah });
        } catch (err) {
          if ((err as { code?: string }).code !== 'RECORD_NOT_FOUND') throw err;
        }
      }
    }
    if (now.bins[BIN.external]) {
      const { blobs } = this.options;
      if (!(await blobs.setDeleteAtHeight(txidHex, 'tx', dah))) await blobs.setDeleteAtHeight(txidHex, 'outputs', dah);
    }

    // 4. read back: a concurrent invocation that wrote from an older read shows up here
    if (extra === 0) {
      const after = await engine.get(masterKey(txid), [BIN.deleteAtHeight]);
      return !after || (toInt(after.bins[BIN.deleteAtHeight]) ?? null) === dah;
    }
    const [after, pagesAfter] = await Promise.all([
      engine.get(masterKey(txid), [BIN.deleteAtHeight, BIN.spentExtraRecs]),
      this.readPages(pageKeys),
    ]);
    if (!after) return true;
    const dahAfter = toInt(after.bins[BIN.deleteAtHeight]) ?? null;
    if (dahAfter !== dah) return false;
    if (pagesAfter.some((p) => p !== null && (toInt(p.bins[BIN.deleteAtHeight]) ?? null) !== dah)) return false;
    if (!pagesAfter.every((p) => p !== null)) return true; // being deleted: nothing to count
    const spentAfter = pagesAfter.filter((p) => p && pageFullySpent(p.bins)).length;
    return (toInt(after.bins[BIN.spentExtraRecs]) ?? 0) === spentAfter;
  }
}
