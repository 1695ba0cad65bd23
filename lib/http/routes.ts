/**
 * The route table of the HTTP API (docs/api.md): one entry per method + path, naming the Lambda function
 * (functions/<fn>.ts) that serves it, its request schemas (path, query, body), its documented responses and what it
 * does. The same table drives request validation, the handlers, the local server's routing and the OpenAPI
 * document.
 */
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import type { Runtime } from '../runtime';
import { emitMetrics } from '../cleanup/report';
import type { CleanupMetrics } from '../cleanup';
import type { ApiRole } from './roles';
import type { ItemResult } from '../store/types';
import { checkBatchSize, parseItems, parseScalarItems, runItems } from './batch-items';
import * as s from './schemas';
import { emitSingle } from './observability';

export type FunctionName = 'create' | 'get' | 'spend' | 'unspend' | 'set-mined' | 'get-utxo' | 'admin';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RouteResult {
  statusCode: number;
  /** serialized as JSON; omitted for 204 */
  body?: unknown;
}

export interface RouteContext {
  runtime: () => Promise<Runtime>;
  lambda: Context;
  metrics: CleanupMetrics;
}

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
}

interface RouteSpec<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  Id extends string = string,
  M extends HttpMethod = HttpMethod,
  Path extends string = string,
  F extends FunctionName = FunctionName,
  R extends Record<number, ResponseDoc> = Record<number, ResponseDoc>,
> {
  operationId: Id;
  fn: F;
  /** the least caller role allowed (lib/http/roles.ts): the CDK app's IAM roles and the OpenAPI document follow it */
  role: ApiRole;
  method: M;
  /** API Gateway resource path, e.g. /v1/txs/{txid} */
  path: Path;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** an empty body is accepted as {} */
  bodyOptional?: boolean;
  responses: R;
  handle(
    input: { params: z.output<P>; query: z.output<Q>; body: z.output<B> },
    ctx: RouteContext,
  ): Promise<RouteResult>;
}

export interface Route {
  operationId: string;
  fn: FunctionName;
  role: ApiRole;
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  bodyOptional?: boolean;
  responses: Record<number, ResponseDoc>;
  handle(input: { params: unknown; query: unknown; body: unknown }, ctx: RouteContext): Promise<RouteResult>;
}

/**
 * A route with its static types kept (operation id, method, path, function, schemas, responses): the typed client
 * (packages/client) renders its types from them, so a change of the table is a change of the client (npm test).
 */
export interface TypedRoute<
  Id extends string,
  M extends HttpMethod,
  Path extends string,
  F extends FunctionName,
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends Record<number, ResponseDoc>,
> extends Route {
  operationId: Id;
  method: M;
  path: Path;
  fn: F;
  params?: P;
  query?: Q;
  body?: B;
  responses: R;
}

function route<
  const Id extends string,
  M extends HttpMethod,
  const Path extends string,
  F extends FunctionName,
  R extends Record<number, ResponseDoc>,
  P extends z.ZodType = z.ZodUndefined,
  Q extends z.ZodType = z.ZodUndefined,
  B extends z.ZodType = z.ZodUndefined,
>(spec: RouteSpec<P, Q, B, Id, M, Path, F, R>): TypedRoute<Id, M, Path, F, P, Q, B, R> {
  return spec as unknown as TypedRoute<Id, M, Path, F, P, Q, B, R>;
}

const E400 = { description: 'INVALID_ARGUMENT: the field named in error.details.field', schema: s.errorEnvelope };
const E404 = { description: 'TX_NOT_FOUND (or UTXO_NOT_FOUND)', schema: s.errorEnvelope };
const E409 = {
  description:
    'a state conflict: SPENT, FROZEN, LOCKED, CONFLICTING, CREATING, COINBASE_IMMATURE, UTXO_HASH_MISMATCH, ...',
  schema: s.errorEnvelope,
};
const E413 = {
  description:
    "PAYLOAD_TOO_LARGE: body over 6,225,920 bytes (Lambda's 6 MB payload less a reserve for the event); " +
    'RESPONSE_TOO_LARGE: the answer would exceed 6 MB (ask for fewer items or fields)',
  schema: s.errorEnvelope,
};
const E503 = { description: 'STORAGE_ERROR: the engine, blob store or queue failed; retry', schema: s.errorEnvelope };
const OK = { description: 'done', schema: s.okResponse };
const ok = (): RouteResult => ({ statusCode: 200, body: { status: 'OK' } });

