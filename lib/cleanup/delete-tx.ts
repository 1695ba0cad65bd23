/**
 * The two-phase delete of docs/cleanup.md, step 5, for all the deletable candidates of a chunk at once: each step is
 * one engine batch across the chunk, not one call per tx. Phase 1 marks the records `deleting` with generation
 * checks (a record changed since it was read is kept and re-evaluated next pass); from then on the UDF module
 * refuses spends and unspends of them. Phase 2 records the txs in their parents' `deletedChildren`, deletes the
 * blobs, the pagination records and the masters last, so that a pass dying at any step leaves marked masters that
 * the next pass finishes. A tx whose step fails is left where it is (its master marked) and takes no further step.
 */
import type { BlobStore } from '../blob/port';
import { EngineError, type BatchApplyItem, type Bins, type EngineRecord, type RecordEngine } from '../engine/port';
import { BIN } from '../domain/bins';
import { mapLimited } from '../domain/concurrency';
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

/** Blob store calls (reads of `.tx` blobs, deletes) a chunk's delete runs at once. */
export const BLOB_CALLS_AT_ONCE = 16;

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

/** What marking a tx gave: all its records marked, one of them changed since it was read, or an engine error. */
export type MarkOutcome = 'marked' | 'changed' | { error: unknown };

/**
 * `markDeleting` (the UDF checks the generation each record was read at) on every record, in one batch; one
 * outcome per record. A record written or deleted since it was read is 'changed': its tx is kept, not failed.
 */
async function markAll(
  engine: RecordEngine,
  moduleName: string,
  records: readonly EngineRecord[],
): Promise<MarkOutcome[]> {
  const results = await engine.batchApply(
    records.map((r) => ({ key: r.key, module: moduleName, fn: 'markDeleting', args: [r.generation] })),
  );
  return results.map((r): MarkOutcome => {
    if (!r.ok) return { error: r.error };
    if (r.result.status === 'OK') return 'marked';
    if (r.result.errorCode === 'CHANGED' || r.result.errorCode === 'TX_NOT_FOUND') return 'changed';
    return {
      error: new EngineError('INVALID', `markDeleting: ${String(r.result.errorCode)} ${String(r.result.message)}`),
    };
  });
}

/**
 * Marks masters `deleting`, each with a generation check, in one batch. A master's mark commits its delete and keeps
 * its DAH, so a pass dying at any later step leaves a marked master that the next pass finds and finishes.
 */
export async function markMasters(
  engine: RecordEngine,
  moduleName: string,
  masters: readonly EngineRecord[],
): Promise<MarkOutcome[]> {
  if (masters.length === 0) return [];
  try {
    return await markAll(engine, moduleName, masters);
  } catch (err) {
    // some may be marked: the next pass finds them
    return masters.map(() => ({ error: err }));
  }
}

export interface PagesMarked {
  outcome: MarkOutcome;
  /** the tx's pagination records that may carry the mark now (all of them when the batch failed as a whole) */
  marked: EngineRecord[];
}

/** Marks the pagination records of many txs, each with a generation check, in one batch; one answer per tx. */
export async function markPages(
  engine: RecordEngine,
  moduleName: string,
  pagesOfTxs: readonly (readonly EngineRecord[])[],
): Promise<PagesMarked[]> {
  const pages = pagesOfTxs.flat();
  if (pages.length === 0) return pagesOfTxs.map(() => ({ outcome: 'marked', marked: [] }));
  let outcomes: MarkOutcome[];
  try {
    outcomes = await markAll(engine, moduleName, pages);
  } catch (err) {
    return pagesOfTxs.map((own) =>
      own.length === 0 ? { outcome: 'marked', marked: [] } : { outcome: { error: err }, marked: [...own] },
    );
  }
  let at = 0;
  return pagesOfTxs.map((own): PagesMarked => {
    const answers = outcomes.slice(at, at + own.length);
    at += own.length;
    const marked = own.filter((_, i) => answers[i] === 'marked');
    const failure = answers.find((o) => o !== 'marked' && o !== 'changed');
    if (failure !== undefined) return { outcome: failure, marked };
    return { outcome: marked.length === own.length ? 'marked' : 'changed', marked };
  });
}

/** A started delete to give up: the master's key and the pagination records that may carry the mark. */
export interface Abandoned {
  masterKey: Buffer;
  pages: readonly EngineRecord[];
}

/**
 * Gives up started deletes: unmarks their pagination records in one batch, then the masters in another. A master
 * one of whose pagination records could not be unmarked stays marked, so that no pagination record is left marked
 * under an unmarked master (which no pass would find once the master lost its DAH); the next pass re-evaluates the
 * marked master. The masters' DAH is left as it is (the DAH bin is only a trigger: cleanup re-checks the records).
 */
