/**
 * The two-phase delete of docs/cleanup.md, step 5. Phase 1 marks the records `deleting` with generation checks
 * (a record changed since it was read is kept and re-evaluated next pass); from then on the UDF module refuses
 * spends and unspends of them. Phase 2 records the tx in each parent's `deletedChildren`, deletes the blobs, the
 * pagination records and the master last, so that a pass dying at any step leaves a marked master that the next
 * pass finishes.
 */
import type { BlobStore } from '../blob/port';
import { EngineError, type Bins, type EngineRecord, type RecordEngine } from '../engine/port';
import { BIN } from '../domain/bins';
import { extraRecordCount } from './candidates';
import {
  isNullOutpoint,
  keyOfRecord,
  outpointsOfInputsBin,
  outpointsOfTx,
  txidHex,
  type Outpoint,
} from './record-facts';

export interface DeleteDeps {
  engine: RecordEngine;
  blobs: BlobStore;
  moduleName: string;
  utxoBatchSize: number;
}

export class CleanupDeleteError extends Error {
  constructor(
    readonly txid: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`cleanup of ${txid}: ${message}`, options);
    this.name = 'CleanupDeleteError';
  }
}

function isGenerationMismatch(err: unknown): boolean {
  return err instanceof EngineError && (err.code === 'GENERATION_MISMATCH' || err.code === 'RECORD_NOT_FOUND');
}

/**
 * Marks the master first (its mark commits the delete and keeps its DAH, so a pass dying at any later step leaves a
 * marked master that the next pass finds and finishes), then the pagination records, each with a generation check.
 * Returns 'changed' when any record changed since it was read: its marks are undone (pagination records first, the
 * master last, so that no pagination record stays marked under an unmarked master).
 */
export async function markDeleting(
  engine: RecordEngine,
  master: EngineRecord,
  pages: readonly EngineRecord[],
): Promise<'marked' | 'changed'> {
  try {
    await engine.update(master.key, { [BIN.deleting]: true }, { generation: master.generation });
  } catch (err) {
    if (isGenerationMismatch(err)) return 'changed';
    throw err;
  }
  const result = await markPages(engine, pages);
  if (result === 'marked') return 'marked';
  await abandonDelete(engine, master.key, result.marked);
  if (result.error !== undefined) throw result.error;
  return 'changed';
}

/** Marks pagination records with generation checks; on failure, which ones were marked and the error (if not a change). */
export async function markPages(
  engine: RecordEngine,
  pages: readonly EngineRecord[],
): Promise<'marked' | { marked: EngineRecord[]; error?: unknown }> {
  const marked: EngineRecord[] = [];
  for (const page of pages) {
    try {
      await engine.update(page.key, { [BIN.deleting]: true }, { generation: page.generation });
      marked.push(page);
    } catch (err) {
      return isGenerationMismatch(err) ? { marked } : { marked, error: err };
    }
  }
  return 'marked';
}

/**
 * Gives up a started delete: unmarks the pagination records, then the master. When unmarking a pagination record
 * fails the master stays marked, so that no pagination record is left marked under an unmarked master (which no pass
 * would find once the master lost its DAH); the next pass re-evaluates the marked master. The master's DAH is left
 * as it is (the DAH bin is only a trigger: cleanup re-checks the records).
 */
export async function abandonDelete(
  engine: RecordEngine,
  masterKey: Buffer,
  pages: readonly EngineRecord[],
): Promise<void> {
  try {
    await unmark(
      engine,
      pages.map((p) => p.key),
    );
    await unmark(engine, [masterKey]);
  } catch {
    // the master stays marked: the next pass re-evaluates it
  }
}

async function unmark(engine: RecordEngine, keys: readonly Buffer[]): Promise<void> {
  for (const key of keys) {
    try {
      await engine.update(key, { [BIN.deleting]: null });
    } catch (err) {
      if (!(err instanceof EngineError && err.code === 'RECORD_NOT_FOUND')) throw err;
    }
  }
}

/** Removes `deleting` marks from pagination records of a tx that is kept (left there by a pass that died). */
export async function clearStaleMarks(engine: RecordEngine, pages: readonly (EngineRecord | null)[]): Promise<void> {
  await unmark(
    engine,
    pages.flatMap((p) => (p !== null && p.bins[BIN.deleting] === true ? [p.key] : [])),
  );
}

async function ownInputs(deps: DeleteDeps, txid: Buffer, hex: string, bins: Bins): Promise<Outpoint[] | null> {
  if (bins[BIN.isCoinbase] === true) return [];
  const inputs = bins[BIN.inputs];
  if (inputs !== undefined && inputs !== null) {
    const outpoints = outpointsOfInputsBin(inputs);
    if (outpoints === null) throw new CleanupDeleteError(hex, 'the inputs bin does not parse');
    return outpoints;
  }
  if (bins[BIN.external] === true) {
    const tx = await deps.blobs.get(hex, 'tx');
    // blob already deleted: a previous pass got past the deletedChildren step
    if (tx === null) return null;
    const outpoints = outpointsOfTx(tx);
    if (outpoints === null) throw new CleanupDeleteError(hex, 'the .tx blob does not parse');
    return outpoints;
  }
  // a tx without inputs (no-input tx): no parent to update
  void txid;
  return [];
}

/** Phase 2: parents' deletedChildren, blobs, pagination records, master last. */
export async function finishDelete(deps: DeleteDeps, master: EngineRecord): Promise<void> {
  const txid = master.key;
  const hex = txidHex(txid);
  const bins = master.bins;

  const outpoints = (await ownInputs(deps, txid, hex, bins)) ?? [];
  const parentKeys = new Map<string, Buffer>();
  for (const o of outpoints) {
    if (isNullOutpoint(o)) continue;
    const key = keyOfRecord(o.txid, Math.floor(o.vout / deps.utxoBatchSize));
    parentKeys.set(key.toString('hex'), key);
  }
  if (parentKeys.size > 0) {
    const keys = [...parentKeys.values()];
    const results = await deps.engine.batchApply(
      keys.map((key) => ({ key, module: deps.moduleName, fn: 'setDeletedChild', args: [hex] })),
    );
    results.forEach((r, i) => {
      // a missing parent is fine: it was cleaned up already
      if (!r.ok && r.error.code !== 'RECORD_NOT_FOUND') {
        throw new CleanupDeleteError(hex, `setDeletedChild on ${keys[i].toString('hex')}: ${r.error.message}`, {
          cause: r.error,
        });
      }
      if (r.ok && r.result.status !== 'OK' && r.result.errorCode !== 'TX_NOT_FOUND') {
        throw new CleanupDeleteError(hex, `setDeletedChild: ${String(r.result.errorCode)} ${String(r.result.message)}`);
      }
    });
  }

  if (bins[BIN.external] === true) {
    await deps.blobs.delete(hex, 'tx');
    await deps.blobs.delete(hex, 'outputs');
  }

  const extra = extraRecordCount(bins);
  for (let n = 1; n <= extra; n++) await deps.engine.remove(keyOfRecord(txid, n));
  await deps.engine.remove(txid);
}