/**
 * What sets one batch route (POST /v1/batch/...) apart; batchRoute derives its entry. The body's `items` list is
 * checked against MAX_BATCH_ITEMS, each item with the single request's schema (`item`, or [field, schema] for a
 * scalar item checked as that field of the single request), the valid ones go to `run` together, and each outcome
 * comes back in order as {status, result} (`status`, default 200; `result` maps the store's value) or {status,
 * error}. The 200 answer is s.batchResponse(id, itemSchema) described as `description`.
 */
interface BatchSpec<
  Id extends string,
  Path extends string,
  F extends FunctionName,
  K extends string,
  B extends z.ZodType<Record<K, unknown[]>>,
  T extends z.ZodType,
  R,
  RS extends z.ZodType,
> {
  operationId: Id;
  fn: F;
  path: Path;
  summary: string;
  description?: string;
  body: B;
  items: K;
  item: T | [field: string, schema: T];
  response: [id: string, itemSchema: RS, description: string];
  run(store: Runtime['store'], valid: z.output<T>[], body: z.output<B>): Promise<ItemResult<R>[]>;
  status?: number;
  result?: (value: R) => unknown;
}

/** The responses of every batch route (the same as a route literal's inferred ones). */
type BatchResponses<RS extends z.ZodType> = {
  200: { description: string; schema: ReturnType<typeof s.batchResponse<RS>> };
  400: typeof E400;
  413: typeof E413;
  503: typeof E503;
};

function batchRoute<
  const Id extends string,
  const Path extends string,
  F extends FunctionName,
  K extends string,
  B extends z.ZodType<Record<K, unknown[]>>,
  T extends z.ZodType,
  R,
  RS extends z.ZodType,
>(
  spec: BatchSpec<Id, Path, F, K, B, T, R, RS>,
): TypedRoute<Id, 'POST', Path, F, z.ZodType, z.ZodType, B, BatchResponses<RS>> {
  const [id, itemSchema, description] = spec.response;
  const { item, status = 200, result = (value: R) => value } = spec;
  return route({
    operationId: spec.operationId,
    fn: spec.fn,
    role: 'validator',
    method: 'POST',
    path: spec.path,
    summary: spec.summary,
    ...(spec.description !== undefined && { description: spec.description }),
    body: spec.body,
    responses: {
      200: { description, schema: s.batchResponse(id, itemSchema) },
      400: E400,
      413: E413,
      503: E503,
    },
    async handle({ body }, ctx) {
      const runtime = await ctx.runtime();
      const list = body[spec.items];
      checkBatchSize(list, spec.items, runtime.config.maxBatchItems);
      const out = await runItems(
        Array.isArray(item) ? parseScalarItems(list, item[0], item[1]) : parseItems(list, item),
        (valid) => spec.run(runtime.store, valid, body),
        (value) => ({ status, result: result(value) }),
      );
      return { statusCode: 200, body: out };
    },
  });
}

/** Default (and maximum) time budget of POST /v1/cleanup: below API Gateway's 29 s integration timeout. */
export const CLEANUP_DEFAULT_SECONDS = 25;
/** Time kept back from the Lambda's remaining time for the response. */
export const CLEANUP_MARGIN_MS = 2000;

/** Deadline (epoch ms) of a cleanup pass: the requested budget, capped by the Lambda's remaining time. */
export function cleanupDeadline(lambda: Context | undefined, budgetMs: number, marginMs = CLEANUP_MARGIN_MS): number {
  let budget = budgetMs;
  const remaining = lambda?.getRemainingTimeInMillis?.();
  if (typeof remaining === 'number' && Number.isFinite(remaining)) budget = Math.min(budget, remaining - marginMs);
  return Date.now() + Math.max(0, budget);
}