export async function abandonDeletes(engine: RecordEngine, txs: readonly Abandoned[]): Promise<void> {
  const pagesDone = await unmark(
    engine,
    txs.flatMap((t) => t.pages.map((p) => p.key)),
  );
  let at = 0;
  const masters: Buffer[] = [];
  for (const t of txs) {
    if (pagesDone.slice(at, at + t.pages.length).every(Boolean)) masters.push(t.masterKey);
    at += t.pages.length;
  }
  await unmark(engine, masters);
}

/** Removes the `deleting` mark of each key in one batch; whether each is unmarked (or gone). Never throws. */
async function unmark(engine: RecordEngine, keys: readonly Buffer[]): Promise<boolean[]> {
  if (keys.length === 0) return [];
  try {
    const results = await engine.batchUpdate(keys.map((key) => ({ key, bins: { [BIN.deleting]: null } })));
    return results.map((r) => r.ok || r.error.code === 'RECORD_NOT_FOUND');
  } catch {
    return keys.map(() => false);
  }
}

/** Removes `deleting` marks from pagination records of txs that are kept (left there by a pass that died). */
export async function clearStaleMarks(engine: RecordEngine, pages: readonly (EngineRecord | null)[]): Promise<void> {
  await unmark(
    engine,
    pages.flatMap((p) => (p !== null && p.bins[BIN.deleting] === true ? [p.key] : [])),
  );
}

/** What phase 2 did to one tx: deleted (its master removed), or the error that stopped it (its master stays marked). */
export type DeleteOutcome = { deleted: true } | { deleted: false; error: unknown };

/** A marked tx going through phase 2; `error` set once a step failed for it. */
interface Going {
  master: EngineRecord;
  hex: string;
  error?: unknown;
}

/**
 * Phase 2 for marked masters (every pagination record marked too), each step one batch across them: the parents'
 * deletedChildren, the blobs, the pagination records, the masters last. One outcome per master, in order.
 */
export async function finishDeletes(deps: DeleteDeps, masters: readonly EngineRecord[]): Promise<DeleteOutcome[]> {
  const txs: Going[] = masters.map((master) => ({ master, hex: txidHex(master.key) }));
  const parents = await parentKeysOf(deps, txs);
  await setDeletedChildren(deps, txs, parents);
  await deleteBlobs(deps, txs);
  await removeRecords(deps.engine, txs, (t) => pageKeys(t.master));
  await removeRecords(deps.engine, txs, (t) => [t.master.key]);
  return txs.map((t) => (t.error === undefined ? { deleted: true } : { deleted: false, error: t.error }));
}

function alive(txs: readonly Going[]): Going[] {
  return txs.filter((t) => t.error === undefined);
}

function pageKeys(master: EngineRecord): Buffer[] {
  const count = extraRecordCount(master.bins);
  const keys: Buffer[] = [];
  for (let n = 1; n <= count; n++) keys.push(keyOfRecord(master.key, n));
  return keys;
}

/**
 * The parent records (the ones holding the outputs each tx spent) of each tx, distinct per tx. Only an external tx
 * without an `inputs` bin needs a blob read (BLOB_CALLS_AT_ONCE at a time); the others are read from their bins.
 */
async function parentKeysOf(deps: DeleteDeps, txs: readonly Going[]): Promise<Buffer[][]> {
  const out: Buffer[][] = new Array<Buffer[]>(txs.length);
  const fromBlobs: number[] = [];
  txs.forEach((t, i) => {
    try {
      const known = inputsFromBins(t.hex, t.master.bins);
      if (known === undefined) fromBlobs.push(i);
      else out[i] = parentKeys(deps, known);
    } catch (err) {
      t.error = err;
      out[i] = [];
    }
  });
  await mapLimited(fromBlobs, BLOB_CALLS_AT_ONCE, async (i) => {
    const t = txs[i];
    try {
      out[i] = parentKeys(deps, (await inputsFromBlob(deps, t.hex)) ?? []);
    } catch (err) {
      t.error = err;
      out[i] = [];
    }
  });
  return out;
}

function parentKeys(deps: DeleteDeps, outpoints: readonly Outpoint[]): Buffer[] {
  if (outpoints.length === 0) return [];
  const keys = new Map<string, Buffer>();
  for (const o of outpoints) {
    if (isNullOutpoint(o)) continue;
    const key = keyOfRecord(o.txid, Math.floor(o.vout / deps.utxoBatchSize));
    keys.set(key.toString('hex'), key);
  }
  return [...keys.values()];
}

