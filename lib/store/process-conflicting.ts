/**
 * Double-spend resolution (Teranode's ProcessConflicting): the given txs (winners) are in a new longest chain and
 * currently marked conflicting; each becomes the spender of its inputs and the txs it displaces (losers) and all their
 * descendants become conflicting.
 *
 * Steps, each idempotent, in this order:
 *   1. read the winners and the parent outputs they spend; losers = the other spenders of those outputs (together
 *      with the losers an interrupted earlier run recorded); write the intent record: losers and the parents this
 *      operation locks (the winners' and losers' parents that are not locked already)
 *   2. mark the losers and all their descendants conflicting
 *   3. lock those parents (no spend without ignoreLocked takes an output the losers free)
 *   4. one batch: replaceSpend on every winner input (the loser's spend moves to the winner in one atomic step, so a
 *      contested output is never unspent and no third tx can take it), unspend (expected spender) on every loser
 *      input that no winner spends
 *   5. clear the winners' conflicting flag
 *   6. unlock the parents locked in step 3
 *   7. mark the intent done (it stays, with a TTL, so that the same call again answers the same losers)
 * A crash after any step leaves the intent record: the same call again resumes from it and ends in the state of an
 * uninterrupted run. The intent record is keyed by the sorted winners.
 */
import { createHash } from 'crypto';
import { BIN } from '../domain/bins';
import { InvalidArgumentError, TxNotFoundError, UtxoStateError } from '../domain/errors';
import { conflictIntentKey, locateOutput, masterKey, recordKey } from '../domain/keys';
import { encodeSpendingData } from '../domain/spending-data';
import type { EngineRecord } from '../engine/port';
import { setConflicting, setLocked } from './admin';
import { txidListArg } from './args';
import type { StoreContext } from './context';
import { SignalBuffer } from './signals';
import type { ProcessConflictingResult } from './types';
import {
  batchRead,
  descendantsOf,
  loadTxs,
  readInputSlots,
  refOf,
  type GraphTx,
  type TxInput,
  type TxRef,
} from './tx-graph';
import { callUdfBatch, isEngineError, storageError, udfError, type UdfBatchItem } from './udf-call';

/** Seconds an intent record is kept after it was last written. */
export const CONFLICT_INTENT_TTL_SECONDS = 7 * 24 * 3600;

interface Intent {
  losers: TxRef[];
  lockedParents: TxRef[];
  done: boolean;
  generation: number;
}

function pack(refs: TxRef[]): Buffer {
  return Buffer.concat(refs.map((r) => r.bytes));
}

function unpack(value: unknown): TxRef[] {
  if (!Buffer.isBuffer(value)) return [];
  const refs: TxRef[] = [];
  for (let i = 0; i + 32 <= value.length; i += 32) refs.push(refOf(Buffer.from(value.subarray(i, i + 32))));
  return refs;
}

function union(a: TxRef[], b: TxRef[]): TxRef[] {
  const all = new Map<string, TxRef>();
  for (const r of [...a, ...b]) all.set(r.hex, r);
  return [...all.values()];
}

function intentKeyOf(winners: TxRef[]): Buffer {
  const digest = createHash('sha256');
  for (const w of [...winners].sort((x, y) => x.hex.localeCompare(y.hex))) digest.update(w.bytes);
  return conflictIntentKey(digest.digest());
}

async function readIntent(ctx: StoreContext, key: Buffer): Promise<Intent | null> {
  let record: EngineRecord | null;
  try {
    record = await ctx.engine.get(key);
  } catch (err) {
    throw storageError('reading the conflict intent failed', err);
  }
  if (!record) return null;
  return {
    losers: unpack(record.bins.losers),
    lockedParents: unpack(record.bins.lockedParents),
    done: record.bins.done === true || record.bins.done === 1,
    generation: record.generation,
  };
}

