/**
 * How a request reaches the service. One interface, three ways in:
 * - HttpTransport: plain HTTP(S), for the local server (`npm start`);
 * - SigV4HttpTransport (sigv4-transport.ts): HTTPS to API Gateway with IAM auth, signed by the AWS SDK's signer with
 *   the default credential chain;
 * - LambdaTransport (lambda-transport.ts): the Lambda Invoke API, straight to the function serving the route.
 * A transport turns a request (a JSON body, or for the write batches a binary frame) into the service's answer
 * (status + parsed JSON body) or throws a TransportError
 * (nothing came back). It does not interpret statuses or retry: the client does (client.ts, retry.ts).
 */
import type { FunctionName, HttpMethod } from './generated/api-types.js';
import { BINARY_MEDIA_TYPE } from './binary-batch.js';
import { TransportError } from './errors.js';

export interface TransportRequest {
  /** operationId of the route (for errors and logs) */
  operation: string;
  method: HttpMethod;
  /** the route table's resource path, e.g. /v1/txs/{txid} */
  path: string;
  /** the function serving the route (direct invocation) */
  fn: FunctionName;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  /** the JSON body */
  body?: unknown;
  /**
   * the same body as a binary batch frame (binary-batch.ts), for the write batches: a transport that can sends it
   * (application/octet-stream; by direct invocation as `bodyBase64`), one that cannot sends `body`
   */
  binary?: Uint8Array;
}

export interface TransportResponse {
  status: number;
  /** the parsed JSON body; undefined when empty (204) */
  body: unknown;
}

export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
  /** release connections (optional) */
  close?(): Promise<void> | void;
}

/** The concrete path of a request: the resource path with its parameters filled in (URI-encoded). */
export function concretePath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/\{([^}]+)\}/g, (whole, name: string) =>
    Object.hasOwn(params, name) ? encodeURIComponent(params[name]) : whole,
  );
}

/** The query string of a request, `?a=1&b=2`, or ''. */
export function queryString(query: Record<string, string> | undefined): string {
  const entries = Object.entries(query ?? {}).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '';
  return `?${new URLSearchParams(entries).toString()}`;
}

/** Error codes of node's sockets and undici meaning the connection was never made: the request was not sent. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'CredentialsProviderError',
]);

function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code ?? (e as { name?: unknown }).name;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A TransportError for a failed fetch: not sent when the connection was never made. */
export function fetchFailure(err: unknown, url: string): TransportError {
  const code = causeCode(err);
  const message = err instanceof Error ? err.message : String(err);
  return new TransportError(
    `request to ${url} failed${code ? ` (${code})` : ''}: ${message}`,
    code === undefined ? true : false,
    { cause: err },
  );
}

export interface HttpTransportOptions {
  /** e.g. http://127.0.0.1:8080 (npm start) or https://abc.execute-api.eu-west-1.amazonaws.com/prod */
  baseUrl: string;
  /** extra headers of every request */
  headers?: Record<string, string>;
  /** per request; default 30 s (API Gateway ends a request at 29 s) */
  timeoutMs?: number;
  /** default globalThis.fetch (node's undici: keep-alive connections) */
  fetch?: typeof fetch;
}

export interface PreparedRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** Plain HTTP(S): the local server, or any endpoint that needs no signature. */
export class HttpTransport implements Transport {
  protected readonly baseUrl: URL;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;

  constructor(options: HttpTransportOptions) {
    this.baseUrl = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.fetchFn = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.headers = options.headers ?? {};
  }

  /** The request to send (a subclass signs it). */
  protected async prepare(request: TransportRequest): Promise<PreparedRequest> {
    const relative = concretePath(request.path, request.pathParameters).replace(/^\//, '');
    const url = new URL(relative + queryString(request.query), this.baseUrl);
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers };
    let body: string | Uint8Array | undefined;
    if (request.binary !== undefined) {
      body = request.binary;
      headers['content-type'] = BINARY_MEDIA_TYPE;
    } else if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    return { method: request.method, url, headers, body };
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    let prepared: PreparedRequest;
    try {
      prepared = await this.prepare(request);
    } catch (err) {
      // e.g. no credentials: nothing was sent
      throw new TransportError(`could not prepare ${request.operation}: ${(err as Error).message}`, false, {
        cause: err,
      });
    }
    let res: Response;
    try {
      res = await this.fetchFn(prepared.url, {
        method: prepared.method,
        headers: prepared.headers,
        body: prepared.body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw fetchFailure(err, prepared.url.toString());
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new TransportError(`reading the answer of ${request.operation} failed: ${(err as Error).message}`, true, {
        cause: err,
      });
    }
    return { status: res.status, body: parseJson(text) };
  }
}

/** JSON of an answer; a text that is not JSON is kept as `{message: text}` (e.g. a gateway's HTML error page). */
export function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text.slice(0, 500) };
  }
}
