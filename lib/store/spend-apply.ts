/**
 * Spend step 4: one spendMulti per record holding inputs of the batch, sent as engine batches of
 * ENGINE_BATCH_SIZE records. Within a record the UDF takes the inputs in order, so of two txs of the batch spending
 * one output the earlier one wins on every engine.
 */
import { encodeSpendItems } from '../domain/udf';
import { callUdfChunked } from './batch';
import type { StoreContext } from './context';
import { inputOf, type RecordGroup, type SpendFlags, type TxSpend } from './spend-state';
import type { UdfBatchItem, UdfOutcome } from './udf-call';

export function applySpends(
  ctx: StoreContext,
  txs: TxSpend[],
  groups: RecordGroup[],
  flags: SpendFlags,
): Promise<UdfOutcome[]> {
  return callUdfChunked(
    ctx,
    groups.map((g): UdfBatchItem => ({
      key: g.key,
      fn: 'spendMulti',
      args: [
        encodeSpendItems(g.refs.map((ref) => inputOf(txs, ref))),
        flags.ignoreConflicting,
        flags.ignoreLocked,
        flags.height,
        ctx.settings.blockHeightRetention,
      ],
    })),
  );
}
