/**
 * The state of one batched spend as it moves through its steps: per tx its resolved inputs and their outcomes, which
 * inputs this call wrote, which are in doubt (their record's answer was lost); per record the inputs it holds.
 */
import type { ItemOutcome, UtxoStoreError } from '../domain/errors';
import type { ResolvedSpend } from './spend-items';

export interface TxSpend {
  items: ResolvedSpend[];
  outcomes: ItemOutcome[];
  /** the tx failed before anything was written for it (bad input, a read failed, a record still being created) */
  error?: UtxoStoreError;
  /**
   * inputs this call wrote (not those an earlier call of the same spender wrote: a rollback keeps them); each input
   * is in one record's answer, so listed once (an array: no Set per tx of the batch)
   */
  spent: number[];
  /** inputs of records whose answer was lost: this call may have written them (each listed once, as `spent`) */
  inDoubt: number[];
}

/** Input `item` of tx `tx` of the batch. */
export interface InputRef {
  tx: number;
  item: number;
}

/** One record's inputs, in batch order (earlier txs first: of two txs spending one output, the earlier wins). */
export interface RecordGroup {
  key: Buffer;
  /** the first input: every input of the group has its parent txid and record number */
  first: ResolvedSpend;
  refs: InputRef[];
}

export interface SpendFlags {
  ignoreConflicting: boolean;
  ignoreLocked: boolean;
  /** H + 1, or blockHeight + 1 */
  height: number;
}

export function inputOf(txs: TxSpend[], ref: InputRef): ResolvedSpend {
  return txs[ref.tx].items[ref.item];
}

export function outcomeOf(txs: TxSpend[], ref: InputRef): ItemOutcome {
  return txs[ref.tx].outcomes[ref.item];
}

export function fail(o: ItemOutcome, code: ItemOutcome['code'], message: string): void {
  o.status = 'ERROR';
  o.code = code;
  o.message = message;
}

/** A tx still in play: resolved, and no input failed so far. */
export function isLive(tx: TxSpend): boolean {
  return tx.error === undefined;
}

export function hasFailed(tx: TxSpend): boolean {
  return tx.error !== undefined || tx.outcomes.some((o) => o.status === 'ERROR');
}
