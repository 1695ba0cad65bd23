/**
 * Spend (docs/operations.md), batched: many spending txs, each all-or-nothing on its own. Read top-down:
 *   1. resolve each tx's inputs                      (spend-groups.ts: a bad tx fails alone)
 *   2. refuse inputs of txs still being created       (spend-groups.ts: one batch read)
 *   3. group every input of the batch per record      (spend-groups.ts)
 *   4. one spendMulti per record, in engine batches   (spend-apply.ts)
 *   5. judge each input's outcome                     (spend-judge.ts)
 *   6. roll back every tx with a failed input         (spend-rollback.ts: one batch)
 *   7. send the signals and settle each tx            (below)
 * The round trips of a batch do not grow with its size beyond the chunking: one tip read (in parallel with the first
 * batch read; it also bounds a caller's blockHeight to MAX_TIP_ADVANCE above the tip), at most two batch reads,
 * the spend batches, one rollback batch, one signal send. A single spend is the batch of one.
 *
 * The chain tip is read once per batch (never cached across requests): every tx of a batch is evaluated at the same
 * H + 1, as if the txs had arrived together. That is what a single spend does too (it reads H once and a setMined may
 * move H while it runs), so coinbase maturity can only be judged against a tip at most one batch old: a coinbase
 * that matures during the batch is refused COINBASE_IMMATURE and spendable on the next request, never accepted early (H
 * only rises between reads, unless an operator lowers it). DAH values set by the batch's UDFs are H + 1 + R from
 * the same read, at most the batch's duration behind the live tip: cleanup then keeps a tx at most that much longer,
 * never deletes it early.
 */
import { InvalidArgumentError, SpendFailedError, StorageError, type UtxoStoreError } from '../domain/errors';
import { judgeView, majorityOf, trackerOf, type GuardVerdict } from './ack-guard';
import { listArg, optionalBoolArg, optionalIntArg } from './args';
import { asItemError, unwrap, type ItemResult } from './batch';
import { heightOf, type StoreContext } from './context';
import { SignalBuffer } from './signals';
import { applySpends } from './spend-apply';
import { groupByRecord, refuseCreating, resolveTxs } from './spend-groups';
import { judgeOutcomes } from './spend-judge';
import { rollBackLosers } from './spend-rollback';
import { hasFailed, isLive, outcomesOf, type SpendFlags, type TxSpend } from './spend-state';
import type { SpendOptions, SpendRequest, SpendResult } from './types';

/**
 * Spends, with the acknowledgement guard (SPEND_ACK_GUARD, lib/store/ack-guard.ts; docs/decisions/0007): on a
 * replicated engine, a spend applied while a node outside the majority may still bring other writes back into a
 * merge (a node cut off, paused or orphaned, nodes disagreeing on the cluster) may be lost when the cluster heals,
 * while another side acknowledges a second spender. Such a spend is not acknowledged: every tx that succeeded answers
 * STORAGE_ERROR (in doubt, retry later; the retry of the same tx is idempotent: OK if its spend stood, SPENT if
 * another spender's did). It is not rolled back: a rollback is a write into the same cluster.
 *
 * The view is asked as soon as every answer an acknowledgement rests on is in (the spend writes, and the reads that
 * judge a record-level TX_NOT_FOUND: `judged` below), while the rollback of the losers and the signals are still
 * being sent: those writes touch only losers' inputs (never acknowledged) and the reconciler's queue, and a later
 * write of this request to a record is no different from another request's. A retry round (retryBlocked) writes
 * again and asks a view of its own after its answers; the verdict is that last view's, asked after every answer.
 */
