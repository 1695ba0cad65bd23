/**
 * Typed errors of the client. Every error code the API answers (the store's codes and the HTTP layer's, both generated from the
 * server's lists) is an ApiError whose `code` discriminates its `details`; a family of codes also has
 * its own class (ConflictError for the state conflicts, NotFoundError, ...) for `instanceof`. Answers that are not
 * the API's envelope (API Gateway's 429 and 403, a 502 from a failed Lambda, an unhandled function error) get client
 * codes. A failure to reach the service at all is a TransportError, which says whether the request may have been sent.
 */
import type { HttpErrorCode, StoreErrorCode as ErrorCode } from './generated/api-types.js';

/** Codes the client gives to answers that are not the API's error envelope. */
export type ClientErrorCode =
  'THROTTLED' | 'FORBIDDEN' | 'BAD_GATEWAY' | 'GATEWAY_TIMEOUT' | 'FUNCTION_ERROR' | 'UNEXPECTED_RESPONSE';

export type ApiErrorCode = ErrorCode | HttpErrorCode | ClientErrorCode;

/** One input of a failed spend, as the server lists them in details.spends. */
export interface SpendInputOutcome {
  txid: string;
  vout: number;
  status: 'OK' | 'ERROR' | 'ROLLED_BACK';
  code?: string;
  message?: string;
  /** the existing spender of this output */
  spendingTxid?: string;
  vin?: number;
}

/** Details of a state conflict on an output or a tx (SPENT, FROZEN, LOCKED, ...). */
export interface ConflictDetails {
  txid?: string;
  vout?: number;
  /** the existing (or offending) spender */
  spendingTxid?: string;
  vin?: number;
  /** a failed spend: every input with its outcome (all or nothing: the others were rolled back) */
  spends?: SpendInputOutcome[];
  /** a failed freeze / unfreeze: every output with its outcome */
  utxos?: unknown[];
  [extra: string]: unknown;
}

type StateConflictCode = Exclude<
  ErrorCode,
  | 'TX_NOT_FOUND'
  | 'UTXO_NOT_FOUND'
  | 'UTXOS_NOT_FOUND'
  | 'TX_EXISTS'
  | 'INVALID_ARGUMENT'
  | 'INVALID_PARAMETER'
  | 'STORAGE_ERROR'
  | 'UTXO_INVALID_SIZE'
  | 'FIELD_NOT_ALLOWED'
  | 'TOO_MANY_OUTPUTS'
  | 'TXS_TOO_LARGE'
>;

/** The details each code carries. */
export type ErrorDetailsOf<C extends ApiErrorCode> = C extends 'INVALID_ARGUMENT' | 'INVALID_PARAMETER'
  ? { field?: string; in?: string; issues?: { field: string; message: string }[]; [extra: string]: unknown }
  : C extends 'TX_NOT_FOUND' | 'UTXO_NOT_FOUND' | 'UTXOS_NOT_FOUND'
    ? ConflictDetails
    : C extends 'TX_EXISTS'
      ? { txid?: string; [extra: string]: unknown }
      : C extends StateConflictCode
        ? ConflictDetails
        : C extends 'RESPONSE_TOO_LARGE'
          ? { bytes?: number; limit?: number; [extra: string]: unknown }
          : C extends 'TOO_MANY_OUTPUTS'
            ? { outputs?: number; limit?: number; [extra: string]: unknown }
            : C extends 'METHOD_NOT_ALLOWED'
              ? { allow?: string[]; [extra: string]: unknown }
              : C extends 'BAD_FRAME'
                ? { offset?: number; item?: number; [extra: string]: unknown }
                : Record<string, unknown>;

/** An error answer of the API (or of API Gateway / Lambda in front of it). */
export class ApiError<C extends ApiErrorCode = ApiErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    /** HTTP status (for direct invocation: the statusCode of the function's answer) */
    readonly status: number,
    readonly details: ErrorDetailsOf<C>,
    /** the operation that failed */
    readonly operation?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  get txid(): string | undefined {
    return (this.details as { txid?: string }).txid;
  }
  get vout(): number | undefined {
    return (this.details as { vout?: number }).vout;
  }
  /** the existing (or offending) spender of a conflict */
  get spendingTxid(): string | undefined {
    return (this.details as { spendingTxid?: string }).spendingTxid;
  }
}

/**
 * 400: the request was malformed; details.field names the field (BAD_FRAME: a binary batch body, details.offset the
 * byte and details.item the item). Nothing was changed.
 */
export class InvalidArgumentError extends ApiError<'INVALID_ARGUMENT' | 'INVALID_PARAMETER' | 'BAD_FRAME'> {
  get field(): string | undefined {
    return (this.details as { field?: string }).field;
  }
}
/** 404: the tx (or an output) does not exist. */
export class NotFoundError extends ApiError<
  'TX_NOT_FOUND' | 'UTXO_NOT_FOUND' | 'UTXOS_NOT_FOUND' | 'ROUTE_NOT_FOUND'
> {}
/** 409 TX_EXISTS: a create of a tx that is stored (also the answer of a retried create that had succeeded). */
export class TxExistsError extends ApiError<'TX_EXISTS'> {}
/** 409: a state conflict (SPENT, FROZEN, LOCKED, CONFLICTING, CREATING, COINBASE_IMMATURE, ...). */
export class ConflictError extends ApiError<StateConflictCode> {
  /** the inputs of a failed spend with their outcomes */
  get spends(): SpendInputOutcome[] | undefined {
    return this.details.spends;
  }
}
/**
 * 413: the request (PAYLOAD_TOO_LARGE) or its answer (RESPONSE_TOO_LARGE) is over Lambda's 6 MB, or a get with utxos
 * would list more than MAX_GET_OUTPUTS outputs (TOO_MANY_OUTPUTS: ask for fewer txids, or read outputs with getUtxo),
 * or a get with tx more than MAX_GET_TX_BYTES of txs (TXS_TOO_LARGE: ask for fewer txids).
 */
