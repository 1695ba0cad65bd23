/**
 * Direct invocation: callers inside AWS may invoke an API function with the Lambda Invoke API instead of going
 * through API Gateway (no per-request API price, no 29 s integration timeout). The event names the route the way
 * the route table does and carries the body as JSON, not as a string:
 *
 *   {"route": "POST /v1/batch/spends", "body": {"txs": ["..."]}}
 *   {"route": "GET /v1/txs/{txid}", "pathParameters": {"txid": "..."}, "queryStringParameters": {"fields": "fee"}}
 *   {"route": "GET /v1/txs/4a5e1e4b..."}            (a concrete path is matched against the route table)
 *   {"route": "POST /v1/batch/spends", "bodyBase64": "VVRYQgEC..."}   (a binary batch frame, base64)
 *
 * and the answer is the HTTP route's answer with the body parsed: {statusCode, headers, body?} (no body for 204).
 * The same validation, handlers and error envelope serve both ways in: the event becomes an API Gateway proxy event.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ErrorBody } from './errors';
import { proxyIdentity } from './proxy-identity';
import { BINARY_MEDIA_TYPE } from './route-spec';

export interface DirectInvocation {
  /** "METHOD /path": the route table's resource path (with pathParameters) or a concrete path */
  route: string;
  pathParameters?: Record<string, string>;
  queryStringParameters?: Record<string, string>;
  /** the JSON body (an object), as the HTTP request would carry it */
  body?: unknown;
  /**
   * instead of `body`: a binary batch frame (lib/http/binary-batch.ts), base64, as an application/octet-stream body
   * (Lambda's payload is JSON: the frame's bytes cannot travel as they are)
   */
  bodyBase64?: string;
}

export interface DirectResult {
  statusCode: number;
  headers: Record<string, string>;
  /** the parsed JSON body; absent for 204 */
  body?: unknown;
}

/** An event is a direct invocation when it names a route and is not an API Gateway event. */
export function isDirectInvocation(event: unknown): event is DirectInvocation {
  return (
    event !== null &&
    typeof event === 'object' &&
    typeof (event as { route?: unknown }).route === 'string' &&
    (event as { httpMethod?: unknown }).httpMethod === undefined
  );
}

const ROUTE = /^(GET|POST|PUT|DELETE) (\/\S*)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The problem with a direct invocation's shape, as a 400 answer; undefined when it is well formed. */
export function directInvocationProblem(event: DirectInvocation): DirectResult | undefined {
  const bad = (field: string, problem: string): DirectResult => ({
    statusCode: 400,
    headers: { 'content-type': 'application/json' },
    body: {
      error: { code: 'INVALID_ARGUMENT', message: `${field}: ${problem}`, details: { field, in: 'event' } },
    } satisfies ErrorBody,
  });
  if (!ROUTE.test(event.route)) return bad('route', 'expected "METHOD /path", e.g. "POST /v1/batch/spends"');
  for (const key of ['pathParameters', 'queryStringParameters'] as const) {
    const map = event[key];
    if (map === undefined || map === null) continue;
    if (typeof map !== 'object' || Array.isArray(map)) return bad(key, 'expected an object of strings');
    for (const [k, v] of Object.entries(map)) if (typeof v !== 'string') return bad(`${key}.${k}`, 'expected a string');
  }
  const known = new Set(['route', 'pathParameters', 'queryStringParameters', 'body', 'bodyBase64']);
  for (const key of Object.keys(event)) if (!known.has(key)) return bad(key, 'unknown field');
  if (event.bodyBase64 !== undefined) {
    if (event.body !== undefined) return bad('bodyBase64', 'give body (JSON) or bodyBase64 (a binary frame), not both');
    // Buffer.from skips what is not base64: a corrupted frame would be read as other bytes
    if (typeof event.bodyBase64 !== 'string' || event.bodyBase64.length % 4 !== 0 || !BASE64.test(event.bodyBase64)) {
      return bad('bodyBase64', 'expected a base64 string (RFC 4648, padded)');
    }
  }
  return undefined;
}

/** The API Gateway proxy event the HTTP route would have received. */
export function toProxyEvent(event: DirectInvocation, requestId: string): APIGatewayProxyEvent {
  const [, method, target] = ROUTE.exec(event.route) ?? [];
  const pathParameters = event.pathParameters ?? null;
  const templated = target.includes('{');
  const path = templated
    ? target.replace(/\{([^}]+)\}/g, (whole, name: string) =>
        pathParameters && Object.hasOwn(pathParameters, name) ? encodeURIComponent(pathParameters[name]) : whole,
      )
    : target;
  const query = event.queryStringParameters ?? null;
  const multiQuery = query
    ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]] as [string, string[]]))
    : null;
  const binary = typeof event.bodyBase64 === 'string';
  const body = binary
    ? (event.bodyBase64 as string)
    : event.body === undefined || event.body === null
      ? null
      : JSON.stringify(event.body);
  const contentType = binary ? BINARY_MEDIA_TYPE : 'application/json';
  return {
    // a templated route is resolved by its resource, a concrete path by matching it against the route table
    resource: templated ? target : '',
    path,
    httpMethod: method,
    headers: { 'content-type': contentType },
    multiValueHeaders: { 'content-type': [contentType] },
    queryStringParameters: query,
    multiValueQueryStringParameters: multiQuery,
    pathParameters,
    stageVariables: null,
    body,
    isBase64Encoded: binary,
    requestContext: {
      accountId: '',
      apiId: 'direct',
      authorizer: null,
      protocol: 'lambda-invoke',
      httpMethod: method,
      identity: proxyIdentity('', null),
      path,
      stage: 'direct',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'direct',
      resourcePath: templated ? target : path,
    },
  };
}

/** The HTTP answer with its body parsed. */
export function toDirectResult(result: APIGatewayProxyResult): DirectResult {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  if (result.body === undefined || result.body === '') return { statusCode: result.statusCode, headers };
  return { statusCode: result.statusCode, headers, body: JSON.parse(result.body) as unknown };
}