/** The outpoints a tx spent as its bins tell them; undefined when only its `.tx` blob can (an external tx). */
function inputsFromBins(hex: string, bins: Bins): Outpoint[] | undefined {
  if (bins[BIN.isCoinbase] === true) return [];
  const inputs = bins[BIN.inputs];
  if (inputs !== undefined && inputs !== null) {
    const outpoints = outpointsOfInputsBin(inputs);
    if (outpoints === null) throw new CleanupDeleteError(hex, 'the inputs bin does not parse');
    return outpoints;
  }
  if (bins[BIN.external] === true) return undefined;
  // a tx without inputs (no-input tx): no parent to update
  return [];
}

/** The outpoints of an external tx from its `.tx` blob; null when the blob is gone already. */
async function inputsFromBlob(deps: DeleteDeps, hex: string): Promise<Outpoint[] | null> {
  const tx = await deps.blobs.get(hex, 'tx');
  // blob already deleted: a previous pass got past the deletedChildren step
  if (tx === null) return null;
  const outpoints = outpointsOfTx(tx);
  if (outpoints === null) throw new CleanupDeleteError(hex, 'the .tx blob does not parse');
  return outpoints;
}

/**
 * setDeletedChild on every parent record of every tx, in rounds: one batchApply per round, no key twice in a round
 * (the UDF takes one child; a parent with several children in the chunk gets one per round). A tx whose call fails
 * takes no further round.
 */
async function setDeletedChildren(
  deps: DeleteDeps,
  txs: readonly Going[],
  parents: readonly Buffer[][],
): Promise<void> {
  let pending = txs.flatMap((tx, i) => parents[i].map((key) => ({ tx, key })));
  while (pending.length > 0) {
    const round: { tx: Going; key: Buffer }[] = [];
    const later: { tx: Going; key: Buffer }[] = [];
    const inRound = new Set<string>();
    for (const p of pending) {
      if (p.tx.error !== undefined) continue;
      const id = p.key.toString('hex');
      if (inRound.has(id)) later.push(p);
      else {
        inRound.add(id);
        round.push(p);
      }
    }
    await setDeletedChildRound(deps, round);
    pending = later;
  }
}

async function setDeletedChildRound(deps: DeleteDeps, round: readonly { tx: Going; key: Buffer }[]): Promise<void> {
  if (round.length === 0) return;
  const items: BatchApplyItem[] = round.map(({ tx, key }) => ({
    key,
    module: deps.moduleName,
    fn: 'setDeletedChild',
    args: [tx.hex],
  }));
  let results;
  try {
    results = await deps.engine.batchApply(items);
  } catch (err) {
    for (const { tx } of round) tx.error ??= err;
    return;
  }
  results.forEach((r, i) => {
    const { tx, key } = round[i];
    // a missing parent is fine: it was cleaned up already
    if (!r.ok && r.error.code !== 'RECORD_NOT_FOUND') {
      tx.error ??= new CleanupDeleteError(tx.hex, `setDeletedChild on ${key.toString('hex')}: ${r.error.message}`, {
        cause: r.error,
      });
    } else if (r.ok && r.result.status !== 'OK' && r.result.errorCode !== 'TX_NOT_FOUND') {
      tx.error ??= new CleanupDeleteError(
        tx.hex,
        `setDeletedChild: ${String(r.result.errorCode)} ${String(r.result.message)}`,
      );
    }
  });
}

/** The `.tx` and `.outputs` blobs of the external txs, BLOB_CALLS_AT_ONCE txs at a time. */
async function deleteBlobs(deps: DeleteDeps, txs: readonly Going[]): Promise<void> {
  const external = alive(txs).filter((t) => t.master.bins[BIN.external] === true);
  await mapLimited(external, BLOB_CALLS_AT_ONCE, async (t) => {
    try {
      await deps.blobs.delete(t.hex, 'tx');
      await deps.blobs.delete(t.hex, 'outputs');
    } catch (err) {
      t.error = err;
    }
  });
}

/** One batchRemove of the records `keysOf` names for every tx still going; a failed remove stops its tx. */
async function removeRecords(
  engine: RecordEngine,
  txs: readonly Going[],
  keysOf: (t: Going) => Buffer[],
): Promise<void> {
  const items = alive(txs).flatMap((tx) => keysOf(tx).map((key) => ({ tx, key })));
  if (items.length === 0) return;
  let results;
  try {
    results = await engine.batchRemove(items.map(({ key }) => ({ key })));
  } catch (err) {
    for (const { tx } of items) tx.error ??= err;
    return;
  }
  results.forEach((r, i) => {
    if (!r.ok) items[i].tx.error ??= r.error;
  });
}
