/**
 * The route table of the HTTP API (docs/api.md), as data: one entry per method + path, naming the Lambda function
 * (functions/<fn>.ts) that serves it, the least caller role that may call it, its request schemas (path, query,
 * body), its documented responses and what it does (route-spec.ts says what an entry holds). The same table drives
 * request validation and the handlers (routes.ts joins each entry to its handler in route-handlers.ts), the local
 * server's routing, the OpenAPI document, the client's generated types and the CDK app's REST API (cdk/api.ts). A new
 * route is a new entry here and its handler in route-handlers.ts (the handlers' type demands it).
 */
import * as z from 'zod';
import { CLEANUP_DEFAULT_SECONDS } from './cleanup-deadline';
import {
  batchRoute,
  CHANGE,
  E400,
  E403_FIELD,
  E404,
  E409,
  E413,
  E503,
  OUTPUTS_CHANGE,
  route,
  TIP_CHANGE,
  type RouteSpec,
} from './route-spec';
import { FRAME_KIND } from './binary-batch';
import * as s from './schemas';

/**
 * Create fields and the route that sets each on an existing tx: only its roles may send them on create. blockHeight
 * is where a coinbase's maturity counts from (a coinbase is recognised with or without isCoinbase), so who may state a
 * create's height is who may say which block a tx is in.
 */
const CREATE_RESTRICTED_FIELDS = {
  blockHeight: 'POST /v1/mined',
  minedBlocks: 'POST /v1/mined',
  locked: 'POST /v1/locked',
  conflicting: 'POST /v1/conflicting',
};

/** Spend flags and the route whose power each uses: only its roles may send them (not even a direct invoker below). */
const SPEND_ROLE_FLAGS = { ignoreLocked: 'POST /v1/locked', ignoreConflicting: 'POST /v1/conflicting' };
const UNSPEND_ROLE_FLAGS = { flagAsLocked: 'POST /v1/locked' };