export async function spendMany(
  ctx: StoreContext,
  requests: SpendRequest[],
  options: SpendOptions = {},
): Promise<ItemResult<SpendResult>[]> {
  const guard = ctx.settings.spendAckGuard ?? 'refuse';
  if (guard === 'off') return spendManyUnguarded(ctx, requests, options);
  // the key known before any write is sent: the view after the answers must name it (one cluster throughout)
  const tracker = guard === 'refuse' ? trackerOf(ctx.engine) : undefined;
  const before = tracker ? (tracker.knownKey() ?? (await tracker.keyBefore())) : undefined;
  let verdict: Promise<GuardVerdict | undefined> | undefined;
  const judged = () => {
    verdict = judge(ctx, guard, before);
    verdict.catch(() => undefined); // awaited below unless nothing succeeded or a retry round replaced it
  };
  const results = await spendManyUnguarded(ctx, requests, options, undefined, judged);
  if (!results.some(judgedByGuard)) return results;
  // every tx that can end OK was still standing when judged() ran; should one not have been (or only conflicts
  // stand), the view is asked now, after every answer
  const v = await (verdict ?? judge(ctx, guard, before));
  if (!v || v.ok) return results;
  const refused = results.filter(judgedByGuard).length;
  try {
    ctx.onSpendRefused?.({ reason: v.reason ?? 'unsettled', txs: refused, detail: v.detail });
  } catch {
    // an observer's failure (a metric not emitted) never changes the answer
  }
  return results.map((r): ItemResult<SpendResult> => {
    if (isSpentConflict(r)) {
      return {
        ok: false,
        error: new StorageError(
          `output found spent while the cluster was changing, not answered SPENT (in doubt: the spend found may be lost when the cluster heals; retry once it is stable); ${v.detail}`,
          { ...r.error.details, inDoubt: true, ackRefusal: v.reason ?? 'unsettled' },
        ),
      };
    }
    if (!r.ok) return r;
    const first = r.value.spends[0];
    return {
      ok: false,
      error: new StorageError(
        `spend applied while the cluster was changing, not acknowledged (in doubt: retry once the cluster is stable); ${v.detail}`,
        { txid: first?.txid, vout: first?.vout, inDoubt: true, ackRefusal: v.reason ?? 'unsettled' },
      ),
    };
  });
}

/**
 * A SPENT answer is judged like an acknowledgement: the spend it found may be one a returning node's copy takes back
 * in the merge (found on the partition harness: a paused node's queued rival spend won the merge after both spenders
 * had been answered SPENT), so while the guard refuses it is in doubt too.
 */
function isSpentConflict(r: ItemResult<SpendResult>): r is { ok: false; error: UtxoStoreError } {
  return !r.ok && r.error.code === 'SPENT';
}

function judgedByGuard(r: ItemResult<SpendResult>): boolean {
  return r.ok || isSpentConflict(r);
}

/** The guard's verdict on the cluster, asked now; undefined when the engine has no cluster. */
async function judge(
  ctx: StoreContext,
  guard: 'refuse' | 'settled',
  before: string | undefined,
): Promise<GuardVerdict | undefined> {
  if (guard === 'settled') {
    if (!ctx.engine.clusterState) return undefined;
    const state = await ctx.engine.clusterState(ctx.settings.clusterSize || undefined);
    return { ok: state.stable, detail: state.detail, ...(state.stable ? {} : { reason: 'unsettled' as const }) };
  }
  const tracker = trackerOf(ctx.engine);
  if (!tracker) return undefined;
  const view = await tracker.since(tracker.mark());
  return judgeView(view, majorityOf(ctx.settings.clusterSize), { ageMs: (key) => tracker.ageMs(key), before });
}

