/**
 * Marking txs on or off the longest chain (Teranode's MarkTransactionsOnLongestChain): a reorg moves txs on and off
 * the longest chain while their blocks stay known, so only `unminedSince` changes (set to H when off, unless already
 * set; removed when on, for a tx in at least one block); the UDF re-runs the DAH rule. One engine batch per call.
 */
import { boolArg, txidListArg } from './args';
import type { StoreContext } from './context';
import { callOnMastersAndSignal } from './signals';

/** TX_NOT_FOUND (the first missing txid) after every other tx was changed. */
export async function setOnLongestChain(
  ctx: StoreContext,
  txidsValue: unknown,
  onLongestChain: unknown,
): Promise<void> {
  const txids = txidListArg(txidsValue, 'txids');
  await callOnMastersAndSignal(ctx, txids, 'setLongestChain', [boolArg(onLongestChain, 'onLongestChain')]);
}
