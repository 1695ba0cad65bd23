/**
 * The local server (`npm start`): a node:http server on 127.0.0.1:PORT that turns each request into an API Gateway
 * REST (v1) proxy event and invokes the same Lambda handlers as AWS (functions/*.ts), chosen by the route table.
 * It also serves GET /openapi.json, passes an application/octet-stream body base64 as API Gateway does (a binary batch
 * body), answers 413 where Lambda's 6 MB payload limit would refuse a request (see payload-limits.ts), runs the
 * scheduled cleanup function every CLEANUP_INTERVAL_SECONDS, logs one line per request, and shuts down cleanly: stop
 * accepting, finish in-flight requests (each acknowledged write is complete before its response), then close the
 * engine.
 *
 * The runtime (engine, blobs, queue) is the same process-wide runtime the handlers use (lib/runtime.ts), built from
 * `env`: one local server per process.
 */
import { randomUUID } from 'crypto';
import * as http from 'http';
import type { AddressInfo } from 'net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context, ScheduledEvent } from 'aws-lambda';
import type { CleanupReport } from '../lib/cleanup';
import { loadConfig, type Config } from '../lib/domain/config';
import { closeRuntime, getRuntime, resetRuntime } from '../lib/runtime';
import { isBinaryBody } from '../lib/http/binary-body';
import { HttpError, invalidArgument, mapError } from '../lib/http/errors';
import { buildOpenApi } from '../lib/http/openapi';
import { matchRoute, ROUTES, type FunctionName } from '../lib/http/routes';
import { LAMBDA_PAYLOAD_BYTES, MAX_BODY_BYTES, payloadBytesOver } from '../lib/http/payload-limits';
import { proxyIdentity } from '../lib/http/proxy-identity';

export interface StartServerOptions {
  /** configuration variables (docs/settings.md); default process.env */
  env?: NodeJS.ProcessEnv;
  /** overrides PORT; 0 picks a free port */
  port?: number;
  /** default 127.0.0.1 */
  host?: string;
  /** one line per request and per cleanup pass (default: stdout); pass () => {} for silence */
  log?: (line: string) => void;
  /** overrides CLEANUP_INTERVAL_SECONDS; 0 disables the periodic pass */
  cleanupIntervalSeconds?: number;
}

export interface LocalServer {
  url: string;
  host: string;
  port: number;
  config: Config;
  server: http.Server;
  /** runs the scheduled cleanup function once now (as the timer does) */
  runCleanup(): Promise<CleanupReport | undefined>;
  /** stop accepting, finish in-flight requests and the running cleanup pass, close the engine */
  close(): Promise<void>;
}

type ApiHandlerFn = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type CleanupHandlerFn = (event: ScheduledEvent, context: Context) => Promise<CleanupReport>;

/** API Gateway's integration timeout: the fake context's remaining time for API requests. */
const API_TIMEOUT_MS = 29_000;
/** Bodies declared larger than this are refused without reading them. */
const DRAIN_LIMIT = 4 * MAX_BODY_BYTES;

/* eslint-disable @typescript-eslint/no-require-imports */
/** Handlers are required after the Powertools defaults are set (they read the environment when loaded). */
function loadHandlers(): { api: Record<FunctionName, ApiHandlerFn>; cleanup: CleanupHandlerFn } {
  return {
    api: {
      create: require('../functions/create').handler,
      get: require('../functions/get').handler,
      spend: require('../functions/spend').handler,
      unspend: require('../functions/unspend').handler,
      'set-mined': require('../functions/set-mined').handler,
      'get-utxo': require('../functions/get-utxo').handler,
      status: require('../functions/status').handler,
      admin: require('../functions/admin').handler,
    },
    cleanup: require('../functions/cleanup').handler,
  };
}
/* eslint-enable @typescript-eslint/no-require-imports */