async function writeIntent(
  ctx: StoreContext,
  key: Buffer,
  intent: Omit<Intent, 'generation'>,
  existing: Intent | null,
) {
  const bins = { losers: pack(intent.losers), lockedParents: pack(intent.lockedParents), done: intent.done ? 1 : 0 };
  try {
    if (existing) await ctx.engine.update(key, bins, { ttl: CONFLICT_INTENT_TTL_SECONDS });
    else await ctx.engine.create(key, bins, { ttl: CONFLICT_INTENT_TTL_SECONDS });
  } catch (err) {
    if (isEngineError(err, 'RECORD_EXISTS')) {
      throw storageError('writing the conflict intent failed', new Error('another run of the same call is under way'));
    }
    throw storageError('writing the conflict intent failed', err);
  }
}

export async function processConflicting(ctx: StoreContext, txidsValue: unknown): Promise<ProcessConflictingResult> {
  const winnerRefs = txidListArg(txidsValue, 'txids');
  const key = intentKeyOf(winnerRefs);
  const winnerSet = new Set(winnerRefs.map((w) => w.hex));

  // 1. winners, losers, intent
  const winners = await loadTxs(ctx, winnerRefs);
  winners.forEach((w, i) => {
    if (!w) throw new TxNotFoundError(winnerRefs[i].hex);
  });
  const stored = winners as GraphTx[];
  let intent = await readIntent(ctx, key);
  const anyConflicting = stored.some((w) => w.conflicting);
  if (intent?.done && !anyConflicting) return answer(ctx, intent.losers, winnerSet);
  if (intent?.done) intent = { ...intent, losers: [], lockedParents: [], done: false };
  if (!intent) {
    const i = stored.findIndex((w) => !w.conflicting);
    if (i >= 0) {
      throw new InvalidArgumentError(`txids[${i}]`, `${stored[i].ref.hex} is not marked conflicting`);
    }
  }

  const winnerInputs = stored.flatMap((w) => w.inputs.map((input) => ({ winner: w, input })));
  const winnerSlots = await readInputSlots(
    ctx,
    winnerInputs.map((x) => x.input),
  );
  const current: TxRef[] = [];
  winnerSlots.forEach((slot, n) => {
    const { winner, input } = winnerInputs[n];
    if (slot.state === 'frozen') {
      throw new UtxoStateError('FROZEN', `output ${input.vout} of ${input.parent.hex} is frozen`, {
        txid: input.parent.hex,
        vout: input.vout,
      });
    }
    if (slot.state === 'missing') {
      throw new UtxoStateError(
        'UTXO_NOT_FOUND',
        `output ${input.vout} of ${input.parent.hex} (spent by ${winner.ref.hex}) is not stored`,
        {
          txid: input.parent.hex,
          vout: input.vout,
        },
      );
    }
    if (slot.state === 'spent' && !winnerSet.has(slot.spender.hex)) current.push(slot.spender);
  });
  const losers = union(intent?.losers ?? [], current).filter((l) => !winnerSet.has(l.hex));
  const loserTxs = (await loadTxs(ctx, losers)).filter((l): l is GraphTx => l !== null);
  const loserInputs = loserTxs.flatMap((l) => l.inputs.map((input) => ({ loser: l, input })));

  const parents = union(
    winnerInputs.map((x) => x.input.parent),
    loserInputs.map((x) => x.input.parent),
  ).filter((p) => !winnerSet.has(p.hex));
  const parentMasters = await batchRead(
    ctx,
    parents.map((p) => masterKey(p.bytes)),
    [BIN.locked, BIN.totalExtraRecs],
    'the parent transactions',
  );
  const ours = new Set((intent?.lockedParents ?? []).map((p) => p.hex));
  // a parent locked before this operation (by someone else) stays locked; one this operation locked is unlocked
  const lockedParents = parents.filter(
    (p, i) => parentMasters[i] && (ours.has(p.hex) || !parentMasters[i]!.bins[BIN.locked]),
  );
  await writeIntent(ctx, key, { losers, lockedParents, done: false }, intent);

  // 2. losers and their descendants conflicting
  const descendants = await descendantsOf(ctx, losers, winnerSet);
  const marked = [...loserTxs.map((l) => l.ref), ...descendants];
  const markedTxids = marked.map((m) => m.hex);
  if (markedTxids.length > 0) await setConflicting(ctx, markedTxids, true);

  // 3. lock the parents
  const parentTxids = lockedParents.map((p) => p.hex);
  if (parentTxids.length > 0) await setLocked(ctx, parentTxids, true);

  // 4. move the contested outputs to the winners, free the losers' other inputs
  await moveSpends(ctx, winnerInputs, winnerSlots, loserInputs, winnerSet);

  // 5. the winners are no longer conflicting
  await setConflicting(ctx, [...winnerSet], false);

  // 6. release the parents
  if (parentTxids.length > 0) await setLocked(ctx, parentTxids, false);

  // 7. done (an update: the intent record was written in step 1)
  const written: Intent = { losers, lockedParents, done: false, generation: 0 };
  await writeIntent(ctx, key, { losers, lockedParents, done: true }, written);
  return { losingTxids: losers.map((l) => l.hex), markedConflicting: markedTxids };
}

