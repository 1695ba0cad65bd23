/**
 * The conflict views of a tx (Teranode's GetCounterConflicting / GetConflictingChildren): the other txs that spend
 * one of the outputs it spends (read from its parents' slots), and the conflicting children registered in its
 * `conflictingCs`.
 */
import { BIN } from '../domain/bins';
import { TxNotFoundError } from '../domain/errors';
import { masterKey } from '../domain/keys';
import type { BinValue } from '../engine/port';
import { txidArg } from './args';
import type { StoreContext } from './context';
import { batchRead, loadTxs, readInputSlots, refOf } from './tx-graph';

/** Txids of the spenders, other than the tx itself, of the outputs the tx spends (first-seen order). */
export async function counterConflicting(ctx: StoreContext, txidValue: string): Promise<string[]> {
  const ref = refOf(txidArg(txidValue, 'txid'));
  const [tx] = await loadTxs(ctx, [ref]);
  if (!tx) throw new TxNotFoundError(ref.hex);
  const slots = await readInputSlots(ctx, tx.inputs);
  const spenders = new Set<string>();
  for (const s of slots) if (s.state === 'spent' && s.spender.hex !== ref.hex) spenders.add(s.spender.hex);
  return [...spenders];
}

/** Txids registered in the tx's `conflictingCs` (children created as conflicting). */
export async function conflictingChildren(ctx: StoreContext, txidValue: string): Promise<string[]> {
  const ref = refOf(txidArg(txidValue, 'txid'));
  const [master] = await batchRead(ctx, [masterKey(ref.bytes)], [BIN.conflictingCs, BIN.txID], 'the transaction');
  if (!master) throw new TxNotFoundError(ref.hex);
  const children = (master.bins[BIN.conflictingCs] as BinValue[] | undefined) ?? [];
  return children.filter((c): c is Buffer => Buffer.isBuffer(c) && c.length === 32).map((c) => refOf(c).hex);
}