/** A fake Lambda context with a deadline. */
export function lambdaContext(functionName: string, timeoutMs: number, requestId = randomUUID()): Context {
  const started = Date.now();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${started}`,
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The API Gateway REST (v1) proxy event of a local request. */
export function toProxyEvent(options: {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: Buffer | undefined;
  resource: string;
  pathParameters: Record<string, string> | null;
  requestId: string;
  sourceIp: string;
}): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(options.headers)) {
    if (v === undefined) continue;
    const list = Array.isArray(v) ? v : [v];
    headers[k] = list[list.length - 1];
    multiValueHeaders[k] = list;
  }
  let query: Record<string, string> | null = null;
  let multiQuery: Record<string, string[]> | null = null;
  // null-prototype maps: a parameter named `constructor` or `__proto__` is a key like any other
  for (const [k, v] of options.url.searchParams) {
    query ??= Object.create(null) as Record<string, string>;
    multiQuery ??= Object.create(null) as Record<string, string[]>;
    query[k] = v;
    (multiQuery[k] ??= []).push(v);
  }
  const now = Date.now();
  // as API Gateway with binaryMediaTypes (cdk/api.ts): a binary body reaches the function base64
  const binary = isBinaryBody(headers);
  const hasBody = options.body !== undefined && options.body.length > 0;
  return {
    resource: options.resource,
    path: options.url.pathname,
    httpMethod: options.method,
    headers,
    multiValueHeaders,
    queryStringParameters: query,
    multiValueQueryStringParameters: multiQuery,
    pathParameters: options.pathParameters,
    stageVariables: null,
    body: hasBody ? options.body!.toString(binary ? 'base64' : 'utf8') : null,
    isBase64Encoded: hasBody && binary,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: options.method,
      identity: proxyIdentity(options.sourceIp, headers['user-agent'] ?? null),
      path: options.url.pathname,
      stage: 'local',
      requestId: options.requestId,
      requestTimeEpoch: now,
      resourceId: 'local',
      resourcePath: options.resource,
    },
  };
}

/** A scheduled (EventBridge) event as the cleanup schedule sends it. */
export function scheduledEvent(): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: 'local',
    resources: ['arn:aws:events:local:000000000000:rule/utxo-store-cleanup'],
    detail: {},
  };
}

function send(
  res: http.ServerResponse,
  statusCode: number,
  headers: Record<string, string | number | boolean>,
  body: string,
): void {
  res.statusCode = statusCode;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, String(v));
  res.end(body);
}

function sendError(res: http.ServerResponse, error: HttpError, extraHeaders: Record<string, string> = {}): string {
  const mapped = mapError(error);
  send(
    res,
    mapped.statusCode,
    { 'content-type': 'application/json', ...mapped.headers, ...extraHeaders },
    JSON.stringify(mapped.body),
  );
  return mapped.body.error.code;
}

/** Reads the body; over MAX_BODY_BYTES it keeps draining (so the client reads the 413) and returns 'too-large'. */
function readBody(req: http.IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
    // settle even if the client goes away without an 'error': the request counts as in flight until this settles
    req.on('close', () => {
      if (!req.complete) reject(new Error('the client closed the connection before the body was complete'));
    });
  });
}

export async function startServer(options: StartServerOptions = {}): Promise<LocalServer> {
  const env = options.env ?? process.env;
  const config = loadConfig(env);
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const intervalSeconds = options.cleanupIntervalSeconds ?? config.cleanupIntervalSeconds;

  // locally: no EMF lines, and the handlers' own request logs only at WARN (the server logs one line per request)
  process.env.POWERTOOLS_METRICS_DISABLED ??= env.POWERTOOLS_METRICS_DISABLED ?? 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= env.POWERTOOLS_LOG_LEVEL ?? 'WARN';
  const handlers = loadHandlers();

  await resetRuntime({ env });
  await getRuntime(); // fail fast (bad store URL, B mismatch) and be ready for the first request

  let inFlight = 0;
  let openapi: string | undefined;

  const server = http.createServer((req, res) => {
    const started = performance.now();
    inFlight++;
    let code: string | undefined;
    const method = (req.method ?? 'GET').toUpperCase();
    // a request target that is not a valid URL (e.g. `//[`) must not throw out of this listener: that would end
    // the process; it is answered 400 below
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? '/', `http://${host}`);
    } catch {
      url = undefined;
    }
    // the request counts as in flight until its handler has finished, not until its connection closed: a client
    // that goes away (or a connection closed by shutdown) must not let close() shut the engine under a running write
    const logLine = () => {
      const ms = (performance.now() - started).toFixed(1);
      const target = url ? `${url.pathname}${url.search}` : (req.url ?? '');
      log(`${new Date().toISOString()} ${method} ${target} ${res.statusCode} ${ms}ms${code ? ` ${code}` : ''}`);
    };
    res.on('close', logLine);

    void (async () => {
      try {
        if (!url) {
          code = sendError(res, invalidArgument('path', 'the request target is not a valid URL path'), {
            connection: 'close',
          });
          req.resume();
          return;
        }
        if (method === 'GET' && url.pathname === '/openapi.json') {
          openapi ??= JSON.stringify(buildOpenApi({ serverUrl: `http://${host}:${port}` }), null, 2);
          send(res, 200, { 'content-type': 'application/json' }, openapi);
          req.resume();
          return;
        }
        const declared = Number(req.headers['content-length']);
        if (Number.isFinite(declared) && declared > DRAIN_LIMIT) {
          code = sendError(
            res,
            new HttpError(413, 'PAYLOAD_TOO_LARGE', `the body is ${declared} bytes; the limit is ${MAX_BODY_BYTES}`),
            { connection: 'close' },
          );
          req.destroy();
          return;
        }
        const body = await readBody(req);
        if (body === 'too-large') {
          code = sendError(
            res,
            new HttpError(413, 'PAYLOAD_TOO_LARGE', `the body is over the limit of ${MAX_BODY_BYTES} bytes`),
          );
          return;
        }
        const match = matchRoute(ROUTES, method, url.pathname);
        if (match.kind === 'none') {
          code = sendError(res, new HttpError(404, 'ROUTE_NOT_FOUND', `no route for ${method} ${url.pathname}`));
          return;
        }
        if (match.kind === 'method') {
          code = sendError(
            res,
            new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${url.pathname}`, {
              allow: match.allow,
            }),
            { allow: match.allow.join(', ') },
          );
          return;
        }
        const requestId = randomUUID();
        const event = toProxyEvent({
          method,
          url,
          headers: req.headers,
          body,
          resource: match.route.path,
          pathParameters: Object.keys(match.params).length > 0 ? match.params : null,
          requestId,
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        });
        // Lambda counts the whole event against its limit, not only the body: refuse what AWS would refuse
        const eventBytes = payloadBytesOver(event, LAMBDA_PAYLOAD_BYTES);
        if (eventBytes !== undefined) {
          code = sendError(
            res,
            new HttpError(
              413,
              'PAYLOAD_TOO_LARGE',
              `the request event is ${eventBytes} bytes; Lambda's limit is ${LAMBDA_PAYLOAD_BYTES}`,
            ),
          );
          return;
        }
        const context = lambdaContext(`utxo-store-${match.route.fn}`, API_TIMEOUT_MS, requestId);
        const result = await handlers.api[match.route.fn](event, context);
        if (result.statusCode >= 400) {
          try {
            code = (JSON.parse(result.body) as { error?: { code?: string } }).error?.code;
          } catch {
            // not an envelope
          }
        }
        const headers: Record<string, string | number | boolean> = { ...(result.headers ?? {}) };
        for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.join(', ');
        const payload = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body;
        res.statusCode = result.statusCode;
        for (const [k, v] of Object.entries(headers)) res.setHeader(k, String(v));
        res.end(result.statusCode === 204 ? undefined : payload);
      } catch (err) {
        // the handlers map their own errors; this is a failure of the server itself
        const mapped = mapError(err);
        code = mapped.body.error.code;
        if (!res.headersSent) {
          send(res, mapped.statusCode, { 'content-type': 'application/json' }, JSON.stringify(mapped.body));
        } else {
          res.destroy();
        }
        log(`local server error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      } finally {
        inFlight--;
      }
    })();
  });
  server.keepAliveTimeout = 5000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? config.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  // the scheduled cleanup, as EventBridge would invoke it
  let cleaning: Promise<CleanupReport | undefined> | undefined;
  const runCleanup = (): Promise<CleanupReport | undefined> => {
    if (cleaning) return cleaning;
    const timeoutMs = Math.max(intervalSeconds, 60) * 1000;
    cleaning = handlers
      .cleanup(scheduledEvent(), lambdaContext('utxo-store-cleanup', timeoutMs))
      .then(
        (report) => {
          if (report.deleted > 0 || report.errors > 0 || report.more) {
            log(
              `${new Date().toISOString()} cleanup tip=${report.tip} deleted=${report.deleted} errors=${report.errors} kept=${JSON.stringify(report.kept)} more=${report.more} ${report.durationMs}ms`,
            );
          }
          return report;
        },
        (err: unknown) => {
          log(`${new Date().toISOString()} cleanup failed: ${err instanceof Error ? err.message : String(err)}`);
          return undefined;
        },
      )
      .finally(() => {
        cleaning = undefined;
      });
    return cleaning;
  };
  const timer = intervalSeconds > 0 ? setInterval(() => void runCleanup(), intervalSeconds * 1000) : undefined;
  timer?.unref();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (timer) clearInterval(timer);
      // stop accepting; in-flight requests finish (idle keep-alive sockets are closed at once)
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), 10_000);
      force.unref();
      await closed;
      clearTimeout(force);
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 10));
      if (cleaning) await cleaning;
      await closeRuntime();
    })();
    return closing;
  };

  return { url: `http://${host}:${port}`, host, port, config, server, runCleanup, close };
}
