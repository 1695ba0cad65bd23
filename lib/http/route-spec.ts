/**
 * What one entry of the route table (route-table.ts) is: data only, no handler. Method, path, the Lambda function
 * that serves it (functions/<fn>.ts), the least caller role (roles.ts), its request schemas (path, query, body), its
 * documented responses and, for a batch route, how its items are checked. The handlers (route-handlers.ts) are joined
 * to the entries by operation id (routes.ts); the CDK app (cdk/api.ts), the OpenAPI document and the client's
 * generated types read the entries.
 */
import type { z } from 'zod';
import type { FrameKind } from './binary-batch';
import type { ApiRole } from './roles';
import * as s from './schemas';

/** The Lambda functions that serve routes: each is functions/<name>.ts. */
export type FunctionName = 'create' | 'get' | 'spend' | 'unspend' | 'set-mined' | 'get-utxo' | 'status' | 'admin';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
}

/**
 * A batch route's items (POST /v1/batch/...): the body's `items` list is checked against MAX_BATCH_ITEMS, each item
 * with the single request's schema `item` (a scalar item, a tx hex or a txid, as the single request's field
 * `itemField`, which errors name), and each item's outcome comes back in order as {status, result} (`status`,
 * default 200) or {status, error}.
 */
export interface BatchItems<K extends string = string, T extends z.ZodType = z.ZodType> {
  items: K;
  item: T;
  itemField?: string;
  status: number;
  /** set when the route also takes its items as a binary frame (BINARY_MEDIA_TYPE) */
  binary?: BinaryBatch;
}

/** The media type of a binary batch body (docs/api.md, "Binary batch bodies"); API Gateway passes it base64. */
export const BINARY_MEDIA_TYPE = 'application/octet-stream';

/**
 * How a batch route reads a binary frame (lib/http/binary-batch.ts): the frame's kind byte, and the schema of a decoded
 * item (the tx's bytes, with the item's options on POST /v1/batch/txs), checked as `item` checks a JSON item.
 */
export interface BinaryBatch {
  kind: FrameKind;
  item: z.ZodType;
}

/** One route of the table. */
export interface RouteSpec {
  operationId: string;
  fn: FunctionName;
  /** the least caller role allowed (lib/http/roles.ts): the CDK app's IAM roles and the OpenAPI document follow it */
  role: ApiRole;
  method: HttpMethod;
  /** API Gateway resource path, e.g. /v1/txs/{txid} */
  path: string;
  summary: string;
  description?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** an empty body is accepted as {} */
  bodyOptional?: boolean;
  responses: Record<number, ResponseDoc>;
  /** set on a batch route (POST /v1/batch/...) */
  batch?: BatchItems;
  /**
   * body fields (of each batch item on a batch route) accepted only from the roles that may call another route,
   * "METHOD /path", which sets the same state on an existing tx (lib/http/field-roles.ts): otherwise 403
   * FIELD_NOT_ALLOWED. A function serving such a route may be invoked directly only by those roles.
   */
  restrictedFields?: Record<string, string>;
  /**
   * top-level body flags (also on a batch route) accepted only from the roles that may call another route,
   * "METHOD /path", whose power they use (ignoreLocked: POST /v1/locked): otherwise 403 FIELD_NOT_ALLOWED. Unlike
   * restrictedFields they do not raise who may invoke the function directly: a direct invoker holds the function's
   * least invoker role (lib/http/roles.ts leastInvokerRole), so below the flag's role it is refused them.
   */
  roleFlags?: Record<string, string>;
}

/**
 * A route with its static types kept (operation id, method, path, function, schemas, responses): the handlers are
 * typed from them, and the typed client (packages/client) renders its types from them, so a change of the table is a
 * change of the client (npm test).
 */
export interface TypedRouteSpec<
  Id extends string,
  M extends HttpMethod,
  Path extends string,
  F extends FunctionName,
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends Record<number, ResponseDoc>,
> extends RouteSpec {
  operationId: Id;
  method: M;
  path: Path;
  fn: F;
  params?: P;
  query?: Q;
  body?: B;
  responses: R;
}

const PARAM = /\{([A-Za-z0-9_]+)\}/g;

/** Path parameter names of a route path, in order. */
export function paramNames(routePath: string): string[] {
  return [...routePath.matchAll(PARAM)].map((m) => m[1]);
}

/** A route entry, its types inferred (a path, query or body it lacks is z.ZodUndefined). */
export function route<
  const Id extends string,
  M extends HttpMethod,
  const Path extends string,
  F extends FunctionName,
  R extends Record<number, ResponseDoc>,
  P extends z.ZodType = z.ZodUndefined,
  Q extends z.ZodType = z.ZodUndefined,
  B extends z.ZodType = z.ZodUndefined,
