/**
 * The served routes: each entry of the route table (route-table.ts) joined to its handler (route-handlers.ts), and
 * finding the route of a request. The functions' middleware (middleware.ts) and the local server route with these.
 */
import type { Context } from 'aws-lambda';
import type { CleanupMetrics } from '../cleanup';
import type { Runtime } from '../runtime';
import { HANDLERS, type HandlerContext, type RouteResult } from './route-handlers';
import { paramNames, type FunctionName, type HttpMethod, type RouteSpec } from './route-spec';
import { ROUTE_TABLE } from './route-table';

export { paramNames, type FunctionName, type HttpMethod, type ResponseDoc } from './route-spec';
export type { RouteResult } from './route-handlers';

export interface RouteContext {
  runtime: () => Promise<Runtime>;
  lambda: Context;
  metrics: CleanupMetrics;
}

/** A route of the table with its handler. */
export interface Route extends RouteSpec {
  /** `framed`: the body came as a binary batch frame (lib/http/binary-body.ts), its txs as bytes */
  handle(
    input: { params: unknown; query: unknown; body: unknown; framed?: boolean },
    ctx: RouteContext,
  ): Promise<RouteResult>;
}

type AnyHandler = (input: unknown, ctx: HandlerContext) => Promise<RouteResult>;

/** Every route, in the table's order, with its handler (which runs once the runtime has started). */
export const ROUTES: readonly Route[] = ROUTE_TABLE.map((spec) => {
  const handler = HANDLERS[spec.operationId] as AnyHandler;
  return {
    ...spec,
    async handle(input, { runtime: start, lambda, metrics }) {
      const runtime = await start();
      return handler(input, { runtime, store: runtime.store, lambda, metrics });
    },
  };
});

/** The routes a function serves. */
export function routesOf(fn: FunctionName): Route[] {
  return ROUTES.filter((r) => r.fn === fn);
}

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
