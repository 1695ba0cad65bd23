/**
 * Building the bins of a transaction's records (docs/records.md): the master (record 0) and the pagination
 * records 1..n-1, B outputs each.
 */
import type { BlobKind } from '../blob/port';
import type { BinValue, Bins } from '../engine/port';
import { BIN, type BinName } from '../domain/bins';
import { recordCount } from '../domain/keys';
import { encodeOutputsBlob } from '../domain/outputs-blob';
import { isStoredOutput } from '../domain/slots';
import { serializeInput, serializeOutput, type ParsedTx } from '../domain/tx';
import { utxoHash } from '../domain/utxo-hash';
import type { MinedBlock, StoreSettings } from './types';

export interface RecordOptions {
  /** creation height (H or the request's blockHeight) */
  height: number;
  isCoinbase: boolean;
  minedBlocks: MinedBlock[];
  locked: boolean;
  conflicting: boolean;
  createdAt: number;
  external: boolean;
}

/**
 * The height a coinbase's maturity counts from: the block it was mined in when the create says so (the lowest, if
 * several), else the creation height. Counting from the tip when the coinbase's block is already known would make it
 * spendable a block early (created before the tip moves) or late (backfilled).
 */
export function coinbaseHeight(options: Pick<RecordOptions, 'height' | 'minedBlocks'>): number {
  if (options.minedBlocks.length === 0) return options.height;
  return Math.min(...options.minedBlocks.map((b) => b.blockHeight));
}

export interface RecordPlan {
  external: boolean;
  /** [master, pagination 1, ..., pagination n-1] */
  records: Bins[];
  blob?: { kind: BlobKind; data: Buffer };
}

/** External when above the size limit, above B outputs, or when every tx is externalized. */
export function needsExternal(parsed: ParsedTx, settings: StoreSettings): boolean {
  return (
    settings.externalizeAll ||
    parsed.extendedSize > settings.maxTxSizeInStore ||
    parsed.outputs.length > settings.utxoBatchSize
  );
}

/** An unspent slot is the UTXO hash itself (utxoHash returns a fresh buffer: no copy). */
function slotsOf(parsed: ParsedTx): (Buffer | null)[] {
  return parsed.outputs.map((o, vout) => {
    const script = o.lockingScript; // a parsed output makes a new view each time it is asked
    return isStoredOutput(o.satoshis, script) ? utxoHash(parsed.txid, vout, script, o.satoshis) : null;
  });
}

/** The blob of an external tx: `.tx` (EF bytes, raw for a coinbase) or `.outputs` for a tx without inputs. */
export function blobOf(parsed: ParsedTx, height: number, isCoinbase: boolean): { kind: BlobKind; data: Buffer } {
  if (parsed.inputs.length > 0) return { kind: 'tx', data: parsed.ef ?? parsed.raw };
  const outputs = parsed.outputs
    .map((o, index) => ({ index, satoshis: o.satoshis, lockingScript: o.lockingScript }))
    .filter((o) => isStoredOutput(o.satoshis, o.lockingScript));
  return { kind: 'outputs', data: encodeOutputsBlob({ txid: parsed.txid, height, isCoinbase, outputs }) };
}

