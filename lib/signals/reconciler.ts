/**
 * The reconciler (DESIGN section 7): state-based, so duplicated and reordered signals converge. For a signal's
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
  settings: Pick<StoreSettings, 'blockHeightRetention'>;
  /** registered UDF module name (store.moduleName) */
  moduleName: string;
  getTip: () => Promise<number>;
}

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
  constructor(private readonly options: ReconcilerOptions) {}

  async handle(signal: Signal): Promise<void> {
    const txid = txidToBytes(signal.txid, 'txid');
    const height = Number.isInteger(signal.height) ? signal.height : await this.options.getTip();
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

  private async reconcile(txidHex: string, txid: Buffer, height: number): Promise<void> {
    const { engine } = this.options;
    const R = this.options.settings.blockHeightRetention;
    const master = await engine.get(masterKey(txid));
    if (!master) return;
    const extra = toInt(master.bins[BIN.totalExtraRecs]) ?? 0;
    const pageKeys: Buffer[] = [];
    for (let n = 1; n <= extra; n++) pageKeys.push(paginationKey(txid, n));
    const pages =
      pageKeys.length > 0
        ? await engine.batchGet(pageKeys, [
            BIN.creating,
            BIN.recordUtxos,
            BIN.spentUtxos,
            BIN.reassignments,
            BIN.deleteAtHeight,
          ])
        : [];
    const allExist = pages.every((p) => p !== null);

    // 1. an unfinished multi-record create whose records all exist
    if (allExist) {
      for (let n = 0; n < pages.length; n++) {
        if (pages[n]?.bins[BIN.creating]) await this.udf(pageKeys[n], 'clearCreating', [height, R]);
      }
      if (master.bins[BIN.creating]) await this.udf(masterKey(txid), 'clearCreating', [height, R]);
    }

    // 2. spentExtraRecs from the pagination records' own state (re-runs the master's DAH rule)
    if (extra > 0 && allExist) {
      const spent = pages.filter((p) => p && pageFullySpent(p.bins)).length;
      await this.udf(masterKey(txid), 'setSpentExtraRecs', [spent, height, R]);
    }

    // 3. pagination records and blob follow the master's deleteAtHeight
    const now = await engine.get(masterKey(txid), [BIN.deleteAtHeight, BIN.external]);
    if (!now) return;
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
  }
}
