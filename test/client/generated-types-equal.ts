/**
 * Compile-time test (`npm run typecheck`): the client's generated API types (packages/client/src/generated) equal
 * the types zod and the route table infer on the server, operation by operation: request parts (input side),
 * success answers (output side), routes, function names, methods and error codes. A generator that renders a
 * schema wrongly, or a generated file edited by hand, fails to compile here, naming the operation.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../../lib/domain/errors';
import type { HttpErrorCode } from '../../lib/http/errors';
import type { FunctionName, HttpMethod } from '../../lib/http/route-spec';
import type { ROUTE_TABLE } from '../../lib/http/route-table';
import type * as api from '../../packages/client/src/generated/api-types';

/** Deeply the same shape: a mapped copy keeps optional modifiers and index signatures and flattens intersections. */
type Normal<T> = T extends readonly (infer E)[] ? Normal<E>[] : T extends object ? { [K in keyof T]: Normal<T[K]> } : T;
type Equal<A, B> = (<G>() => G extends Normal<A> ? 1 : 2) extends <G>() => G extends Normal<B> ? 1 : 2 ? true : false;

type AnyRoute = (typeof ROUTE_TABLE)[number];
type ServerId = AnyRoute['operationId'];
type RouteOf<Id extends ServerId> = Extract<AnyRoute, { operationId: Id }>;
type SchemaOf<R, K extends 'params' | 'query' | 'body'> = K extends keyof R ? Exclude<R[K], undefined> : never;

/**
 * One request part as the server reads it: absent (a route without the part infers the bare z.ZodType or
 * z.ZodUndefined; the client types it never), optional (every field optional) or required.
 */
type Part<S, K extends string> = [S] extends [never]
  ? { [k in K]?: never }
  : z.ZodType extends S
    ? { [k in K]?: never }
    : S extends z.ZodUndefined
      ? { [k in K]?: never }
      : S extends z.ZodType
        ? object extends z.input<S>
          ? { [k in K]?: z.input<S> }
          : { [k in K]: z.input<S> }
        : never;
type ServerRequest<Id extends ServerId> = Part<SchemaOf<RouteOf<Id>, 'params'>, 'params'> &
  Part<SchemaOf<RouteOf<Id>, 'query'>, 'query'> &
  Part<SchemaOf<RouteOf<Id>, 'body'>, 'body'>;

type SuccessStatus = 200 | 201 | 204;
type ServerResponse<Id extends ServerId> = {
  [S in keyof RouteOf<Id>['responses'] & SuccessStatus]: S extends 204
    ? void
    : RouteOf<Id>['responses'][S] extends { schema: infer Z extends z.ZodType }
      ? z.output<Z>
      : void;
}[keyof RouteOf<Id>['responses'] & SuccessStatus];

type Routes = typeof api.ROUTES;

/** The operations whose generated request, answer or route differs from the server's. */
export type Mismatched = {
  [Id in ServerId]: Id extends keyof api.Operations
    ? Equal<api.Operations[Id]['request'], ServerRequest<Id>> extends true
      ? Equal<api.Operations[Id]['response'], ServerResponse<Id>> extends true
        ? Equal<
            Routes[Id],
            {
              readonly method: RouteOf<Id>['method'];
              readonly path: RouteOf<Id>['path'];
              readonly fn: RouteOf<Id>['fn'];
            }
          > extends true
          ? never
          : `${Id}: route`
        : `${Id}: response`
      : `${Id}: request`
    : `${Id}: missing`;
}[ServerId];

type Check<T extends true> = T;
export type Checks = [
  Check<[Mismatched] extends [never] ? true : false>,
  Check<Equal<keyof api.Operations, ServerId>>,
  Check<Equal<keyof Routes, ServerId>>,
  Check<Equal<api.FunctionName, FunctionName>>,
  Check<Equal<api.HttpMethod, HttpMethod>>,
  Check<Equal<api.StoreErrorCode, ErrorCode>>,
  Check<Equal<api.HttpErrorCode, HttpErrorCode>>,
];

// Names the mismatched operations in the compiler's message when there are any.
export const mismatched: [Mismatched] extends [never] ? 'none' : Mismatched = 'none';