export function planRecords(parsed: ParsedTx, settings: StoreSettings, options: RecordOptions): RecordPlan {
  const B = settings.utxoBatchSize;
  const slots = slotsOf(parsed);
  const count = recordCount(parsed.outputs.length, B);
  const multi = count > 1;
  const R = settings.blockHeightRetention;
  // DAH rule for a conflicting tx: deletable R blocks after its creation
  const conflictingDah = options.conflicting && R > 0 ? options.height + R : undefined;

  // Each record's bins are one object literal with the bin names written out (BinName-checked), then the few bins
  // that depend on the tx: V8 keeps such an object in fast mode. Computed names ([BIN.x]) followed by keyed stores
  // turned every record into a dictionary-mode object (about 2 us a record to build and walk), and a spread from
  // shared common bins cost tens of microseconds.
  const coinbaseSpendingHeight = options.isCoinbase ? coinbaseHeight(options) + settings.coinbaseMaturity : undefined;
  const pages: Bins[] = [];
  for (let n = 1; n < count; n++) {
    const utxos = slots.slice(n * B, (n + 1) * B);
    const page = {
      txID: parsed.txid,
      version: parsed.version,
      locktime: parsed.locktime,
      fee: parsed.fee,
      sizeInBytes: parsed.sizeInBytes,
      extendedSize: parsed.extendedSize,
      isCoinbase: options.isCoinbase,
      conflicting: options.conflicting,
      locked: options.locked,
      utxos,
      recordUtxos: countStored(utxos),
      spentUtxos: 0,
    } satisfies Partial<Record<BinName, BinValue>>;
    pages.push(withConditional(page, coinbaseSpendingHeight, multi, conflictingDah));
  }
  // a pagination record without any slot is fully spent from the start
  let spentExtraRecs = 0;
  for (const p of pages) if (p[BIN.recordUtxos] === 0) spentExtraRecs++;
  const mined = options.minedBlocks;
  const utxos = multi ? slots.slice(0, B) : slots;
  const recordUtxos = countStored(utxos);
  const master: Bins = withConditional(
    {
      txID: parsed.txid,
      version: parsed.version,
      locktime: parsed.locktime,
      fee: parsed.fee,
      sizeInBytes: parsed.sizeInBytes,
      extendedSize: parsed.extendedSize,
      isCoinbase: options.isCoinbase,
      conflicting: options.conflicting,
      locked: options.locked,
      utxos,
      recordUtxos,
      spentUtxos: 0,
      totalUtxos: parsed.outputs.length,
      totalExtraRecs: count - 1,
      spentExtraRecs,
      blockIDs: mined.map((m) => m.blockId),
      blockHeights: mined.map((m) => m.blockHeight),
      subtreeIdxs: mined.map((m) => m.subtreeIdx),
      createdAt: options.createdAt,
      external: options.external,
    } satisfies Partial<Record<BinName, BinValue>>,
    coinbaseSpendingHeight,
    multi,
    conflictingDah,
  );
  if (mined.length === 0) master[BIN.unminedSince] = options.height;
  // DAH rule at creation: a mined single-record tx without a stored output is fully spent from the start, and no
  // later UDF call would run the rule on it
  const fullySpent = !multi && recordUtxos === 0;
  if (fullySpent && mined.length > 0 && !options.locked && !options.conflicting && R > 0) {
    master[BIN.deleteAtHeight] = options.height + R;
  }
  if (!options.external) {
    const extended = parsed.isExtended && !options.isCoinbase;
    // an input or output stored in the form it came in is its own bytes (a view of the tx): nothing to serialize
    const asParsed = extended === parsed.isExtended;
    master[BIN.inputs] = parsed.inputs.map(
      (i) => (asParsed ? i.wire : undefined) ?? serializeInput(i, extended),
    ) as BinValue[];
    master[BIN.outputs] = parsed.outputs.map((o) => o.wire ?? serializeOutput(o)) as BinValue[];
  }

  const plan: RecordPlan = { external: options.external, records: [master, ...pages] };
  if (options.external) plan.blob = blobOf(parsed, options.height, options.isCoinbase);
  return plan;
}

/** The bins only some records have (a module function: a closure per tx would be one more function object to build). */
function withConditional(
  bins: Bins,
  coinbaseSpendingHeight: number | undefined,
  multi: boolean,
  conflictingDah: number | undefined,
): Bins {
  if (coinbaseSpendingHeight !== undefined) bins[BIN.spendingHeight] = coinbaseSpendingHeight;
  if (multi) bins[BIN.creating] = true;
  if (conflictingDah !== undefined) bins[BIN.deleteAtHeight] = conflictingDah;
  return bins;
}

function countStored(slots: (Buffer | null)[]): number {
  let n = 0;
  for (const s of slots) if (s !== null) n++;
  return n;
}
