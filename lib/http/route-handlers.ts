/**
 * What each route of the table (route-table.ts) does: one handler per operation id, typed from its entry's schemas
 * (a route without a handler, or a handler of no route, does not compile). A handler gets the validated input and
 * the started runtime; routes.ts joins the two.
 */
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import type { CleanupMetrics } from '../cleanup';
import { emitMetrics } from '../cleanup/report';
import type { Runtime } from '../runtime';
import type { ItemResult, SpendResult } from '../store/types';
import { checkBatchSize, parseItems, parseScalarItems, runItems } from './batch-items';
import { CLEANUP_DEFAULT_SECONDS, cleanupDeadline } from './cleanup-deadline';
import { emitSingle } from './observability';
import type { BatchItems } from './route-spec';
import { routeById, type OperationId, type RouteOf } from './route-table';

export interface RouteResult {
  statusCode: number;
  /** serialized as JSON; omitted for 204 */
  body?: unknown;
}

/** What a handler runs with: the started runtime (its store) and the Lambda's context. */
export interface HandlerContext {
  runtime: Runtime;
  store: Runtime['store'];
  lambda: Context;
  metrics: CleanupMetrics;
}

type Output<S> = S extends z.ZodType ? z.output<S> : undefined;

/** A route's validated input, typed from its schemas. */
export type RouteInput<R extends { params?: unknown; query?: unknown; body?: unknown }> = {
  params: Output<NonNullable<R['params']>>;
  query: Output<NonNullable<R['query']>>;
  body: Output<NonNullable<R['body']>>;
  /** the body came as a binary batch frame: its items are checked with the route's batch.binary.item */
  framed?: boolean;
};

export type RouteHandler<Input> = (input: Input, ctx: HandlerContext) => Promise<RouteResult>;

export type RouteHandlers = { [Id in OperationId]: RouteHandler<RouteInput<RouteOf<Id>>> };

const ok = (): RouteResult => ({ statusCode: 200, body: { status: 'OK' } });
const json = (body: unknown, statusCode = 200): RouteResult => ({ statusCode, body });
const spends = (result: SpendResult) => ({
  spends: result.spends.map((o) => ({ txid: o.txid, vout: o.vout, status: o.status })),
});

/**
 * A batch route's handler: the items checked as its entry says (batch-items.ts; from a binary frame with its
 * batch.binary.item), the valid ones run together by `run`, each outcome as {status, result} (`result` maps the
 * store's value) or {status, error}; with the body's `brief` (the write batches), a success as {status} alone.
 */
function batch<
  K extends string,
  T extends z.ZodType,
  B extends z.ZodType<Record<K, unknown[]> & { brief?: boolean }>,
  R,
>(
  spec: { body?: B; batch: BatchItems<K, T> },
  run: (store: Runtime['store'], valid: z.output<T>[], body: z.output<B>) => Promise<ItemResult<R>[]>,
  result: (value: R) => unknown = (value) => value,
): RouteHandler<{ body: z.output<B>; framed?: boolean }> {
  const { items, itemField, status, binary } = spec.batch;
  return async ({ body, framed }, { runtime, store }) => {
    const list = body[items];
    checkBatchSize(list, items, runtime.config.maxBatchItems);
    // a framed item's tx is bytes, where a JSON item's is hex: the same options, checked the same way
    const item = (framed === true && binary ? binary.item : spec.batch.item) as T;
    const parsed = itemField !== undefined ? parseScalarItems(list, itemField, item) : parseItems(list, item);
    // the items as they came (about the request's size: a block's tx hex) are not read again: not kept alive while
    // the engine answers (the body's list is zod's own copy, not the event's)
    list.length = 0;
    const out = await runItems(
      parsed,
      (valid) => run(store, valid, body),
      body.brief === true ? () => ({ status }) : (value) => ({ status, result: result(value) }),
    );
    return json(out);
  };
}

