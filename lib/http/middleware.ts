/**
 * The shared middy pipeline of the API functions:
 *   injectLambdaContext (Powertools Logger: structured JSON with the request id)
 *   -> observe (the cold start metric; per request its own Metrics, published when it ends: request count, latency,
 *      errors by code, a cleanup's report; one log line per request)
 *   -> errorMapper (typed errors -> status code + error envelope)
 *   -> validate (route, body size, JSON or a binary batch frame, zod schemas for path, query and body)
 *   -> the route's handler (calls the store) and JSON serialization.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { z } from 'zod';
import { getRuntime, setRuntimeHooks, warmRuntime } from '../runtime';
import { HttpError, invalidArgument, mapError } from './errors';
import {
  cleanupMetricsOf,
  emitSingle,
  emitSpendRefused,
  invocationOf,
  logger,
  metrics,
  MetricUnit,
  requestMetrics,
} from './observability';
import { matchRoute, paramNames, ROUTES, routesOf, type FunctionName, type Route } from './routes';
import { callerOf, invokerPath, type Caller } from './caller';
import { isDirectInvocation, directInvocationProblem, toDirectResult, toProxyEvent } from './direct-invocation';
import { checkFieldRoles } from './field-roles';
import { leastInvokerRole } from './roles';
import type { DirectInvocation, DirectResult } from './direct-invocation';
import { framedBody, isBinaryBody } from './binary-body';
import { LAMBDA_PAYLOAD_BYTES, MAX_BINARY_BODY_BYTES, MAX_BODY_BYTES, payloadBytesOver } from './payload-limits';
import { emptyObject } from './schemas';
import { zodError } from './zod-error';

/** An API function's handler: API Gateway proxy events, and direct invocations (lib/http/direct-invocation.ts). */
export interface ApiHandler {
  (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult>;
  (event: DirectInvocation, context: Context): Promise<DirectResult>;
}

interface Validated {
  route: Route;
  input: { params: unknown; query: unknown; body: unknown; framed?: boolean };
}

/** Per-event state shared by the middlewares and the handler. */
const state = new WeakMap<
  APIGatewayProxyEvent,
  { route?: Route; validated?: Validated; started: number; direct?: boolean; caller?: Caller; metrics: Metrics }
>();

function stateOf(event: APIGatewayProxyEvent) {
  let s = state.get(event);
  if (!s) {
    s = { started: performance.now(), metrics: requestMetrics() };
    state.set(event, s);
  }
  return s;
}

function parse<T extends z.ZodType>(where: 'body' | 'query' | 'path', schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw zodError(where, input, result.error);
  return result.data;
}

function headerValue(event: APIGatewayProxyEvent, name: string): string | undefined {
  const headers = event.headers ?? {};
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name && v !== undefined) return v;
  return undefined;
}

/** Resolves the route of an event: by its API Gateway resource, else by matching its path. */
export function resolveRoute(
  routes: readonly Route[],
  event: APIGatewayProxyEvent,
): { route: Route; params: Record<string, string> } {
  const method = (event.httpMethod ?? '').toUpperCase();
  const byResource = routes.find((r) => r.method === method && r.path === event.resource);
  if (byResource) {
    const params: Record<string, string> = {};
    for (const name of paramNames(byResource.path)) {
      const v = event.pathParameters?.[name];
      if (v !== undefined && v !== null) params[name] = v;
    }
    return { route: byResource, params };
  }
  // An event from API Gateway names the resource that was authorized. Only the route's own resource runs it: a
  // request that reached this function through a catch-all resource (ANY on /{proxy+} or on the route tree, e.g.
  // a path variant such as a trailing slash) was authorized for that resource's ARN, not the route's, and running
  // the route would bypass the per-route IAM roles (cdk/api.ts). Path matching serves events without a resource.
  const viaOtherResource = typeof event.resource === 'string' && event.resource !== '';
  const match = matchRoute(routes, method, event.path ?? '');
  if (match.kind === 'found' && !viaOtherResource) return { route: match.route, params: match.params };
  if (match.kind === 'found')
    throw new HttpError(404, 'ROUTE_NOT_FOUND', `no route for ${method} ${event.path} (resource ${event.resource})`);
  // A known path with another method reaches the admin function through the API's per-resource ANY (cdk/api.ts):
  // the methods it allows are those of every function, not only this one's.
  const known = matchRoute(ROUTES, method, event.path ?? '');
  if (known.kind === 'found') {
    // only a direct invocation can reach the wrong function: API Gateway routes each path to its own
    throw new HttpError(
      404,
      'ROUTE_NOT_FOUND',
      `${method} ${known.route.path} is served by the ${known.route.fn} function, not this one`,
      { function: known.route.fn },
    );
  }
  if (known.kind === 'method') {
    const allow = [...new Set(known.allow)];
    throw new HttpError(
      405,
      'METHOD_NOT_ALLOWED',
      `${method} is not allowed on ${event.path}`,
      { allow },
      { allow: allow.join(', ') },
    );
  }
  throw new HttpError(404, 'ROUTE_NOT_FOUND', `no route for ${method} ${event.path}`);
}

