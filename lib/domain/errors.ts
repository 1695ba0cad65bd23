/**
 * Typed errors with stable codes (docs/udf.md and docs/operations.md). The UDF module returns the same codes in its
 * `errorCode` fields; the store turns them into these classes; the HTTP layer maps codes to status codes.
 */
export const UDF_ERROR_CODES = [
  'TX_NOT_FOUND',
  'CREATING',
  'CONFLICTING',
  'LOCKED',
  'COINBASE_IMMATURE',
  'UTXOS_NOT_FOUND',
  'UTXO_NOT_FOUND',
  'UTXO_HASH_MISMATCH',
  'UTXO_INVALID_SIZE',
  'SPENT',
  'FROZEN',
  'ALREADY_FROZEN',
  'FROZEN_UNTIL',
  'UTXO_NOT_FROZEN',
  'INVALID_SPEND',
  'INVALID_PARAMETER',
  'DELETING',
] as const;
export type UdfErrorCode = (typeof UDF_ERROR_CODES)[number];

export const STORE_ERROR_CODES = [
  ...UDF_ERROR_CODES,
  'TX_EXISTS',
  'INVALID_ARGUMENT',
  'STORAGE_ERROR',
  'TOO_MANY_OUTPUTS',
  'TXS_TOO_LARGE',
] as const;
export type ErrorCode = (typeof STORE_ERROR_CODES)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (STORE_ERROR_CODES as readonly string[]).includes(value);
}

export interface ErrorDetails {
  /** display-hex txid of the record concerned */
  txid?: string;
  vout?: number;
  /** display-hex txid of the existing or offending spender */
  spendingTxid?: string;
  vin?: number;
  /** the invalid field for INVALID_ARGUMENT */
  field?: string;
  [extra: string]: unknown;
}

/** Base class: every error the store raises on purpose has a stable `code`. */
export class UtxoStoreError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }

  get txid(): string | undefined {
    return this.details.txid;
  }
  get vout(): number | undefined {
    return this.details.vout;
  }
  get spendingTxid(): string | undefined {
    return this.details.spendingTxid;
  }
}

/** Bad input: names the field and what was wrong. Nothing was changed. */
export class InvalidArgumentError extends UtxoStoreError {
  constructor(field: string, problem: string, details: ErrorDetails = {}) {
    super('INVALID_ARGUMENT', `${field}: ${problem}`, { ...details, field });
  }
}

export class TxNotFoundError extends UtxoStoreError {
  constructor(txid: string, message = `transaction ${txid} not found`) {
    super('TX_NOT_FOUND', message, { txid });
  }
}

export class TxExistsError extends UtxoStoreError {
  constructor(txid: string) {
    super('TX_EXISTS', `transaction ${txid} already exists`, { txid });
  }
}

/**
 * A read would list more outputs than MAX_GET_OUTPUTS in one answer (get with `utxos`): refused from the records'
 * totalUtxos, before any output is read or built. Ask for fewer txids, or read the outputs one by one.
 */
export class TooManyOutputsError extends UtxoStoreError {
  constructor(outputs: number, limit: number) {
    super(
      'TOO_MANY_OUTPUTS',
      `the answer would list ${outputs} outputs; at most ${limit} (MAX_GET_OUTPUTS) per request: ask for fewer ` +
        'txids, or read outputs with POST /v1/batch/utxos',
      { field: 'utxos', outputs, limit },
    );
  }
}

/**
 * A get with `tx` would answer more than MAX_GET_TX_BYTES of transactions (their hex is twice that): refused from the
 * records' sizes, before any blob is read or tx assembled. Ask for fewer txids.
 */
export class TxsTooLargeError extends UtxoStoreError {
  constructor(bytes: number, limit: number) {
    super(
      'TXS_TOO_LARGE',
      `the answer would hold ${bytes} bytes of transactions; at most ${limit} (MAX_GET_TX_BYTES) per request: ask ` +
        'for fewer txids',
      { field: 'tx', bytes, limit },
    );
  }
}

/** The storage layer (engine, blob store, queue) failed; the operation may be retried. */
export class StorageError extends UtxoStoreError {
  constructor(message: string, details: ErrorDetails = {}, cause?: unknown) {
    super('STORAGE_ERROR', message, details, { cause });
  }
}

/** A state conflict reported by the UDF module for a record or one UTXO (spent, frozen, locked, ...). */
export class UtxoStateError extends UtxoStoreError {
  constructor(code: UdfErrorCode, message: string, details: ErrorDetails = {}) {
    super(code, message, details);
  }
}

/** Per-item outcome of a multi-item operation that failed as a whole (e.g. a spend rolled back). */
export interface ItemOutcome {
  txid: string;
  vout: number;
  status: 'OK' | 'ERROR' | 'ROLLED_BACK';
  code?: ErrorCode;
  message?: string;
  spendingTxid?: string;
  vin?: number;
}

/** A spend that failed for at least one input; every input it had spent was rolled back. */
export class SpendFailedError extends UtxoStoreError {
  readonly outcomes: ItemOutcome[];
  constructor(first: ItemOutcome, outcomes: ItemOutcome[]) {
    super(first.code ?? 'STORAGE_ERROR', first.message ?? `spend of ${first.txid}:${first.vout} failed`, {
      txid: first.txid,
      vout: first.vout,
      spendingTxid: first.spendingTxid,
      vin: first.vin,
    });
    this.outcomes = outcomes;
  }
}
