/**
 * The operations of the API as the client sees them. The generated module (generated/api-types.ts, rendered from the
 * server's route table and zod schemas; `npm test` fails when it is out of date, and a compile-time test checks its
 * types equal the schemas' own) gives each operation's route, request and answer; this file adds whether repeating
 * the operation is safe. The client ships none of the server's code and no zod, yet a route added to or changed in
 * the table changes the generated module, and an operation without an idempotency decision here fails to compile.
 */
import { ROUTES, type FunctionName, type HttpMethod, type Operations } from './generated/api-types.js';
import type * as api from './generated/api-types.js';

/** Every operationId of the route table. */
export type OperationId = keyof Operations;

/** The request of an operation: path parameters, query and JSON body (a part whose fields are all optional may be left out). */
export type OperationRequest<Id extends OperationId> = Operations[Id]['request'];

/** The answer of an operation on success; void for 204. */
export type OperationResponse<Id extends OperationId> = Operations[Id]['response'];

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
   * after the request was sent) is safe. See "Retries" in the README and retry.ts.
   */
  idempotent: boolean;
}

type Routes = typeof ROUTES;
type EndpointOf<Id extends OperationId> = Endpoint<Routes[Id]['method'], Routes[Id]['path'], Routes[Id]['fn']>;

/**
 * Whether each operation may be repeated. Idempotent (retried after an unknown outcome): reads; spend (the same
 * spending tx again is OK: an output spent by exactly this spender counts as spent); createTx (a second create of the
 * same tx changes nothing and answers TX_EXISTS, which the client reports as such); setMined, setLocked,
 * setConflicting, preserve and setChainTip (they set a value, again the same); setLongestChain (likewise);
 * processConflicting (resumable by design: the same request again finishes an interrupted run or repeats the
 * answer); the batch routes (each item as its single route). Not idempotent (never retried after the request may have
 * arrived): deleteTx (a second answers TX_NOT_FOUND), unspend (the spender may have spent again in between), freeze /
 * unfreeze (the second answers ALREADY_FROZEN / UTXO_NOT_FROZEN), reassign, cleanup.
 */
const IDEMPOTENT: { readonly [Id in OperationId]: boolean } = {
  createTx: true,
  getTx: true,
  deleteTx: false,
  spend: true,
  unspend: false,
  setMined: true,
  setLocked: true,
  setConflicting: true,
  freeze: false,
  unfreeze: false,
  reassign: false,
  preserve: true,
  getUtxo: true,
  queryUnmined: true,
  getCounterConflicting: true,
  getConflictingChildren: true,
  setLongestChain: true,
  processConflicting: true,
  verifySpenders: true,
  iterateUnmined: true,
  getChainTip: true,
  setChainTip: true,
  forceChainTip: true,
  health: true,
  createTxs: true,
  spendTxs: true,
  getTxs: true,
  previousOutputs: true,
  getUtxos: true,
  cleanup: false,
};

/** Method, path, function and idempotency of each operation of the route table. */
export const OPERATIONS = Object.fromEntries(
  (Object.keys(ROUTES) as OperationId[]).map((id) => [id, { ...ROUTES[id], idempotent: IDEMPOTENT[id] }]),
) as { readonly [Id in OperationId]: EndpointOf<Id> };

// ---- the request and answer types of the routes, by name, for callers --------------------------------------------

export type CreateTxRequest = api.CreateRequest;
export type CreateResult = OperationResponse<'createTx'>;
export type TxView = OperationResponse<'getTx'>;
export type SpendRequest = api.SpendRequest;
export type SpendItem = api.SpendItem;
export type SpendResult = OperationResponse<'spend'>;
export type SpendOutcome = SpendResult['spends'][number];
export type SetMinedRequest = api.SetMinedRequest;
export type SetMinedResult = OperationResponse<'setMined'>;
export type UtxoStatus = OperationResponse<'getUtxo'>;
export type Outpoint = api.Outpoint;
export type UnminedPage = OperationResponse<'queryUnmined'>;
export type HealthReport = OperationResponse<'health'>;
export type CleanupReport = OperationResponse<'cleanup'>;
export type CounterConflicting = OperationResponse<'getCounterConflicting'>;
export type ConflictingChildren = OperationResponse<'getConflictingChildren'>;
export type ProcessConflictingResult = OperationResponse<'processConflicting'>;
export type UnminedTxsPage = OperationResponse<'iterateUnmined'>;