function bodyText(event: APIGatewayProxyEvent): string | undefined {
  if (event.body === null || event.body === undefined || event.body === '') return undefined;
  // a text body is measured, not copied to bytes and back (a batch body is megabytes)
  const bytes = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : undefined;
  const size = bytes ? bytes.length : Buffer.byteLength(event.body, 'utf8');
  if (size > MAX_BODY_BYTES) {
    throw new HttpError(413, 'PAYLOAD_TOO_LARGE', `the body is ${size} bytes; the limit is ${MAX_BODY_BYTES}`);
  }
  return bytes ? bytes.toString('utf8') : event.body;
}

/** Route, body size, JSON and schemas; the validated input is kept for the handler. */
export function validate(routes: readonly Route[]): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    name: 'validate',
    before: (request) => {
      const event = request.event;
      const s = stateOf(event);
      const { route, params } = resolveRoute(routes, event);
      s.route = route;

      // a binary batch body (lib/http/binary-body.ts) travels base64 in the event: its limit is 3/4 of a JSON body's
      const framed = isBinaryBody(event.headers);
      const limit = framed ? MAX_BINARY_BODY_BYTES : MAX_BODY_BYTES;
      const declaredLength = Number(headerValue(event, 'content-length'));
      if (Number.isFinite(declaredLength) && declaredLength > limit) {
        throw new HttpError(413, 'PAYLOAD_TOO_LARGE', `the body is ${declaredLength} bytes; the limit is ${limit}`);
      }

      const parsedParams = route.params ? parse('path', route.params, params) : undefined;

      // null-prototype map and own-key lookups: a parameter named `__proto__` or `constructor` is reported as
      // unknown, not dropped or mistaken for an inherited member
      const rawQuery: Record<string, string> = Object.create(null) as Record<string, string>;
      const multi = event.multiValueQueryStringParameters ?? {};
      for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) {
        if (v === undefined) continue;
        const all = Object.hasOwn(multi, k) ? multi[k] : undefined;
        if ((all?.length ?? 0) > 1) throw invalidArgument(k, 'given more than once', { in: 'query' });
        rawQuery[k] = v;
      }
      let query: unknown;
      if (route.query) query = parse('query', route.query, rawQuery);
      else if (Object.keys(rawQuery).length > 0) {
        throw invalidArgument(Object.keys(rawQuery)[0], 'unknown query parameter', { in: 'query' });
      }

      // a route without a body schema takes no body: none, or {} (a body with fields is rejected, not ignored)
      let body: unknown;
      const text = framed ? undefined : bodyText(event);
      let json: unknown;
      if (framed) json = framedBody(route, event);
      else if (text === undefined || text.trim() === '') {
        if (route.body && !route.bodyOptional) throw invalidArgument('body', 'required: a JSON object');
        json = {};
      } else {
        try {
          json = JSON.parse(text);
        } catch (err) {
          throw invalidArgument('body', `malformed JSON: ${(err as Error).message}`);
        }
      }
      if (route.body) body = parse('body', route.body, json);
      else parse('body', emptyObject, json);
      // fields above the route's own role (lib/http/field-roles.ts), for the caller's role (lib/http/caller.ts)
      s.caller = callerOf({
        event,
        direct: s.direct === true,
        routeRole: route.role,
        directRole: leastInvokerRole(route.fn, ROUTES) ?? route.role,
        // Lambda's, not the event's: which ARN and qualifier the invocation named (the gateway alias: API Gateway)
        invokedArn: request.context?.invokedFunctionArn,
      });
      checkFieldRoles(ROUTES, route, json, s.caller.role);
      s.validated = { route, input: { params: parsedParams, query: query ?? {}, body, framed } };
    },
  };
}

/** Maps any error to the error envelope; 5xx are logged with their stack. */
export function errorMapper(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    name: 'errorMapper',
    onError: (request) => {
      const mapped = mapError(request.error);
      if (mapped.unexpected)
        logger.error('request failed', { ...invocationOf(request.context), error: request.error as Error });
      request.response = {
        statusCode: mapped.statusCode,
        headers: {
          'content-type': 'application/json',
          'x-request-id': request.context?.awsRequestId ?? '',
          ...mapped.headers,
        },
        body: JSON.stringify(mapped.body),
      };
    },
  };
}

