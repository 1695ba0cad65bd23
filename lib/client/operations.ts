/**
 * The operations of the API as the client sees them, derived from the server's route table (lib/http/routes.ts) and
 * zod schemas (lib/http/schemas.ts) by type only: the client bundle holds none of the server's code, yet a route that
 * is added, renamed, moved or given another schema is a compile error here or in the client's methods.
 */
import type { z } from 'zod';
import type { FunctionName, HttpMethod, ROUTES } from '../http/routes';
import type * as s from '../http/schemas';

type AnyRoute = (typeof ROUTES)[number];

/** Every operationId of the route table. */
export type OperationId = AnyRoute['operationId'];

/** The route of an operation, with its schemas. */
export type RouteOf<Id extends OperationId> = Extract<AnyRoute, { operationId: Id }>;

type SchemaOf<R, K extends 'params' | 'query' | 'body'> = K extends keyof R ? Exclude<R[K], undefined> : never;

/** One part (params, query or body) of a request: absent, optional (every field optional) or required. */
type Part<S, K extends string> = [S] extends [never]
  ? unknown
  : S extends z.ZodUndefined
    ? unknown
    : S extends z.ZodType
      ? object extends z.input<S>
        ? { [k in K]?: z.input<S> }
        : { [k in K]: z.input<S> }
      : unknown;

/** The request of an operation: path parameters, query and JSON body, typed by the route's own schemas (input side). */
export type OperationRequest<Id extends OperationId> = Part<SchemaOf<RouteOf<Id>, 'params'>, 'params'> &
  Part<SchemaOf<RouteOf<Id>, 'query'>, 'query'> &
  Part<SchemaOf<RouteOf<Id>, 'body'>, 'body'>;

type SuccessStatus = 200 | 201 | 204;

/** The answer of an operation on success: the output type of its 200/201 response schema; void for 204. */
export type OperationResponse<Id extends OperationId> = {
  [S in keyof RouteOf<Id>['responses'] & SuccessStatus]: S extends 204
    ? void
    : RouteOf<Id>['responses'][S] extends { schema: infer Z extends z.ZodType }
      ? z.output<Z>
      : void;
}[keyof RouteOf<Id>['responses'] & SuccessStatus];

export interface Endpoint<
  M extends HttpMethod = HttpMethod,
  P extends string = string,
  F extends FunctionName = FunctionName,
> {
  method: M;
  /** the route table's resource path, e.g. /v1/txs/{txid} */
  path: P;
  /** the Lambda function serving it (direct invocation) */
  fn: F;
  /**
   * Repeating the request is harmless, so a retry after an outcome that is unknown (503, 502/504, a connection lost
   * after the request was sent) is safe. See RETRIES in README and lib/client/retry.ts.
   */
  idempotent: boolean;
}

type EndpointOf<Id extends OperationId> = Endpoint<RouteOf<Id>['method'], RouteOf<Id>['path'], RouteOf<Id>['fn']>;

/**
 * Method, path and function of each operation, checked against the route table: a route added to the table and
 * missing here, or a path or function that differs, fails to compile.
 *
 * Idempotent (retried after an unknown outcome): reads; spend (the same spending tx again is OK: an output spent by
 * exactly this spender counts as spent); createTx (a second create of the same tx changes nothing and answers
 * TX_EXISTS, which the client reports as such); setMined, setLocked, setConflicting, preserve and setChainTip (they
 * set a value, again the same); setLongestChain (likewise); processConflicting (resumable by design: the same request
 * again finishes an interrupted run or repeats the answer). Not idempotent (never retried after the request may have arrived): deleteTx (a
 * second answers TX_NOT_FOUND), unspend (the spender may have spent again in between), freeze / unfreeze (the second
 * answers ALREADY_FROZEN / UTXO_NOT_FROZEN), reassign, cleanup.
 */
