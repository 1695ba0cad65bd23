/**
 * The batch routes of the API (POST /v1/batch/*): one request carries many items and the answer is 200
 * `{results: [...]}`, one entry per item, in order, each carrying that item's own outcome as `{status, result}` or
 * `{status, error}` (the status, code and details a single request would have had). Their endpoints and request
 * types derive from the route table like OPERATIONS (operations.ts); decodeBatchItem is the one place that reads an
 * item's outcome.
 */
import type * as api from './generated/api-types.js';
import {
  OPERATIONS,
  type CreateResult,
  type OperationRequest,
  type SpendResult,
  type TxView,
  type UtxoStatus,
} from './operations.js';
import { apiError, errorEnvelope, errorFromResponse } from './errors.js';
import type { ItemResult } from './batcher.js';

/** POST /v1/batch/txs: create many txs, each with its own options. */
export type BatchCreateRequest = OperationRequest<'createTxs'>['body'];
/** POST /v1/batch/spends: spend all inputs of each EF tx (each tx all or nothing, on its own). */
export type BatchSpendRequest = OperationRequest<'spendTxs'>['body'];
/** POST /v1/batch/get: read many tx records (Teranode's BatchDecorate). */
export type BatchGetRequest = OperationRequest<'getTxs'>['body'];
/** POST /v1/batch/outputs: satoshis and locking script of each outpoint (Teranode's PreviousOutputsDecorate). */
export type BatchOutputsRequest = OperationRequest<'previousOutputs'>['body'];
/** POST /v1/batch/utxos: spendability of each output. */
export type BatchUtxosRequest = OperationRequest<'getUtxos'>['body'];

/** An output as /v1/batch/outputs answers it. */
export type PreviousOutput = api.PreviousOutput;

export interface BatchResponse {
  results: unknown[];
}

/** The batch operations by the client's names, each the route table's endpoint; every one is idempotent. */
export const BATCH_OPERATIONS = {
  createMany: OPERATIONS.createTxs,
  spendMany: OPERATIONS.spendTxs,
  getMany: OPERATIONS.getTxs,
  previousOutputs: OPERATIONS.previousOutputs,
  getUtxoMany: OPERATIONS.getUtxos,
} as const;

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
  if (code === 'INVALID_ARGUMENT' || code === 'INVALID_PARAMETER' || code === 'BAD_FRAME') return 400;
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
 * The outcome of one item of a batch answer: the server's `{status, result}` / `{status, error}`; also accepted:
 * `{statusCode, body}` (the single request's answer:
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
    if ('result' in item) return { ok: true, value: item.result as T };
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
