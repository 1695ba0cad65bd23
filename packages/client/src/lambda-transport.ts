/**
 * Direct invocation: the Lambda Invoke API (RequestResponse) straight to the function that serves the route, for
 * callers inside AWS (no API Gateway: no per-request API price, no 29 s integration timeout; the function's own
 * timeout and Lambda's 6 MB payload limit each way still apply).
 *
 * The event sent (lib/http/direct-invocation.ts on the server):
 *
 *   {"route": "POST /v1/batch/spends", "body": {"txs": ["0100beef..."]}}
 *   {"route": "GET /v1/utxos/{txid}/{vout}", "pathParameters": {"txid": "ab..", "vout": "0"},
 *    "queryStringParameters": {"utxoHash": "cd.."}}
 *   {"route": "POST /v1/batch/spends", "bodyBase64": "VVRYQgEC..."}   (a binary batch frame, binary-batch.ts)
 *
 * `route` is "METHOD <resource path of the route table>", `body` the JSON body as an object (not a string),
 * `bodyBase64` instead of `body` the frame of a write batch's binary body, `pathParameters` /
 * `queryStringParameters` maps of strings, present only when the route has them. The answer expected is the HTTP
 * route's answer: {"statusCode": 200, "headers": {...}, "body": {...}}, `body` parsed JSON
 * (a JSON string is accepted and parsed too), absent for 204. A function error (FunctionError set: the function
 * crashed or timed out) is a 500 FUNCTION_ERROR; Lambda's throttle (TooManyRequestsException, 429) is THROTTLED.
 *
 * Function names come from the stack outputs; the caller's role needs lambda:InvokeFunction on them.
 *
 * @aws-sdk/client-lambda is an optional peer dependency, loaded (dynamic import) on the first invocation only: a
 * service that does not invoke directly neither installs nor loads it.
 */
import type { FunctionName } from './generated/api-types.js';
import { TransportError } from './errors.js';
import { fetchFailure, parseJson, type Transport, type TransportRequest, type TransportResponse } from './transport.js';

/** The event of a direct invocation (what this transport sends). */
export interface DirectInvocationEvent {
  route: string;
  body?: unknown;
  /** instead of `body`: a binary batch frame, base64 (Lambda's payload is JSON) */
  bodyBase64?: string;
  pathParameters?: Record<string, string>;
  queryStringParameters?: Record<string, string>;
}

/** What this transport gives the Invoke API (an InvokeCommand's input). */
export interface InvokeInput {
  FunctionName?: string;
  InvocationType?: string;
  /** the event's JSON, UTF-8 bytes (a Uint8Array; typed as the SDK's wider payload type allows) */
  Payload?: unknown;
}

/** What it reads of the answer (an InvokeCommandOutput). */
export interface InvokeOutput {
  StatusCode?: number;
  FunctionError?: string;
  Payload?: Uint8Array;
}

/**
 * The part of a Lambda client this transport uses: a LambdaClient of @aws-sdk/client-lambda (it is sent an
 * InvokeCommand), or a fake in tests. Typed without the SDK, so the client's types need it installed only to invoke.
 */
export interface LambdaInvoker {
  send(command: { input: InvokeInput }): Promise<InvokeOutput>;
}

type LambdaSdk = typeof import('@aws-sdk/client-lambda');

let sdk: Promise<LambdaSdk> | undefined;

/** @aws-sdk/client-lambda, imported once, on first use. */
function loadSdk(): Promise<LambdaSdk> {
  sdk ??= import('@aws-sdk/client-lambda').catch((err: unknown) => {
    sdk = undefined;
    throw new TransportError(
      'direct invocation needs @aws-sdk/client-lambda, an optional peer dependency of @bsv-utxo-store/client: ' +
        `npm install @aws-sdk/client-lambda (${(err as Error).message})`,
      false,
      { cause: err },
    );
  });
  return sdk;
}