export const ROUTE_TABLE = [
  route({
    operationId: 'createTx',
    fn: 'create',
    role: 'validator',
    method: 'POST',
    path: '/v1/txs',
    summary: 'Store a transaction and its outputs',
    description:
      "The tx must be in extended format (BIP-239) when it has inputs, unless isCoinbase. A second create of the same tx is TX_EXISTS. A blockHeight more than MAX_TIP_ADVANCE (default 10) above the chain tip is 400 INVALID_ARGUMENT naming blockHeight; so is a coinbase's blockHeight more than MAX_TIP_ADVANCE below it without minedBlocks (details.maxBelow). blockHeight, minedBlocks, locked and conflicting are accepted only from the roles that may set them on an existing tx (blockValidation and admin): from a validator they are 403 FIELD_NOT_ALLOWED naming the field.",
    body: s.createBody,
    restrictedFields: CREATE_RESTRICTED_FIELDS,
    responses: {
      201: { description: 'created', schema: s.createResponse },
      400: E400,
      403: E403_FIELD,
      409: { description: 'TX_EXISTS', schema: s.errorEnvelope },
      413: E413,
      503: E503,
    },
  }),
  route({
    operationId: 'getTx',
    fn: 'get',
    role: 'validator',
    method: 'GET',
    path: '/v1/txs/{txid}',
    summary: 'Read a transaction record',
    description:
      'Default fields: fee, sizeInBytes, blockIDs, blockHeights, subtreeIdxs, isCoinbase, conflicting, locked, unminedSince. With utxos, a tx of more than MAX_GET_OUTPUTS (default 50,000) outputs is 413 TOO_MANY_OUTPUTS (details.outputs, details.limit), refused before its outputs are read; with tx, a tx over MAX_GET_TX_BYTES (default 3 MiB) is 413 TXS_TOO_LARGE.',
    params: s.txidPath,
    query: s.getTxQuery,
    responses: {
      200: { description: 'the record', schema: s.txViewSchema },
      400: E400,
      404: E404,
      413: E413,
      503: E503,
    },
  }),
  route({
    operationId: 'deleteTx',
    fn: 'admin',
    role: 'admin',
    method: 'DELETE',
    path: '/v1/txs/{txid}',
    summary: 'Delete a transaction (master, pagination records and blobs)',
    params: s.txidPath,
    responses: { 204: { description: 'deleted' }, 400: E400, 404: E404, 503: E503 },
  }),
  route({
    operationId: 'spend',
    fn: 'spend',
    role: 'validator',
    method: 'POST',
    path: '/v1/spends',
    summary: 'Spend outputs: all inputs of a spending tx, or explicit spends (all or nothing)',
    description:
      'Evaluated at the chain tip + 1 (or blockHeight + 1). If any input fails, every input this request spent is rolled back; the error lists each input in details.spends. ignoreLocked and ignoreConflicting are accepted only from blockValidation and admin through API Gateway: from a validator, and from any direct invoker, they are 403 FIELD_NOT_ALLOWED naming the field and nothing is spent.',
    body: s.spendBody,
    roleFlags: SPEND_ROLE_FLAGS,
    responses: {
      200: { description: 'every input spent', schema: s.spendResponse },
      400: E400,
      403: E403_FIELD,
      404: E404,
      409: {
        description: 'an input failed (details.spends: each input, the existing spender)',
        schema: s.errorEnvelope,
      },
      413: E413,
      503: E503,
    },
  }),
  route({
    operationId: 'unspend',
    fn: 'unspend',
    role: 'validator',
    method: 'POST',
    path: '/v1/unspends',
    summary: 'Undo spends: clears each output that holds exactly the given spender',
    description:
      'With flagAsLocked the parents of the outputs that hold exactly the given spender are locked first (not spendable) and stay locked until POST /v1/locked unlocks them; a parent none of whose given outputs holds its spender is not locked. flagAsLocked is accepted only from blockValidation and admin through API Gateway: from a validator, and from any direct invoker, it is 403 FIELD_NOT_ALLOWED and nothing changes.',
    body: s.unspendBody,
    roleFlags: UNSPEND_ROLE_FLAGS,
    responses: { ...CHANGE, 403: E403_FIELD },
  }),
  route({
    operationId: 'setMined',
    fn: 'set-mined',
    role: 'blockValidation',
    method: 'POST',
    path: '/v1/mined',
    summary: 'Add (or with unsetMined remove) a block to each transaction',
    description:
      'On the longest chain (and not unsetting) the chain tip rises to blockHeight; a blockHeight more than MAX_TIP_ADVANCE (default 10) above the tip is 400 INVALID_ARGUMENT naming blockHeight, with details.current and details.maxAdvance, and nothing is marked.',
    body: s.minedBody,
    responses: {
      200: { description: 'block ids of each tx', schema: s.minedResponse },
      400: E400,
      404: E404,
      409: E409,
      413: E413,
      503: E503,
    },
  }),
  route({
    operationId: 'setLocked',
    fn: 'admin',
    role: 'blockValidation',
    method: 'POST',
    path: '/v1/locked',
    summary: 'Lock or unlock transactions (a locked tx cannot be spent)',
    body: s.lockedBody,
    responses: CHANGE,
  }),
  route({
    operationId: 'setConflicting',
    fn: 'admin',
    role: 'blockValidation',
    method: 'POST',
    path: '/v1/conflicting',
    summary: 'Mark or unmark transactions as conflicting',
    body: s.conflictingBody,
    responses: CHANGE,
  }),
  route({
    operationId: 'freeze',
    fn: 'admin',
    role: 'admin',
    method: 'POST',
    path: '/v1/freeze',
    summary: 'Freeze outputs',
    description: 'Each output independently; on failure details.utxos lists every output with its outcome.',
    body: s.outpointsBody,
    responses: OUTPUTS_CHANGE,
  }),
  route({
    operationId: 'unfreeze',
    fn: 'admin',
    role: 'admin',
    method: 'POST',
    path: '/v1/unfreeze',
    summary: 'Unfreeze outputs',
    body: s.outpointsBody,
    responses: OUTPUTS_CHANGE,
  }),
  route({
    operationId: 'reassign',
    fn: 'admin',
    role: 'admin',
    method: 'POST',
    path: '/v1/reassign',
    summary: 'Reassign a frozen output to a new UTXO hash (spendable 1000 blocks later)',
    body: s.reassignBody,
    responses: CHANGE,
  }),
  route({
    operationId: 'preserve',
    fn: 'admin',
    role: 'blockValidation',
    method: 'POST',
    path: '/v1/preserve',
    summary: 'Keep transactions (no delete-at-height) until a height',
    body: s.preserveBody,
    responses: CHANGE,
  }),
  route({
    operationId: 'getUtxo',
    fn: 'get-utxo',
    role: 'validator',
    method: 'GET',
    path: '/v1/utxos/{txid}/{vout}',
    summary: 'Spendability of one output at the chain tip + 1',
    params: s.utxoPath,
    query: s.utxoQuery,
    responses: { 200: { description: 'the status', schema: s.spendStatusSchema }, 400: E400, 503: E503 },
  }),
  route({
    operationId: 'queryUnmined',
    fn: 'admin',
    role: 'blockValidation',
    method: 'GET',
    path: '/v1/unmined',
    summary: 'Transactions not mined on the longest chain since at most `cutoff`, paged',
    query: s.unminedQuery,
    responses: { 200: { description: 'a page', schema: s.unminedResponse }, 400: E400, 503: E503 },
  }),
  route({
    operationId: 'getCounterConflicting',
    fn: 'get',
    role: 'validator',
    method: 'GET',
    path: '/v1/txs/{txid}/counter-conflicting',
    summary: 'The other transactions that spend one of the outputs this transaction spends',
    params: s.txidPath,
    responses: {
      200: { description: 'their txids', schema: s.counterConflictingResponse },
      400: E400,
      404: E404,
      503: E503,
    },
  }),
  route({
    operationId: 'getConflictingChildren',
    fn: 'get',
    role: 'validator',
    method: 'GET',
    path: '/v1/txs/{txid}/conflicting-children',
    summary: 'The conflicting children registered on this transaction (its conflictingCs)',
    params: s.txidPath,
    responses: {
      200: { description: 'their txids', schema: s.conflictingChildrenResponse },
      400: E400,
      404: E404,
      503: E503,
    },
  }),
  route({
    operationId: 'setLongestChain',
    fn: 'set-mined',
    role: 'blockValidation',
    method: 'POST',
    path: '/v1/longest-chain',
    summary: 'Mark transactions on or off the longest chain (unminedSince only; block lists kept)',
    description:
      'Off: unminedSince = the chain tip (an earlier one is kept). On: unminedSince removed for a tx in at least one block. The delete-at-height rule runs again. A missing tx is 404 after the others were changed.',
    body: s.longestChainBody,
    responses: CHANGE,
  }),
  route({
    operationId: 'processConflicting',
    fn: 'admin',
    role: 'blockValidation',
    method: 'POST',
    path: '/v1/conflicting/resolve',
    summary: 'Double-spend resolution: each conflicting tx of a new longest chain becomes the spender of its inputs',
    description:
      "The txs it displaces (losingTxids) and all their descendants are marked conflicting; contested outputs move to the winner atomically; the losers' other inputs are freed. Resumable: after a failure, send the same request again.",
    body: s.processConflictingBody,
    responses: {
      200: { description: 'the displaced txs', schema: s.processConflictingResponse },
      400: { description: 'INVALID_ARGUMENT (also: a tx is not marked conflicting)', schema: s.errorEnvelope },
      404: E404,
      409: {
        description: 'FROZEN, SPENT (a new spender appeared: send the request again), ...',
        schema: s.errorEnvelope,
      },
      413: E413,
      503: E503,
    },
  }),
  route({
    operationId: 'verifySpenders',
    fn: 'admin',
    role: 'admin',
    method: 'POST',
    path: '/v1/spends/verify',
    summary: 'After a cluster change: each stored tx must be the spender of its inputs; losers marked conflicting',
    description:
      'A tx whose acknowledged spend did not stand (a split brain on Community Edition: the output is spent by another tx) is listed in lost, and with repair (default true) it and its descendants are marked conflicting; the DoubleAcknowledgedOutputs metric counts them. An unspent input is listed, not changed. Idempotent. docs/decisions/0006-partitions-on-community-edition.md.',
    body: s.verifySpendersBody,
    responses: {
      200: { description: 'what was found and marked', schema: s.verifySpendersResponse },
      400: E400,
      413: E413,
      503: E503,
    },
  }),
  route({
    operationId: 'iterateUnmined',
    fn: 'get',
    role: 'blockValidation',
    method: 'GET',
    path: '/v1/unmined/txs',
    summary: 'Every unmined transaction with what block assembly needs to reload it, in bounded pages',
    description:
      'Each page is one bounded page of the unmined index (at most limit txs, whatever the store holds), in createdAt order within the page. A cursor is fixed by its first read: a retried request lists the same txids (those still unmined, with their current fee, size, parents and flags). Txs mined during the iteration move no other tx across a page boundary: a tx unmined throughout is listed once. Order across pages is the index order; sort by createdAt when reloading.',
    query: s.unminedTxsQuery,
    responses: { 200: { description: 'a page', schema: s.unminedTxsResponse }, 400: E400, 503: E503 },
  }),
  route({
    operationId: 'getChainTip',
    fn: 'status',
    role: 'validator',
    method: 'GET',
    path: '/v1/chain/tip',
    summary: 'The chain tip height H the store evaluates at',
    responses: { 200: { description: 'the tip', schema: s.chainTipResponse }, 503: E503 },
  }),
  route({
    operationId: 'setChainTip',
    fn: 'admin',
    role: 'blockValidation',
    method: 'PUT',
    path: '/v1/chain/tip',
    summary: 'Move the chain tip forward by at most MAX_TIP_ADVANCE blocks (or keep it)',
    description:
      'A height below the tip or more than MAX_TIP_ADVANCE (default 10) above it is 400 INVALID_ARGUMENT naming height, with details.current and details.maxAdvance; an admin moves it anywhere with PUT /v1/chain/tip/force.',
    body: s.chainTipBody,
    responses: TIP_CHANGE,
  }),
  route({
    operationId: 'forceChainTip',
    fn: 'admin',
    role: 'admin',
    method: 'PUT',
    path: '/v1/chain/tip/force',
    summary: 'Set the chain tip height to any height, back or far forward (admin)',
    description:
      'A separate path so that IAM can allow it to the admin role only (API Gateway authorizes by method and path).',
    body: s.chainTipBody,
    responses: TIP_CHANGE,
  }),
  route({
    operationId: 'health',
    fn: 'status',
    role: 'validator',
    method: 'GET',
    path: '/v1/health',
    summary: 'Liveness of the engine, blob store and queue',
    responses: {
      200: { description: 'everything answers', schema: s.healthResponse },
      503: { description: 'degraded (same body), or the runtime could not start', schema: s.healthResponse },
    },
  }),
  batchRoute({
    operationId: 'createTxs',
    fn: 'create',
    path: '/v1/batch/txs',
    summary: 'Store many transactions (each as POST /v1/txs, on its own)',
    description:
      'One result per tx, in order: {status: 201, result} or {status, error} as POST /v1/txs would answer. The txs go out as create-only engine batches (ENGINE_BATCH_SIZE records each). A second copy of a txid in the batch is TX_EXISTS. An item with blockHeight, minedBlocks, locked or conflicting from a validator makes the whole request 403 FIELD_NOT_ALLOWED naming txs[i].field, as POST /v1/txs.',
    body: s.batchTxsBody,
    items: 'txs',
    item: s.createBody,
    response: ['BatchCreateResponse', s.createResponse, "each tx's outcome"],
    status: 201,
    restrictedFields: CREATE_RESTRICTED_FIELDS,
    binary: { kind: FRAME_KIND.txs, item: s.framedCreateItem },
  }),
  batchRoute({
    operationId: 'spendTxs',
    fn: 'spend',
    path: '/v1/batch/spends',
    summary: 'Spend the inputs of many EF transactions (each all or nothing, as POST /v1/spends)',
    description:
      'One result per tx, in order: {status: 200, result: {spends}} or {status, error} (details.spends as POST /v1/spends). Of two txs of the batch spending one output the earlier one wins; the later one is rolled back whole. ignoreLocked and ignoreConflicting as POST /v1/spends: from a validator or a direct invoker the whole request is 403 FIELD_NOT_ALLOWED.',
    body: s.batchSpendsBody,
    roleFlags: SPEND_ROLE_FLAGS,
    items: 'txs',
    item: s.txHexSchema,
    itemField: 'tx',
    response: ['BatchSpendResponse', s.spendResponse, "each tx's outcome"],
    binary: { kind: FRAME_KIND.spends, item: s.txBytesSchema },
  }),
  batchRoute({
    operationId: 'getTxs',
    fn: 'get',
    path: '/v1/batch/get',
    summary: 'Read many transaction records (each as GET /v1/txs/{txid})',
    description:
      'One result per txid, in order: {status: 200, result: view} or {status: 404, error}. With utxos, more than MAX_GET_OUTPUTS (default 50,000) outputs over all the txids (a txid given twice counts twice) make the whole request 413 TOO_MANY_OUTPUTS, refused before any output is read; with tx, more than MAX_GET_TX_BYTES (default 3 MiB) of txs together is 413 TXS_TOO_LARGE, before any tx is read.',
    body: s.batchGetBody,
    items: 'txids',
    item: s.txidSchema,
    itemField: 'txid',
    response: ['BatchGetResponse', s.txViewSchema, "each txid's outcome"],
  }),
  batchRoute({
    operationId: 'previousOutputs',
    fn: 'get',
    path: '/v1/batch/outputs',
    summary: 'Satoshis and locking script of many outpoints (to extend a raw tx to EF)',
    description:
      'One result per outpoint, in order: {status: 200, result: {txid, vout, satoshis, lockingScript}} or {status: 404, error} (TX_NOT_FOUND, UTXO_NOT_FOUND).',
    body: s.batchOutputsBody,
    items: 'outpoints',
    item: s.outpointRefSchema,
    response: ['BatchOutputsResponse', s.previousOutputSchema, "each outpoint's outcome"],
  }),
  batchRoute({
    operationId: 'getUtxos',
    fn: 'get-utxo',
    path: '/v1/batch/utxos',
    summary: 'Spendability of many outputs at the chain tip + 1 (each as GET /v1/utxos/{txid}/{vout})',
    body: s.batchUtxosBody,
    items: 'utxos',
    item: s.utxoRefSchema,
    response: ['BatchUtxosResponse', s.spendStatusSchema, "each output's outcome"],
  }),
  route({
    operationId: 'cleanup',
    fn: 'admin',
    role: 'admin',
    method: 'POST',
    path: '/v1/cleanup',
    summary: 'Run one cleanup pass now (deletes fully spent, buried transactions)',
    description: `Stops within maxSeconds (default ${CLEANUP_DEFAULT_SECONDS}) and the function's remaining time; "more" says candidates remain.`,
    body: s.cleanupBody,
    bodyOptional: true,
    responses: { 200: { description: 'the pass report', schema: s.cleanupResponse }, 400: E400, 503: E503 },
  }),
] as const satisfies readonly RouteSpec[];