export const OPERATIONS: { readonly [Id in OperationId]: EndpointOf<Id> } = {
  createTx: { method: 'POST', path: '/v1/txs', fn: 'create', idempotent: true },
  getTx: { method: 'GET', path: '/v1/txs/{txid}', fn: 'get', idempotent: true },
  deleteTx: { method: 'DELETE', path: '/v1/txs/{txid}', fn: 'admin', idempotent: false },
  spend: { method: 'POST', path: '/v1/spends', fn: 'spend', idempotent: true },
  unspend: { method: 'POST', path: '/v1/unspends', fn: 'unspend', idempotent: false },
  setMined: { method: 'POST', path: '/v1/mined', fn: 'set-mined', idempotent: true },
  setLocked: { method: 'POST', path: '/v1/locked', fn: 'admin', idempotent: true },
  setConflicting: { method: 'POST', path: '/v1/conflicting', fn: 'admin', idempotent: true },
  freeze: { method: 'POST', path: '/v1/freeze', fn: 'admin', idempotent: false },
  unfreeze: { method: 'POST', path: '/v1/unfreeze', fn: 'admin', idempotent: false },
  reassign: { method: 'POST', path: '/v1/reassign', fn: 'admin', idempotent: false },
  preserve: { method: 'POST', path: '/v1/preserve', fn: 'admin', idempotent: true },
  getUtxo: { method: 'GET', path: '/v1/utxos/{txid}/{vout}', fn: 'get-utxo', idempotent: true },
  queryUnmined: { method: 'GET', path: '/v1/unmined', fn: 'admin', idempotent: true },
  getChainTip: { method: 'GET', path: '/v1/chain/tip', fn: 'admin', idempotent: true },
  setChainTip: { method: 'PUT', path: '/v1/chain/tip', fn: 'admin', idempotent: true },
  forceChainTip: { method: 'PUT', path: '/v1/chain/tip/force', fn: 'admin', idempotent: true },
  health: { method: 'GET', path: '/v1/health', fn: 'admin', idempotent: true },
  cleanup: { method: 'POST', path: '/v1/cleanup', fn: 'admin', idempotent: false },
  getCounterConflicting: {
    method: 'GET',
    path: '/v1/txs/{txid}/counter-conflicting',
    fn: 'get',
    idempotent: true,
  },
  getConflictingChildren: {
    method: 'GET',
    path: '/v1/txs/{txid}/conflicting-children',
    fn: 'get',
    idempotent: true,
  },
  setLongestChain: { method: 'POST', path: '/v1/longest-chain', fn: 'set-mined', idempotent: true },
  processConflicting: { method: 'POST', path: '/v1/conflicting/resolve', fn: 'admin', idempotent: true },
  verifySpenders: { method: 'POST', path: '/v1/spends/verify', fn: 'admin', idempotent: true },
  iterateUnmined: { method: 'GET', path: '/v1/unmined/txs', fn: 'get', idempotent: true },
  createTxs: { method: 'POST', path: '/v1/batch/txs', fn: 'create', idempotent: true },
  spendTxs: { method: 'POST', path: '/v1/batch/spends', fn: 'spend', idempotent: true },
  getTxs: { method: 'POST', path: '/v1/batch/get', fn: 'get', idempotent: true },
  previousOutputs: { method: 'POST', path: '/v1/batch/outputs', fn: 'get', idempotent: true },
  getUtxos: { method: 'POST', path: '/v1/batch/utxos', fn: 'get-utxo', idempotent: true },
};

// ---- the response types of the routes, by name, for callers ----------------------------------------------------

export type CreateTxRequest = z.input<typeof s.createBody>;
export type CreateResult = OperationResponse<'createTx'>;
export type TxView = OperationResponse<'getTx'>;
export type SpendRequest = z.input<typeof s.spendBody>;
export type SpendItem = z.input<typeof s.spendItemSchema>;
export type SpendResult = OperationResponse<'spend'>;
export type SpendOutcome = SpendResult['spends'][number];
export type SetMinedRequest = z.input<typeof s.minedBody>;
export type SetMinedResult = OperationResponse<'setMined'>;
export type UtxoStatus = OperationResponse<'getUtxo'>;
export type Outpoint = z.input<typeof s.outpointSchema>;
export type UnminedPage = OperationResponse<'queryUnmined'>;
export type HealthReport = OperationResponse<'health'>;
export type CleanupReport = OperationResponse<'cleanup'>;
export type CounterConflicting = OperationResponse<'getCounterConflicting'>;
export type ConflictingChildren = OperationResponse<'getConflictingChildren'>;
export type ProcessConflictingResult = OperationResponse<'processConflicting'>;
export type UnminedTxsPage = OperationResponse<'iterateUnmined'>;
