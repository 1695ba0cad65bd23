/**
 * The HTTP error envelope of docs/api.md: `{"error": {"code", "message", "details"?}}`, and the mapping of the
 * store's typed errors (lib/domain/errors) to status codes:
 * 400 INVALID_ARGUMENT (the field named) and BAD_FRAME (a binary batch body: its byte offset and item named),
 * 404 TX_NOT_FOUND (and a missing output), 409 TX_EXISTS and state conflicts,
 * 413 body too large (PAYLOAD_TOO_LARGE) or answer too large (RESPONSE_TOO_LARGE; TOO_MANY_OUTPUTS, TXS_TOO_LARGE before it is built), 503 STORAGE_ERROR, 500 anything unexpected.
 */
import { ConfigError } from '../domain/config';
import { SpendFailedError, UtxoStoreError, type ErrorDetails } from '../domain/errors';
import { EngineError } from '../engine/port';

/** Codes of the HTTP layer itself, beside the store's codes (a list too: the client's generated types carry it). */
export const HTTP_ERROR_CODES = [
  'INVALID_ARGUMENT',
  'BAD_FRAME',
  'FIELD_NOT_ALLOWED',
  'PAYLOAD_TOO_LARGE',
  'RESPONSE_TOO_LARGE',
  'ROUTE_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFIG_ERROR',
  'INTERNAL_ERROR',
] as const;
export type HttpErrorCode = (typeof HTTP_ERROR_CODES)[number];

export interface ErrorBody {
  error: { code: string; message: string; details?: ErrorDetails };
}

/** An error raised by the HTTP layer (validation, routing, body size) with its status code. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: HttpErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** 400 INVALID_ARGUMENT naming the field. */
export function invalidArgument(field: string, problem: string, extra: ErrorDetails = {}): HttpError {
  return new HttpError(400, 'INVALID_ARGUMENT', `${field}: ${problem}`, { field, ...extra });
}

const STATUS_BY_CODE: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  INVALID_PARAMETER: 400,
  TX_NOT_FOUND: 404,
  UTXO_NOT_FOUND: 404,
  UTXOS_NOT_FOUND: 404,
  TX_EXISTS: 409,
  CREATING: 409,
  CONFLICTING: 409,
  LOCKED: 409,
  COINBASE_IMMATURE: 409,
  UTXO_HASH_MISMATCH: 409,
  SPENT: 409,
  FROZEN: 409,
  ALREADY_FROZEN: 409,
  FROZEN_UNTIL: 409,
  UTXO_NOT_FROZEN: 409,
  INVALID_SPEND: 409,
  DELETING: 409,
  UTXO_INVALID_SIZE: 500,
  TOO_MANY_OUTPUTS: 413,
  TXS_TOO_LARGE: 413,
  STORAGE_ERROR: 503,
};

/** HTTP status of a store error code (unknown codes: 500). */
export function statusForCode(code: string): number {
  return STATUS_BY_CODE[code] ?? 500;
}

export interface MappedError {
  statusCode: number;
  body: ErrorBody;
  headers?: Record<string, string>;
  /** true for 5xx: the caller logs the error with its stack */
  unexpected: boolean;
}

/** JSON-safe copy of error details (bigints as numbers, Buffers as hex, no undefined values). */
function jsonSafe(value: unknown): unknown {
  if (value === undefined) return undefined;
  if (typeof value === 'bigint') return Number(value);
  if (Buffer.isBuffer(value)) return value.toString('hex');
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : jsonSafe(v)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const safe = jsonSafe(v);
      if (safe !== undefined) out[k] = safe;
    }
    return out;
  }
  return value;
}

function envelope(code: string, message: string, details?: ErrorDetails): ErrorBody {
  const safe = details === undefined ? undefined : (jsonSafe(details) as ErrorDetails);
  return { error: safe && Object.keys(safe).length > 0 ? { code, message, details: safe } : { code, message } };
}

/** Maps any thrown value to a status code and the error envelope. */
export function mapError(err: unknown): MappedError {
  if (err instanceof HttpError) {
    return {
      statusCode: err.statusCode,
      body: envelope(err.code, err.message, err.details),
      headers: err.headers,
      unexpected: err.statusCode >= 500,
    };
  }
  if (err instanceof SpendFailedError) {
    // every input's outcome: which failed (and the existing spender), which were rolled back
    const spends = err.outcomes.map((o) => ({
      txid: o.txid,
      vout: o.vout,
      status: o.status,
      code: o.code,
      message: o.message,
      spendingTxid: o.spendingTxid,
      vin: o.vin,
    }));
    const statusCode = statusForCode(err.code);
    return {
      statusCode,
      body: envelope(err.code, err.message, { ...err.details, spends }),
      unexpected: statusCode >= 500,
    };
  }
  if (err instanceof UtxoStoreError) {
    const statusCode = statusForCode(err.code);
    return { statusCode, body: envelope(err.code, err.message, err.details), unexpected: statusCode >= 500 };
  }
  if (err instanceof EngineError) {
    const transient = err.code === 'TIMEOUT' || err.code === 'UNAVAILABLE';
    return {
      statusCode: transient ? 503 : 500,
      body: envelope('STORAGE_ERROR', `storage engine: ${err.message}`),
      unexpected: true,
    };
  }
  if (err instanceof ConfigError) {
    return { statusCode: 500, body: envelope('CONFIG_ERROR', err.message), unexpected: true };
  }
  return { statusCode: 500, body: envelope('INTERNAL_ERROR', 'internal error'), unexpected: true };
}