export const HANDLERS: RouteHandlers = {
  createTx: async ({ body: { tx, ...options } }, { store }) => json(await store.create(tx, options), 201),
  getTx: async ({ params, query }, { store }) => json(await store.get(params.txid, query.fields)),
  deleteTx: async ({ params }, { store }) => {
    await store.delete(params.txid);
    return { statusCode: 204 };
  },
  spend: async ({ body: { tx, spends: list, ...options } }, { store }) =>
    json(spends(await store.spend(tx !== undefined ? { tx } : { spends: list ?? [] }, options))),
  unspend: async ({ body }, { store }) => {
    await store.unspend(body.spends, { blockHeight: body.blockHeight, flagAsLocked: body.flagAsLocked });
    return ok();
  },
  setMined: async ({ body }, { store }) => json(await store.setMined(body)),
  setLocked: async ({ body }, { store }) => {
    await store.setLocked(body.txids, body.locked);
    return ok();
  },
  setConflicting: async ({ body }, { store }) => {
    await store.setConflicting(body.txids, body.conflicting);
    return ok();
  },
  freeze: async ({ body }, { store }) => {
    await store.freeze(body.utxos);
    return ok();
  },
  unfreeze: async ({ body }, { store }) => {
    await store.unfreeze(body.utxos);
    return ok();
  },
  reassign: async ({ body }, { store }) => {
    await store.reassign(body);
    return ok();
  },
  preserve: async ({ body }, { store }) => {
    await store.preserve(body.txids, body.untilHeight);
    return ok();
  },
  getUtxo: async ({ params, query }, { store }) => json(await store.getSpend({ ...params, utxoHash: query.utxoHash })),
  queryUnmined: async ({ query }, { store }) => json(await store.queryUnmined(query)),
  getCounterConflicting: async ({ params }, { store }) =>
    json({ txid: params.txid.toLowerCase(), counterConflicting: await store.getCounterConflicting(params.txid) }),
  getConflictingChildren: async ({ params }, { store }) =>
    json({ txid: params.txid.toLowerCase(), conflictingChildren: await store.getConflictingChildren(params.txid) }),
  setLongestChain: async ({ body }, { store }) => {
    await store.setOnLongestChain(body.txids, body.onLongestChain);
    return ok();
  },
  processConflicting: async ({ body }, { store }) => json(await store.processConflicting(body.txids)),
  verifySpenders: async ({ body }, { store }) => {
    const report = await store.verifySpenders(body.txids, { repair: body.repair });
    const doubleAcknowledged = new Set(
      report.lost.filter((l) => l.state === 'spent-by-other').map((l) => `${l.txid}:${l.vout}`),
    ).size;
    if (doubleAcknowledged > 0) emitSingle('DoubleAcknowledgedOutputs', {}, doubleAcknowledged);
    return json(report);
  },
  iterateUnmined: async ({ query }, { store }) => json(await store.iterateUnmined(query)),
  getChainTip: async (_input, { store }) => json({ height: await store.getChainTip() }),
  setChainTip: async ({ body }, { store }) => json({ height: await store.setChainTip(body.height) }),
  forceChainTip: async ({ body }, { store }) => json({ height: await store.setChainTip(body.height, { force: true }) }),
  health: async (_input, { store }) => {
    const report = await store.health();
    return json(report, report.status === 'ok' ? 200 : 503);
  },
  createTxs: batch(routeById('createTxs'), (store, valid) =>
    store.createMany(valid.map(({ tx, ...options }) => ({ tx, options }))),
  ),
  spendTxs: batch(
    routeById('spendTxs'),
    (store, valid, { txs: _txs, brief: _brief, ...options }) =>
      store.spendMany(
        valid.map((tx) => ({ tx })),
        options,
      ),
    spends,
  ),
  getTxs: batch(routeById('getTxs'), (store, valid, body) => store.getMany(valid, body.fields)),
  previousOutputs: batch(routeById('previousOutputs'), (store, valid) => store.previousOutputs(valid)),
  getUtxos: batch(routeById('getUtxos'), (store, valid) => store.getSpendMany(valid)),
  cleanup: async ({ body }, { runtime, lambda, metrics }) => {
    const budgetMs = (body.maxSeconds ?? CLEANUP_DEFAULT_SECONDS) * 1000;
    const report = await runtime.cleanup.runPass({ deadline: cleanupDeadline(lambda, budgetMs) });
    emitMetrics(metrics, report);
    return json(report);
  },
};