/** The answer of a finished run, read again: its losers and their (current) descendants. */
async function answer(ctx: StoreContext, losers: TxRef[], winners: Set<string>): Promise<ProcessConflictingResult> {
  const existing = (await loadTxs(ctx, losers)).filter((l): l is GraphTx => l !== null).map((l) => l.ref);
  const descendants = await descendantsOf(ctx, losers, winners);
  return {
    losingTxids: losers.map((l) => l.hex),
    markedConflicting: [...existing, ...descendants].map((m) => m.hex),
  };
}

async function moveSpends(
  ctx: StoreContext,
  winnerInputs: { winner: GraphTx; input: TxInput }[],
  winnerSlots: Awaited<ReturnType<typeof readInputSlots>>,
  loserInputs: { loser: GraphTx; input: TxInput }[],
  winners: Set<string>,
): Promise<void> {
  const B = ctx.settings.utxoBatchSize;
  const height = await ctx.tip();
  const R = ctx.settings.blockHeightRetention;
  const contested = new Set(winnerInputs.map((x) => `${x.input.parent.hex}:${x.input.vout}`));
  const calls: (UdfBatchItem & { txid: string; vout: number })[] = [];
  const place = (input: TxInput) => {
    const { recordNumber, offset } = locateOutput(input.vout, B);
    return { key: recordKey(input.parent.bytes, recordNumber), offset, txid: input.parent.hex, vout: input.vout };
  };
  winnerInputs.forEach(({ winner, input }, n) => {
    const slot = winnerSlots[n];
    const data = encodeSpendingData(winner.ref.bytes, input.vin);
    // expected: the loser holding the output when it was read (a retry finds the winner there: a no-op)
    const expected = slot.state === 'spent' && !winners.has(slot.spender.hex) ? slot.spendingData : data;
    const p = place(input);
    calls.push({ ...p, fn: 'replaceSpend', args: [p.offset, input.utxoHash, data, expected, height, R] });
  });
  for (const { loser, input } of loserInputs) {
    if (contested.has(`${input.parent.hex}:${input.vout}`)) continue;
    const p = place(input);
    const data = encodeSpendingData(loser.ref.bytes, input.vin);
    calls.push({ ...p, fn: 'unspend', args: [p.offset, input.utxoHash, data, height, R] });
  }
  const results = await callUdfBatch(ctx, calls);
  const signals = new SignalBuffer();
  let firstError: Error | undefined;
  results.forEach((r, i) => {
    const call = calls[i];
    if (!r.ok) firstError ??= r.error;
    else if (r.response.status === 'OK') signals.addFrom(call.txid, r.response, height);
    // a loser's parent that is gone has nothing to free
    else if (!(call.fn === 'unspend' && r.response.errorCode === 'TX_NOT_FOUND')) {
      firstError ??= udfError(r.response, { txid: call.txid, vout: call.vout });
    }
  });
  await signals.flush(ctx);
  if (firstError) throw firstError;
}