async function spendManyUnguarded(
  ctx: StoreContext,
  requests: SpendRequest[],
  options: SpendOptions = {},
  /** a retry's height: the batch's own, already bounded and read (no second tip read) */
  trusted?: { height: number },
  /** called once the outcomes are judged, if some tx may still succeed: the guard's view is asked then */
  judged?: () => void,
): Promise<ItemResult<SpendResult>[]> {
  const list = listArg<SpendRequest>(requests, 'txs');
  const ignoreConflicting = optionalBoolArg(options.ignoreConflicting, 'ignoreConflicting');
  const ignoreLocked = optionalBoolArg(options.ignoreLocked, 'ignoreLocked');
  const blockHeight = optionalIntArg(options.blockHeight, 'blockHeight');

  const txs = resolveTxs(ctx, list);
  if (!txs.some(isLive)) return settle(txs);
  let height: number;
  try {
    // the tip read (which also bounds a caller's blockHeight) and the creating check are independent: one round trip
    [height] = await Promise.all([trusted?.height ?? heightOf(ctx, blockHeight), refuseCreating(ctx, txs)]);
  } catch (err) {
    // the request's own blockHeight out of bounds: the whole request is refused (400 naming blockHeight)
    if (err instanceof InvalidArgumentError) throw err;
    // nothing was written yet: every tx fails with the read's error
    return settle(failAll(txs, asItemError(err)));
  }
  const flags: SpendFlags = { ignoreConflicting, ignoreLocked, height: height + 1 };
  const signals = new SignalBuffer();
  const groups = groupByRecord(txs);
  const answers = await applySpends(ctx, txs, groups, flags);
  await judgeOutcomes(ctx, txs, groups, answers, flags.height, signals);
  if (judged && txs.some((tx) => !tx.error && !hasFailed(tx))) judged();
  await rollBackLosers(ctx, txs, flags.height, signals);
  const results = settle(await sendSignals(ctx, txs, signals));
  return retryBlocked(ctx, list, txs, results, options, flags.height - 1, judged);
}

/**
 * A tx that lost an output only to an earlier tx of the batch that then failed as a whole (and gave the output
 * back) is tried again, with the others like it, as a batch of their own at the same height: the earlier tx still
 * wins when it stands, and a later one is not failed by a spend that was undone. Each round retries fewer txs.
 */
async function retryBlocked(
  ctx: StoreContext,
  requests: SpendRequest[],
  txs: TxSpend[],
  results: ItemResult<SpendResult>[],
  options: SpendOptions,
  height: number,
  judged?: () => void,
): Promise<ItemResult<SpendResult>[]> {
  const undone = new Set(
    txs.filter((tx, i) => !results[i].ok && tx.items.length > 0).map((tx) => tx.items[0].spendingTxid),
  );
  const blocked: number[] = [];
  txs.forEach((tx, i) => {
    if (results[i].ok || tx.error || tx.inDoubt) return;
    const errors = tx.outcomes.filter((o) => o.status === 'ERROR');
    const onlyLost = errors.every(
      (o) => o.code === 'SPENT' && o.spendingTxid !== undefined && undone.has(o.spendingTxid),
    );
    if (onlyLost) blocked.push(i);
  });
  if (blocked.length === 0 || blocked.length === txs.length) return results;
  const again = await spendManyUnguarded(
    ctx,
    blocked.map((i) => requests[i]),
    options,
    { height },
    judged,
  );
  blocked.forEach((i, n) => (results[i] = again[n]));
  return results;
}

export async function spend(ctx: StoreContext, request: SpendRequest, options?: SpendOptions): Promise<SpendResult> {
  const [result] = await spendMany(ctx, [request], options);
  return unwrap(result);
}

function failAll(txs: TxSpend[], error: UtxoStoreError): TxSpend[] {
  for (const tx of txs) tx.error ??= error;
  return txs;
}

/**
 * The state changes were applied; a failed send fails every tx that succeeded with a StorageError to retry (the
 * retry writes nothing and sends the signals). A failed tx's own error stands.
 */
async function sendSignals(ctx: StoreContext, txs: TxSpend[], signals: SignalBuffer): Promise<TxSpend[]> {
  try {
    await signals.flush(ctx);
  } catch (err) {
    for (const tx of txs) if (!hasFailed(tx)) tx.error = asItemError(err);
  }
  return txs;
}

function settle(txs: TxSpend[]): ItemResult<SpendResult>[] {
  return txs.map((tx): ItemResult<SpendResult> => {
    if (tx.error) return { ok: false, error: tx.error };
    const outcomes = outcomesOf(tx);
    // with no tx-level error, a tx has failed exactly when an input has
    const first = outcomes.find((o) => o.status === 'ERROR');
    if (!first) return { ok: true, value: { spends: outcomes } };
    return { ok: false, error: new SpendFailedError(first, outcomes) };
  });
}