export interface LambdaTransportOptions {
  /** the deployed function name (or ARN) of each function; from the stack outputs */
  functionNames: Partial<Record<FunctionName, string>>;
  /** default: a LambdaClient of `region` with the default credential chain and no SDK retries (the client retries) */
  client?: LambdaInvoker;
  region?: string;
}

export function directEvent(request: TransportRequest): DirectInvocationEvent {
  const event: DirectInvocationEvent = { route: `${request.method} ${request.path}` };
  if (request.pathParameters && Object.keys(request.pathParameters).length > 0) {
    event.pathParameters = request.pathParameters;
  }
  if (request.query && Object.keys(request.query).length > 0) event.queryStringParameters = request.query;
  if (request.binary !== undefined) event.bodyBase64 = Buffer.from(request.binary).toString('base64');
  else if (request.body !== undefined) event.body = request.body;
  return event;
}

/** Lambda's own errors that mean the invocation did not run (safe to retry any operation). */
const NOT_RUN = new Set([
  'TooManyRequestsException',
  'EC2ThrottledException',
  'ResourceNotReadyException',
  'ResourceConflictException',
]);

export class LambdaTransport implements Transport {
  private client: LambdaInvoker | undefined;
  private readonly region: string | undefined;
  private readonly functionNames: Partial<Record<FunctionName, string>>;

  constructor(options: LambdaTransportOptions) {
    this.functionNames = options.functionNames;
    this.client = options.client;
    this.region = options.region;
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const functionName = this.functionNames[request.fn];
    if (!functionName) {
      throw new TransportError(`no function name configured for the ${request.fn} function`, false);
    }
    const payload = Buffer.from(JSON.stringify(directEvent(request)), 'utf8');
    const { InvokeCommand, LambdaClient } = await loadSdk();
    // no SDK retries: the client retries, knowing which operations are safe to repeat
    this.client ??= new LambdaClient({ region: this.region, maxAttempts: 1 });
    let out: InvokeOutput;
    try {
      out = await this.client.send(
        new InvokeCommand({ FunctionName: functionName, InvocationType: 'RequestResponse', Payload: payload }),
      );
    } catch (err) {
      const name = (err as { name?: string }).name ?? '';
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (name === 'TooManyRequestsException' || status === 429) {
        return { status: 429, body: { message: `Lambda throttled the invocation (${name})` } };
      }
      if (NOT_RUN.has(name)) throw new TransportError(`invoke ${functionName}: ${name}`, false, { cause: err });
      if (name === 'RequestEntityTooLargeException' || status === 413) {
        return {
          status: 413,
          body: { error: { code: 'PAYLOAD_TOO_LARGE', message: `invoke ${functionName}: the event is over 6 MB` } },
        };
      }
      if (status !== undefined) {
        // Lambda answered with an error of its own (access denied, function not found, service error)
        return { status, body: { message: `invoke ${functionName}: ${name}: ${(err as Error).message}` } };
      }
      throw fetchFailure(err, `lambda:${functionName}`);
    }
    const text = out.Payload ? Buffer.from(out.Payload).toString('utf8') : '';
    if (out.FunctionError) {
      return {
        status: 500,
        body: {
          error: { code: 'FUNCTION_ERROR', message: `${functionName}: ${out.FunctionError}: ${text.slice(0, 500)}` },
        },
      };
    }
    let result: { statusCode?: unknown; body?: unknown };
    try {
      result = JSON.parse(text) as typeof result;
    } catch {
      return { status: 502, body: { message: `${functionName} answered something other than JSON` } };
    }
    if (typeof result?.statusCode !== 'number') {
      return { status: 502, body: { message: `${functionName} answered without a statusCode` } };
    }
    let body = result.body;
    // an answer with the body as a string (API Gateway's shape) is read the same way
    if (typeof body === 'string') body = parseJson(body);
    return { status: result.statusCode, body };
  }
}