/** Per request: Requests and Latency by operation, errors by operation and code, one structured log line. */
export function observe(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const finish = (request: middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult>): void => {
    const s = stateOf(request.event);
    const operation = s.route?.operationId ?? 'unrouted';
    const latencyMs = performance.now() - s.started;
    const statusCode = request.response?.statusCode ?? 500;
    let errorCode: string | undefined;
    if (statusCode >= 400 && request.response?.body) {
      try {
        errorCode = (JSON.parse(request.response.body) as { error?: { code?: string } }).error?.code;
      } catch {
        errorCode = 'UNKNOWN';
      }
    }
    const own = s.metrics;
    own.addDimension('operation', operation);
    own.addMetric('Requests', MetricUnit.Count, 1);
    own.addMetric('Latency', MetricUnit.Milliseconds, latencyMs);
    own.addMetric(statusCode >= 400 ? 'Errors' : 'Successes', MetricUnit.Count, 1);
    own.publishStoredMetrics();
    if (errorCode) emitSingle('ErrorsByCode', { operation, code: errorCode });
    // the way in and the caller, as far as the function can know them (lib/http/caller.ts); an admin route's line
    // is the audit record of an admin operation (docs/security.md, "Direct invocation")
    // a request refused before its caller was known (no route, a bad body): the way in only
    const caller: Partial<Caller> = s.caller ?? {
      path: invokerPath({ direct: s.direct === true, invokedArn: request.context?.invokedFunctionArn }),
    };
    // invoker follows invokedArn, Lambda's own (the gateway alias is API Gateway's); callerArn is API Gateway's
    // signer; claimedCallerArn is a signer named by an event sent with Invoke, not believed
    const line = {
      ...invocationOf(request.context),
      operation,
      method: request.event.httpMethod,
      path: request.event.path,
      statusCode,
      latencyMs: Math.round(latencyMs * 100) / 100,
      invoker: caller.path,
      ...(caller.arn ? { callerArn: caller.arn } : {}),
      ...(caller.claimedArn ? { claimedCallerArn: caller.claimedArn } : {}),
      ...(caller.role ? { callerRole: caller.role } : {}),
      ...(request.context?.invokedFunctionArn ? { invokedArn: request.context.invokedFunctionArn } : {}),
      ...(errorCode ? { errorCode } : {}),
    };
    logger.info('request', line);
    if (s.route?.role === 'admin') logger.warn('admin operation', line);
  };
  return {
    name: 'observe',
    before: (request) => {
      metrics.captureColdStartMetric(request.context?.functionName);
      stateOf(request.event).started = performance.now();
    },
    after: finish,
    onError: finish,
  };
}

/**
 * The route's answer as API Gateway's proxy result. An answer over Lambda's 6 MB response limit would fail in AWS
 * (a 502 for the caller, the work done but its outcome lost), so it is refused here as 413 RESPONSE_TOO_LARGE, which
 * tells the caller to ask for fewer items (or fields) per request.
 */
function serialize(statusCode: number, body: unknown, context: Context): APIGatewayProxyResult {
  const headers = { 'content-type': 'application/json', 'x-request-id': context?.awsRequestId ?? '' };
  if (statusCode === 204 || body === undefined) return { statusCode, headers, body: '' };
  const result = { statusCode, headers, body: JSON.stringify(body) };
  const bytes = payloadBytesOver(result, LAMBDA_PAYLOAD_BYTES);
  if (bytes !== undefined) {
    throw new HttpError(
      413,
      'RESPONSE_TOO_LARGE',
      `the answer would be ${bytes} bytes, over Lambda's response limit of ${LAMBDA_PAYLOAD_BYTES}: ask for fewer items or fields per request`,
      { bytes, limit: LAMBDA_PAYLOAD_BYTES },
    );
  }
  return result;
}

/** The middy handler serving a function's routes (functions/<fn>.ts). */
export function httpHandler(fn: FunctionName): ApiHandler {
  const routes = routesOf(fn);
  // connect during the init phase (functions/<fn>.ts builds its handler at module load)
  setRuntimeHooks({ onSpendRefused: emitSpendRefused });
  warmRuntime();
  const base = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    const validated = state.get(event)?.validated;
    if (!validated) throw new Error('request was not validated');
    const result = await validated.route.handle(validated.input, {
      runtime: getRuntime,
      lambda: context,
      metrics: cleanupMetricsOf(stateOf(event).metrics),
    });
    return serialize(result.statusCode, result.body, context);
  };
  const api = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>(base)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(observe())
    .use(errorMapper())
    .use(validate(routes));
  const handler = async (
    event: APIGatewayProxyEvent | DirectInvocation,
    context: Context,
  ): Promise<APIGatewayProxyResult | DirectResult> => {
    if (!isDirectInvocation(event)) return api(event, context);
    const problem = directInvocationProblem(event);
    if (problem) return problem;
    const proxy = toProxyEvent(event, context?.awsRequestId ?? '');
    stateOf(proxy).direct = true;
    return toDirectResult(await api(proxy, context));
  };
  return handler as ApiHandler;
}