export class PayloadTooLargeError extends ApiError<
  'PAYLOAD_TOO_LARGE' | 'RESPONSE_TOO_LARGE' | 'TOO_MANY_OUTPUTS' | 'TXS_TOO_LARGE'
> {}
/** 503 STORAGE_ERROR: the engine, blob store or queue failed; the outcome of a write is unknown. */
export class StorageError extends ApiError<'STORAGE_ERROR'> {}
/** 429 (API Gateway's throttle, Lambda's TooManyRequestsException): not processed; retried. */
export class ThrottledError extends ApiError<'THROTTLED'> {}
/**
 * Anything else: 5xx, an unhandled function error, an answer the client cannot read, 403 (also FIELD_NOT_ALLOWED: a
 * create field above the caller's role).
 */
export class ServiceError extends ApiError<
  | 'FIELD_NOT_ALLOWED'
  | 'INTERNAL_ERROR'
  | 'CONFIG_ERROR'
  | 'UTXO_INVALID_SIZE'
  | 'METHOD_NOT_ALLOWED'
  | 'FORBIDDEN'
  | 'BAD_GATEWAY'
  | 'GATEWAY_TIMEOUT'
  | 'FUNCTION_ERROR'
  | 'UNEXPECTED_RESPONSE'
> {}

const CONFLICTS: ReadonlySet<string> = new Set<StateConflictCode>([
  'CREATING',
  'CONFLICTING',
  'LOCKED',
  'COINBASE_IMMATURE',
  'UTXO_HASH_MISMATCH',
  'SPENT',
  'FROZEN',
  'ALREADY_FROZEN',
  'FROZEN_UNTIL',
  'UTXO_NOT_FROZEN',
  'INVALID_SPEND',
  'DELETING',
]);

/** The ApiError (of the class of its code) for a code, message, status and details. */
export function apiError(
  code: string,
  message: string,
  status: number,
  details: Record<string, unknown> = {},
  operation?: string,
): ApiError {
  const d = details as never;
  switch (code) {
    case 'INVALID_ARGUMENT':
    case 'INVALID_PARAMETER':
    case 'BAD_FRAME':
      return new InvalidArgumentError(code, message, status, d, operation);
    case 'TX_NOT_FOUND':
    case 'UTXO_NOT_FOUND':
    case 'UTXOS_NOT_FOUND':
    case 'ROUTE_NOT_FOUND':
      return new NotFoundError(code, message, status, d, operation);
    case 'TX_EXISTS':
      return new TxExistsError(code, message, status, d, operation);
    case 'PAYLOAD_TOO_LARGE':
    case 'RESPONSE_TOO_LARGE':
    case 'TOO_MANY_OUTPUTS':
    case 'TXS_TOO_LARGE':
      return new PayloadTooLargeError(code, message, status, d, operation);
    case 'STORAGE_ERROR':
      return new StorageError(code, message, status, d, operation);
    case 'THROTTLED':
      return new ThrottledError(code, message, status, d, operation);
    default:
      if (CONFLICTS.has(code)) return new ConflictError(code as StateConflictCode, message, status, d, operation);
      return new ServiceError(code as ServiceError['code'], message, status, d, operation);
  }
}

/** Narrows an error to the ApiError of one (or several) codes: `if (isApiError(e, 'SPENT')) e.details.spendingTxid`. */
export function isApiError<C extends ApiErrorCode>(err: unknown, ...codes: C[]): err is ApiError<C> {
  return err instanceof ApiError && (codes.length === 0 || (codes as string[]).includes(err.code));
}

/** The error envelope `{error: {code, message, details?}}`, if the value is one. */
export function errorEnvelope(
  body: unknown,
): { code: string; message: string; details?: Record<string, unknown> } | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const error = (body as { error?: unknown }).error;
  if (error === null || typeof error !== 'object') return undefined;
  const { code, message, details } = error as { code?: unknown; message?: unknown; details?: unknown };
  if (typeof code !== 'string') return undefined;
  return {
    code,
    message: typeof message === 'string' ? message : code,
    details: details !== null && typeof details === 'object' ? (details as Record<string, unknown>) : undefined,
  };
}

/** The ApiError of an error answer: the API's envelope, else a client code for API Gateway's and Lambda's answers. */
export function errorFromResponse(status: number, body: unknown, operation?: string): ApiError {
  const envelope = errorEnvelope(body);
  if (envelope) return apiError(envelope.code, envelope.message, status, envelope.details ?? {}, operation);
  // API Gateway's own answers carry {"message": "..."}
  const message =
    body !== null && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string'
      ? (body as { message: string }).message
      : `HTTP ${status}`;
  const code: ClientErrorCode =
    status === 429
      ? 'THROTTLED'
      : status === 403 || status === 401
        ? 'FORBIDDEN'
        : status === 502
          ? 'BAD_GATEWAY'
          : status === 504
            ? 'GATEWAY_TIMEOUT'
            : 'UNEXPECTED_RESPONSE';
  return apiError(code, message, status, {}, operation);
}

/**
 * The service could not be reached, or the connection failed. `sent` is false when the request certainly did not
 * reach the service (refused connection, DNS failure, credentials not found, aborted before sending): then a retry is
 * safe for any operation. When true, the request may have been processed.
 */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly sent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

/** The client's bounded queue is full (batching with `whenFull: 'reject'`). */
export class QueueFullError extends Error {
  constructor(readonly limit: number) {
    super(`the client's batch queue holds ${limit} calls, its limit: slow down or raise maxQueued`);
    this.name = 'QueueFullError';
  }
}
