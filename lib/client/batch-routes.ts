/**
 * The batch routes of the API (POST /v1/batch/*): one request carries many items and the answer is 200
 * `{results: [...]}`, one entry per item, in order, each carrying that item's own outcome (the status, code and
 * details a single request would have had).
 *
 * These request and response types mirror the batch routes as issue 11 specifies them; they are declared here, by
 * hand, because those routes are not yet in the route table (lib/http/routes.ts). Once they are, BATCH_OPERATIONS
 * and the item types below become derivations of the table like OPERATIONS (operations.ts). decodeBatchItem is the
 * one place that reads an item's outcome.
 */
import type { Endpoint, CreateResult, CreateTxRequest, SpendResult, TxView, UtxoStatus } from './operations';
import { apiError, errorEnvelope, errorFromResponse } from './errors';
import type { ItemResult } from './batcher';

/** POST /v1/batch/txs: create many txs, each with its own options. */
export interface BatchCreateRequest {
  txs: CreateTxRequest[];
}
/** POST /v1/batch/spends: spend all inputs of each EF tx (each tx all or nothing, on its own). */
export interface BatchSpendRequest {
  txs: string[];
  ignoreConflicting?: boolean;
  ignoreLocked?: boolean;
  blockHeight?: number;
}
/** POST /v1/batch/get: read many tx records (Teranode's BatchDecorate). */
export interface BatchGetRequest {
  txids: string[];
  fields?: string[];
}
/** POST /v1/batch/outputs: satoshis and locking script of each outpoint (Teranode's PreviousOutputsDecorate). */
export interface BatchOutputsRequest {
  outpoints: { txid: string; vout: number }[];
}
/** POST /v1/batch/utxos: spendability of each output. */
export interface BatchUtxosRequest {
  utxos: { txid: string; vout: number; utxoHash?: string }[];
}

/** An output as /v1/batch/outputs answers it. */
export interface PreviousOutput {
  satoshis: number;
  /** hex */
  lockingScript: string;
}

export interface BatchResponse {
  results: unknown[];
}

/** The batch operations, keyed like OPERATIONS; every one is idempotent (see operations.ts for create and spend). */
export const BATCH_OPERATIONS = {
  createMany: { method: 'POST', path: '/v1/batch/txs', fn: 'create', idempotent: true },
  spendMany: { method: 'POST', path: '/v1/batch/spends', fn: 'spend', idempotent: true },
  getMany: { method: 'POST', path: '/v1/batch/get', fn: 'get', idempotent: true },
  previousOutputs: { method: 'POST', path: '/v1/batch/outputs', fn: 'get', idempotent: true },
  getUtxoMany: { method: 'POST', path: '/v1/batch/utxos', fn: 'get-utxo', idempotent: true },
} as const satisfies Record<string, Endpoint>;

export type BatchOperationId = keyof typeof BATCH_OPERATIONS;

/** Request body and per-item success value of each batch operation. */
export interface BatchTypes {
  createMany: { request: BatchCreateRequest; item: CreateResult };
  spendMany: { request: BatchSpendRequest; item: SpendResult };
  getMany: { request: BatchGetRequest; item: TxView };
  previousOutputs: { request: BatchOutputsRequest; item: PreviousOutput };
  getUtxoMany: { request: BatchUtxosRequest; item: UtxoStatus };
}

/** HTTP status a single request would have had for an error code (for per-item errors without their own status). */
export function statusOfCode(code: string): number {
  if (code === 'INVALID_ARGUMENT' || code === 'INVALID_PARAMETER') return 400;
  if (code.endsWith('NOT_FOUND')) return 404;
  if (code.endsWith('TOO_LARGE')) return 413;
  if (code === 'STORAGE_ERROR') return 503;
  if (code === 'INTERNAL_ERROR' || code === 'CONFIG_ERROR' || code === 'UTXO_INVALID_SIZE') return 500;
  return 409;
}

function numericStatus(raw: Record<string, unknown>): number | undefined {
  if (typeof raw.statusCode === 'number') return raw.statusCode;
  if (typeof raw.status === 'number') return raw.status;
  return undefined;
}

/**
 * The outcome of one item of a batch answer. Accepted shapes: `{statusCode, body}` (the single request's answer:
 * status and body, the body an error envelope when >= 400), an error envelope `{error: {code, message, details}}`
 * (with or without a numeric `status`), or the success value itself.
 */
export function decodeBatchItem<T>(raw: unknown, operation: string): ItemResult<T> {
  if (raw === null || typeof raw !== 'object') {
    return { ok: false, error: apiError('UNEXPECTED_RESPONSE', 'a batch result is not an object', 200, {}, operation) };
  }
  const item = raw as Record<string, unknown>;
  const status = numericStatus(item);
  const envelope = errorEnvelope(item) ?? (status !== undefined ? errorEnvelope(item.body) : undefined);
  if (envelope) {
    const code = envelope.code;
    return {
      ok: false,
      error: apiError(code, envelope.message, status ?? statusOfCode(code), envelope.details ?? {}, operation),
    };
  }
  if (status !== undefined) {
    if (status >= 400) return { ok: false, error: errorFromResponse(status, item.body ?? item, operation) };
    if ('body' in item) return { ok: true, value: item.body as T };
    const { statusCode: _s, status: _t, ...rest } = item;
    return { ok: true, value: rest as T };
  }
  return { ok: true, value: item as T };
}

/** The per-item outcomes of a batch answer; the count must match the items sent. */
export function decodeBatchResponse<T>(body: unknown, expected: number, operation: string): ItemResult<T>[] {
  const results = (body as BatchResponse | undefined)?.results;
  if (!Array.isArray(results) || results.length !== expected) {
    const got = Array.isArray(results) ? `${results.length} entries` : typeof results;
    throw apiError(
      'UNEXPECTED_RESPONSE',
      `${operation}: expected {results: [...]} with ${expected} entries, got ${got}`,
      200,
      {},
      operation,
    );
  }
  return results.map((r) => decodeBatchItem<T>(r, operation));
}
