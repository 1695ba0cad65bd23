/**
 * Spend step 5: each input's outcome from its record's answer. An input is spent by this call, kept (already spent
 * by the same spender, or its parent is gone but the spending tx is stored), failed with the UDF's code, or in doubt
 * (the record's answer was lost). Record-level TX_NOT_FOUND answers are refined with one batch read each of the
 * parents' masters and of the spenders.
 */
import type { UdfResponse } from '../domain/udf';
import type { StoreContext } from './context';
import { txidsStanding, txidsStored } from './record-reads';
import type { SignalBuffer } from './signals';
import { spenderOf, type ResolvedSpend } from './spend-items';
import { fail, inputOf, outcomeOf, type RecordGroup, type TxSpend } from './spend-state';
import { udfError, type UdfOutcome } from './udf-call';

/**
 * A record whose answer was lost may have been written, and the signal its UDF raised (a page fully spent, a DAH set)
 * is lost with the answer; a retry finds nothing to change and raises none. The reconciler is state-based: ask it to
 * look at the tx (ALLSPENT for a pagination record, DAHSET for a master).
 */
export function followUp(
  signals: SignalBuffer,
  item: ResolvedSpend,
  height: number,
  page: 'ALLSPENT' | 'NOTALLSPENT' = 'ALLSPENT',
): void {
  signals.add(item.txid, item.recordNumber > 0 ? page : 'DAHSET', height);
}

interface RecordError {
  group: RecordGroup;
  response: UdfResponse;
}

export async function judgeOutcomes(
  ctx: StoreContext,
  txs: TxSpend[],
  groups: RecordGroup[],
  answers: UdfOutcome[],
  height: number,
  signals: SignalBuffer,
): Promise<void> {
  const recordErrors: RecordError[] = [];
  groups.forEach((group, g) => {
    const answer = answers[g];
    if (!answer.ok) {
      for (const ref of group.refs) {
        fail(outcomeOf(txs, ref), answer.error.code, answer.error.message);
        (txs[ref.tx].inDoubt ??= []).push(ref.item);
      }
      followUp(signals, group.first, height);
      return;
    }
    const response = answer.response;
    signals.addFrom(group.first.txid, response, height);
    // no Set for a record that answers no unchanged input (most of them)
    const unchanged = response.unchanged?.length ? new Set(response.unchanged) : undefined;
    // a replay (inputs already spent by this spender): the earlier call's ALLSPENT may not have been sent, and the
    // master's spentExtraRecs depends on it (a master's own DAH follows its own state; only pages are followed up)
    if (unchanged && group.first.recordNumber > 0) followUp(signals, group.first, height);
    if (response.status !== 'OK' && !response.errors) {
      recordErrors.push({ group, response }); // nothing was written to this record
      return;
    }
    group.refs.forEach((ref, position) => {
      const itemError = response.errors?.[String(position)];
      if (!itemError) {
        if (!unchanged?.has(position)) (txs[ref.tx].spent ??= []).push(ref.item);
        return;
      }
      const o = outcomeOf(txs, ref);
      fail(o, itemError.errorCode, itemError.message);
      if (itemError.spendingData) Object.assign(o, spenderOf(itemError.spendingData));
    });
  });
  if (recordErrors.length > 0) await judgeRecordErrors(ctx, txs, recordErrors);
}

/**
 * TX_NOT_FOUND from a pagination record of a standing tx: the output does not exist (UTXO_NOT_FOUND). TX_NOT_FOUND
 * of a missing parent: kept for an input whose spending tx is stored (it was accepted; its parent was deleted).
 * Any other record-level error fails the record's inputs with its code.
 */
async function judgeRecordErrors(ctx: StoreContext, txs: TxSpend[], errors: RecordError[]): Promise<void> {
  const notFound = errors.filter((e) => e.response.errorCode === 'TX_NOT_FOUND');
  const pageParents = new Map<string, Buffer>();
  const spenders = new Map<string, Buffer>();
  for (const { group } of notFound) {
    if (group.first.recordNumber > 0) pageParents.set(group.first.txid, group.first.txidBytes);
    for (const ref of group.refs) {
      const input = inputOf(txs, ref);
      spenders.set(input.spendingTxid, input.spendingTxidBytes);
    }
  }
  const standing = await txidsStanding(ctx, pageParents).catch((err: Error) => err);
  // an unknown answer counts as not stored: the input fails and can be retried
  const stored = await txidsStored(ctx, spenders).catch(() => new Set<string>());

  for (const { group, response } of errors) {
    const parent = group.first;
    if (response.errorCode === 'TX_NOT_FOUND' && parent.recordNumber > 0) {
      if (standing instanceof Error) {
        for (const ref of group.refs) fail(outcomeOf(txs, ref), 'STORAGE_ERROR', standing.message);
        continue;
      }
      if (standing.has(parent.txid)) {
        for (const ref of group.refs) {
          const input = inputOf(txs, ref);
          fail(outcomeOf(txs, ref), 'UTXO_NOT_FOUND', `output ${input.vout} of ${input.txid} does not exist`);
        }
        continue;
      }
    }
    const error = udfError(response, { txid: parent.txid });
    for (const ref of group.refs) {
      if (response.errorCode === 'TX_NOT_FOUND' && stored.has(inputOf(txs, ref).spendingTxid)) continue;
      fail(outcomeOf(txs, ref), error.code, error.message);
    }
  }
}
