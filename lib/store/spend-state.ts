/**
 * The state of one batched spend as it moves through its steps: per tx its resolved inputs and their outcomes, which
 * inputs this call wrote, which are in doubt (their record's answer was lost); per record the inputs it holds.
 */
import type { ItemOutcome, UtxoStoreError } from '../domain/errors';
import { outcome, type ResolvedSpend } from './spend-items';

/**
 * A batch's state lives while its records are written, and every object of it that lives that long is copied by the
 * garbage collector: what most inputs never need (an OK outcome, the lists below) is made on first use.
 */
export interface TxSpend {
  items: ResolvedSpend[];
  /** an input's outcome once something other than OK happened to it (outcomeAt); a hole is OK (outcomesOf) */
  outcomes: ItemOutcome[];
  /** the tx failed before anything was written for it (bad input, a read failed, a record still being created) */
  error?: UtxoStoreError;
  /**
   * inputs this call wrote (not those an earlier call of the same spender wrote: a rollback keeps them); each input
   * is in one record's answer, so listed once (an array: no Set per tx of the batch); made with its first input
   */
  spent?: number[];
  /** inputs of records whose answer was lost: this call may have written them (each listed once, as `spent`) */
  inDoubt?: number[];
}

/** Input `item` of tx `tx` of the batch. */
export interface InputRef {
  tx: number;
  item: number;
}

/** One record's inputs, in batch order (earlier txs first: of two txs spending one output, the earlier wins). */
export interface RecordGroup {
  /** the record's key (recordKeyOf its first input) */
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
  return outcomeAt(txs[ref.tx], ref.item);
}

/** Input `i`'s outcome, made (OK) when first asked: to fail it, or to mark it rolled back. */
export function outcomeAt(tx: TxSpend, i: number): ItemOutcome {
  return (tx.outcomes[i] ??= outcome(tx.items[i], 'OK'));
}

/** Every input's outcome, in input order (the answer). */
export function outcomesOf(tx: TxSpend): ItemOutcome[] {
  return tx.items.map((item, i) => tx.outcomes[i] ?? outcome(item, 'OK'));
}

/** Whether input `i` has failed so far. */
export function inputFailed(tx: TxSpend, i: number): boolean {
  return tx.outcomes[i]?.status === 'ERROR';
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
  // `some` skips the holes (OK outcomes not made)
  return tx.error !== undefined || tx.outcomes.some((o) => o.status === 'ERROR');
}