export type TableRoute = (typeof ROUTE_TABLE)[number];
export type OperationId = TableRoute['operationId'];
export type RouteOf<Id extends OperationId> = Extract<TableRoute, { operationId: Id }>;

/** The entry of an operation. */
export function routeById<Id extends OperationId>(id: Id): RouteOf<Id> {
  const found = ROUTE_TABLE.find((r) => r.operationId === id);
  if (!found) throw new Error(`no route ${id}`);
  return found as RouteOf<Id>;
}

/** What API Gateway checks of a request before the function runs (cdk/api.ts): the top-level fields. */
export interface RequestShape {
  /** required top-level JSON body properties */
  requiredBody: string[];
  requiredQuery: string[];
  optionalQuery: string[];
}

function jsonSchema(schema: z.ZodType | undefined): { required?: string[]; properties?: object } {
  return schema ? (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as object) : {};
}

/** A route's request shape, from its schemas (the input side: what a caller must send). */
export function requestShape(spec: RouteSpec): RequestShape {
  const query = jsonSchema(spec.query);
  const requiredQuery = query.required ?? [];
  return {
    requiredBody: jsonSchema(spec.body).required ?? [],
    requiredQuery,
    optionalQuery: Object.keys(query.properties ?? {}).filter((q) => !requiredQuery.includes(q)),
  };
}