>(spec: Omit<TypedRouteSpec<Id, M, Path, F, P, Q, B, R>, 'batch'>): TypedRouteSpec<Id, M, Path, F, P, Q, B, R> {
  return spec;
}

export const E400 = {
  description: 'INVALID_ARGUMENT: the field named in error.details.field',
  schema: s.errorEnvelope,
};
export const E404 = { description: 'TX_NOT_FOUND (or UTXO_NOT_FOUND)', schema: s.errorEnvelope };
export const E409 = {
  description:
    'a state conflict: SPENT, FROZEN, LOCKED, CONFLICTING, CREATING, COINBASE_IMMATURE, UTXO_HASH_MISMATCH, ...',
  schema: s.errorEnvelope,
};
export const E413 = {
  description:
    "PAYLOAD_TOO_LARGE: body over 6,225,920 bytes (Lambda's 6 MB payload less a reserve for the event); " +
    'RESPONSE_TOO_LARGE: the answer would exceed 6 MB (ask for fewer items or fields); ' +
    'TOO_MANY_OUTPUTS: a get with utxos would list more than MAX_GET_OUTPUTS outputs; TXS_TOO_LARGE: a get with tx ' +
    'would answer more than MAX_GET_TX_BYTES of txs (each refused before they are read)',
  schema: s.errorEnvelope,
};
export const E503 = {
  description: 'STORAGE_ERROR: the engine, blob store or queue failed; retry',
  schema: s.errorEnvelope,
};
export const OK = { description: 'done', schema: s.okResponse };

/** The answers of a change that returns {status: 'OK'}. */
export const E403_FIELD = {
  description: "FIELD_NOT_ALLOWED: a field above the caller's role (error.details.field, details.required)",
  schema: s.errorEnvelope,
};
export const CHANGE = { 200: OK, 400: E400, 404: E404, 409: E409, 413: E413, 503: E503 };

/** The answers of a change of outputs, each on its own (freeze, unfreeze). */
export const OUTPUTS_CHANGE = {
  ...CHANGE,
  409: { description: 'an output failed: details.utxos', schema: s.errorEnvelope },
};

/** The answers of setting the chain tip. */
export const TIP_CHANGE = {
  200: { description: 'the tip', schema: s.chainTipResponse },
  400: E400,
  413: E413,
  503: E503,
};

/** What sets one batch route apart; batchRoute derives its entry. The 200 answer is s.batchResponse(id, itemSchema). */
interface BatchSpec<
  Id extends string,
  Path extends string,
  F extends FunctionName,
  K extends string,
  B extends z.ZodType<Record<K, unknown[]>>,
  T extends z.ZodType,
  RS extends z.ZodType,
> {
  operationId: Id;
  fn: F;
  path: Path;
  summary: string;
  description?: string;
  body: B;
  items: K;
  item: T;
  /** a scalar item is checked as this field of the single request */
  itemField?: string;
  response: readonly [id: string, itemSchema: RS, description: string];
  /** each valid item's status (default 200) */
  status?: number;
  /** as RouteSpec.restrictedFields, for each item */
  restrictedFields?: Record<string, string>;
  /** as RouteSpec.roleFlags (top-level fields of the batch body) */
  roleFlags?: Record<string, string>;
  /** the route also takes a binary frame */
  binary?: BinaryBatch;
}

/** The responses of every batch route (the same as a route literal's inferred ones). */
export type BatchResponses<RS extends z.ZodType> = {
  200: { description: string; schema: ReturnType<typeof s.batchResponse<RS>> };
  400: typeof E400;
  413: typeof E413;
  503: typeof E503;
};

/** A batch route (POST, validator role) whose `batch` says how its items are checked. */
export type BatchRouteSpec<
  Id extends string,
  Path extends string,
  F extends FunctionName,
  K extends string,
  B extends z.ZodType,
  T extends z.ZodType,
  RS extends z.ZodType,
> = TypedRouteSpec<Id, 'POST', Path, F, z.ZodType, z.ZodType, B, BatchResponses<RS>> & { batch: BatchItems<K, T> };

export function batchRoute<
  const Id extends string,
  const Path extends string,
  F extends FunctionName,
  const K extends string,
  B extends z.ZodType<Record<K, unknown[]>>,
  T extends z.ZodType,
  RS extends z.ZodType,
>(spec: BatchSpec<Id, Path, F, K, B, T, RS>): BatchRouteSpec<Id, Path, F, K, B, T, RS> {
  const [id, itemSchema, description] = spec.response;
  return {
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
    batch: {
      items: spec.items,
      item: spec.item,
      ...(spec.itemField !== undefined && { itemField: spec.itemField }),
      status: spec.status ?? 200,
      ...(spec.binary !== undefined && { binary: spec.binary }),
    },
    ...(spec.restrictedFields !== undefined && { restrictedFields: spec.restrictedFields }),
    ...(spec.roleFlags !== undefined && { roleFlags: spec.roleFlags }),
  };
}