export const ROUTES = [
  route({
    operationId: 'createTx',
    fn: 'create',
    role: 'validator',
    method: 'POST',
    path: '/v1/txs',
    summary: 'Store a transaction and its outputs',
    description:
      'The tx must be in extended format (BIP-239) when it has inputs, unless isCoinbase. A second create of the same tx is TX_EXISTS.',
    body: s.createBody,
    responses: {
      201: { description: 'created', schema: s.createResponse },
      400: E400,
      409: { description: 'TX_EXISTS', schema: s.errorEnvelope },
      413: E413,
      503: E503,
    },
    async handle({ body }, ctx) {
      const { tx, ...options } = body;
      const result = await (await ctx.runtime()).store.create(tx, options);
      return { statusCode: 201, body: result };
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
      'Default fields: fee, sizeInBytes, blockIDs, blockHeights, subtreeIdxs, isCoinbase, conflicting, locked, unminedSince.',
    params: s.txidPath,
    query: s.getTxQuery,
    responses: { 200: { description: 'the record', schema: s.txViewSchema }, 400: E400, 404: E404, 503: E503 },
    async handle({ params, query }, ctx) {
      const view = await (await ctx.runtime()).store.get(params.txid, query.fields);
      return { statusCode: 200, body: view };
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
    async handle({ params }, ctx) {
      await (await ctx.runtime()).store.delete(params.txid);
      return { statusCode: 204 };
    },
  }),
  route({
    operationId: 'spend',
    fn: 'spend',
    role: 'validator',
    method: 'POST',
    path: '/v1/spends',
    summary: 'Spend outputs: all inputs of a spending tx, or explicit spends (all or nothing)',
    description:
      'Evaluated at the chain tip + 1 (or blockHeight + 1). If any input fails, every input this request spent is rolled back; the error lists each input in details.spends.',
    body: s.spendBody,
    responses: {
      200: { description: 'every input spent', schema: s.spendResponse },
      400: E400,
      404: E404,
      409: {
        description: 'an input failed (details.spends: each input, the existing spender)',
        schema: s.errorEnvelope,
      },
      413: E413,
      503: E503,
    },
    async handle({ body }, ctx) {
      const { tx, spends, ...options } = body;
      const store = (await ctx.runtime()).store;
      const result = await store.spend(tx !== undefined ? { tx } : { spends: spends ?? [] }, options);
      return {
        statusCode: 200,
        body: { spends: result.spends.map((o) => ({ txid: o.txid, vout: o.vout, status: o.status })) },
      };
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
      'With flagAsLocked the parents are locked first (not spendable) and stay locked until POST /v1/locked unlocks them.',
    body: s.unspendBody,
    responses: { 200: OK, 400: E400, 404: E404, 409: E409, 413: E413, 503: E503 },
    async handle({ body }, ctx) {
      await (
        await ctx.runtime()
      ).store.unspend(body.spends, {
        blockHeight: body.blockHeight,
        flagAsLocked: body.flagAsLocked,
      });
      return ok();
    },
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
    async handle({ body }, ctx) {
      const result = await (await ctx.runtime()).store.setMined(body);
      return { statusCode: 200, body: result };
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
    responses: { 200: OK, 400: E400, 404: E404, 409: E409, 413: E413, 503: E503 },
    async handle({ body }, ctx) {
      await (await ctx.runtime()).store.setLocked(body.txids, body.locked);
      return ok();
    },
  }),
  route({
    operationId: 'setConflicting',
    fn: 'admin',
    role: 'blockValidation',
    method: 'POST',
    path: '/v1/conflicting',
    summary: 'Mark or unmark transactions as conflicting',
    body: s.conflictingBody,
    responses: { 200: OK, 400: E400, 404: E404, 409: E409, 413: E413, 503: E503 },
    async handle({ body }, ctx) {
      await (await ctx.runtime()).store.setConflicting(body.txids, body.conflicting);
      return ok();
    },
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
    responses: {
      200: OK,
      400: E400,
      404: E404,
      409: { description: 'an output failed: details.utxos', schema: s.errorEnvelope },
      413: E413,
      503: E503,
    },
    async handle({ body }, ctx) {
      await (await ctx.runtime()).store.freeze(body.utxos);
      return ok();
    },
  }),
  route({
    operationId: 'unfreeze',
    fn: 'admin',
    role: 'admin',
    method: 'POST',
    path: '/v1/unfreeze',
    summary: 'Unfreeze outputs',
    body: s.outpointsBody,
    responses: {
      200: OK,
      400: E400,
      404: E404,
      409: { description: 'an output failed: details.utxos', schema: s.errorEnvelope },
      413: E413,
      503: E503,
    },
    async handle({ body }, ctx) {
      await (await ctx.runtime()).store.unfreeze(body.utxos);
      return ok();
    },
  }),
  route({
    operationId: 'reassign',
    fn: 'admin',
    role: 'admin',
    method: 'POST',
    path: '/v1/reassign',
    summary: 'Reassign a frozen output to a new UTXO hash (spendable 1000 blocks later)',
    body: s.reassignBody,
    responses: { 200: OK, 400: E400, 404: E404, 409: E409, 413: E413, 503: E503 },
    async handle({ body }, ctx) {
      await (await ctx.runtime()).store.reassign(body);
      return ok();
    },
  }),
  route({
    operationId: 'preserve',
    fn: 'admin',
    role: 'blockValidation',
    method: 'POST',
    path: '/v1/preserve',
    summary: 'Keep transactions (no delete-at-height) until a height',
    body: s.preserveBody,
    responses: { 200: OK, 400: E400, 404: E404, 409: E409, 413: E413, 503: E503 },
    async handle({ body }, ctx) {
      await (await ctx.runtime()).store.preserve(body.txids, body.untilHeight);
      return ok();
    },
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
    async handle({ params, query }, ctx) {
      const status = await (await ctx.runtime()).store.getSpend({ ...params, utxoHash: query.utxoHash });
      return { statusCode: 200, body: status };
    },
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
    async handle({ query }, ctx) {
      const store = (await ctx.runtime()).store;
      return { statusCode: 200, body: await store.queryUnmined(query) };
    },
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
    async handle({ params }, ctx) {
      const counterConflicting = await (await ctx.runtime()).store.getCounterConflicting(params.txid);
      return { statusCode: 200, body: { txid: params.txid.toLowerCase(), counterConflicting } };
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
    async handle({ params }, ctx) {
      const conflictingChildren = await (await ctx.runtime()).store.getConflictingChildren(params.txid);
      return { statusCode: 200, body: { txid: params.txid.toLowerCase(), conflictingChildren } };
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
    responses: { 200: OK, 400: E400, 404: E404, 409: E409, 413: E413, 503: E503 },
    async handle({ body }, ctx) {
      await (await ctx.runtime()).store.setOnLongestChain(body.txids, body.onLongestChain);
      return ok();
    },
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
    async handle({ body }, ctx) {
      return { statusCode: 200, body: await (await ctx.runtime()).store.processConflicting(body.txids) };
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
    async handle({ body }, ctx) {
      const report = await (await ctx.runtime()).store.verifySpenders(body.txids, { repair: body.repair });
      const doubleAcknowledged = new Set(
        report.lost.filter((l) => l.state === 'spent-by-other').map((l) => `${l.txid}:${l.vout}`),
      ).size;
      if (doubleAcknowledged > 0) emitSingle('DoubleAcknowledgedOutputs', {}, doubleAcknowledged);
      return { statusCode: 200, body: report };
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
    async handle({ query }, ctx) {
      return { statusCode: 200, body: await (await ctx.runtime()).store.iterateUnmined(query) };
    },
  }),
  route({
    operationId: 'getChainTip',
    fn: 'admin',
    role: 'validator',
    method: 'GET',
    path: '/v1/chain/tip',
    summary: 'The chain tip height H the store evaluates at',
    responses: { 200: { description: 'the tip', schema: s.chainTipResponse }, 503: E503 },
    async handle(_input, ctx) {
      return { statusCode: 200, body: { height: await (await ctx.runtime()).store.getChainTip() } };
    },
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
    responses: { 200: { description: 'the tip', schema: s.chainTipResponse }, 400: E400, 413: E413, 503: E503 },
    async handle({ body }, ctx) {
      return { statusCode: 200, body: { height: await (await ctx.runtime()).store.setChainTip(body.height) } };
    },
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
    responses: { 200: { description: 'the tip', schema: s.chainTipResponse }, 400: E400, 413: E413, 503: E503 },
    async handle({ body }, ctx) {
      const height = await (await ctx.runtime()).store.setChainTip(body.height, { force: true });
      return { statusCode: 200, body: { height } };
    },
  }),
  route({
    operationId: 'health',
    fn: 'admin',
    role: 'validator',
    method: 'GET',
    path: '/v1/health',
    summary: 'Liveness of the engine, blob store and queue',
    responses: {
      200: { description: 'everything answers', schema: s.healthResponse },
      503: { description: 'degraded (same body), or the runtime could not start', schema: s.healthResponse },
    },
    async handle(_input, ctx) {
      const report = await (await ctx.runtime()).store.health();
      return { statusCode: report.status === 'ok' ? 200 : 503, body: report };
    },
  }),
  batchRoute({
    operationId: 'createTxs',
    fn: 'create',
    path: '/v1/batch/txs',
    summary: 'Store many transactions (each as POST /v1/txs, on its own)',
    description:
      'One result per tx, in order: {status: 201, result} or {status, error} as POST /v1/txs would answer. The txs go out as create-only engine batches (ENGINE_BATCH_SIZE records each). A second copy of a txid in the batch is TX_EXISTS.',
    body: s.batchTxsBody,
    items: 'txs',
    item: s.createBody,
    response: ['BatchCreateResponse', s.createResponse, "each tx's outcome"],
    run: (store, valid) => store.createMany(valid.map(({ tx, ...options }) => ({ tx, options }))),
    status: 201,
  }),
  batchRoute({
    operationId: 'spendTxs',
    fn: 'spend',
    path: '/v1/batch/spends',
    summary: 'Spend the inputs of many EF transactions (each all or nothing, as POST /v1/spends)',
    description:
      'One result per tx, in order: {status: 200, result: {spends}} or {status, error} (details.spends as POST /v1/spends). Of two txs of the batch spending one output the earlier one wins; the later one is rolled back whole.',
    body: s.batchSpendsBody,
    items: 'txs',
    item: ['tx', s.txHexSchema],
    response: ['BatchSpendResponse', s.spendResponse, "each tx's outcome"],
    run: (store, valid, { txs: _txs, ...options }) =>
      store.spendMany(
        valid.map((tx) => ({ tx })),
        options,
      ),
    result: (result) => ({ spends: result.spends.map((o) => ({ txid: o.txid, vout: o.vout, status: o.status })) }),
  }),
  batchRoute({
    operationId: 'getTxs',
    fn: 'get',
    path: '/v1/batch/get',
    summary: 'Read many transaction records (each as GET /v1/txs/{txid})',
    description: 'One result per txid, in order: {status: 200, result: view} or {status: 404, error}.',
    body: s.batchGetBody,
    items: 'txids',
    item: ['txid', s.txidSchema],
    response: ['BatchGetResponse', s.txViewSchema, "each txid's outcome"],
    run: (store, valid, body) => store.getMany(valid, body.fields),
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
    run: (store, valid) => store.previousOutputs(valid),
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
    run: (store, valid) => store.getSpendMany(valid),
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
    async handle({ body }, ctx) {
      const runtime = await ctx.runtime();
      const budgetMs = (body.maxSeconds ?? CLEANUP_DEFAULT_SECONDS) * 1000;
      const report = await runtime.cleanup.runPass({ deadline: cleanupDeadline(ctx.lambda, budgetMs) });
      emitMetrics(ctx.metrics, report);
      return { statusCode: 200, body: report };
    },
  }),
] as const satisfies readonly Route[];

/** The routes a function serves. */
export function routesOf(fn: FunctionName): Route[] {
  return ROUTES.filter((r) => r.fn === fn);
}

const PARAM = /\{([A-Za-z0-9_]+)\}/g;
const compiled = new Map<string, RegExp>();

function pattern(routePath: string): RegExp {
  let re = compiled.get(routePath);
  if (!re) {
    const source = routePath
      .split(/(\{[A-Za-z0-9_]+\})/)
      .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${source}/?$`);
    compiled.set(routePath, re);
  }
  return re;
}

/** Path parameter names of a route path, in order. */
export function paramNames(routePath: string): string[] {
  return [...routePath.matchAll(PARAM)].map((m) => m[1]);
}

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method'; allow: HttpMethod[] }
  | { kind: 'none' };

/** Finds the route of a concrete request path (e.g. /v1/txs/ab12...). */
export function matchRoute(routes: readonly Route[], method: string, requestPath: string): RouteMatch {
  const allow: HttpMethod[] = [];
  for (const r of routes) {
    const m = pattern(r.path).exec(requestPath);
    if (!m) continue;
    if (r.method !== method.toUpperCase()) {
      allow.push(r.method);
      continue;
    }
    const params: Record<string, string> = {};
    paramNames(r.path).forEach((name, i) => {
      let value = m[i + 1];
      try {
        value = decodeURIComponent(value);
      } catch {
        // keep the raw segment: validation reports it
      }
      params[name] = value;
    });
    return { kind: 'found', route: r, params };
  }
  return allow.length > 0 ? { kind: 'method', allow } : { kind: 'none' };
}
