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
 *
 * `route` is "METHOD <resource path of the route table>", `body` the JSON body as an object (not a string),
 * `pathParameters` / `queryStringParameters` maps of strings, present only when the route has them. The answer
 * expected is the HTTP route's answer: {"statusCode": 200, "headers": {...}, "body": {...}}, `body` parsed JSON
 * (a JSON string is accepted and parsed too), absent for 204. A function error (FunctionError set: the function
 * crashed or timed out) is a 500 FUNCTION_ERROR; Lambda's throttle (TooManyRequestsException, 429) is THROTTLED.
 *
 * Function names come from the stack outputs; the caller's role needs lambda:InvokeFunction on them.
 */
import { InvokeCommand, LambdaClient, type InvokeCommandOutput } from '@aws-sdk/client-lambda';
import type { FunctionName } from '../http/routes';
import { TransportError } from './errors';
import { fetchFailure, parseJson, type Transport, type TransportRequest, type TransportResponse } from './transport';

/** The event of a direct invocation (what this transport sends). */
export interface DirectInvocationEvent {
  route: string;
  body?: unknown;
  pathParameters?: Record<string, string>;
  queryStringParameters?: Record<string, string>;
}

/** The part of a Lambda client this transport uses (a fake in tests). */
export interface LambdaInvoker {
  send(command: InvokeCommand): Promise<InvokeCommandOutput>;
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
  if (request.body !== undefined) event.body = request.body;
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
  private readonly client: LambdaInvoker;
  private readonly functionNames: Partial<Record<FunctionName, string>>;

  constructor(options: LambdaTransportOptions) {
    this.functionNames = options.functionNames;
    this.client = options.client ?? new LambdaClient({ region: options.region, maxAttempts: 1 });
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const functionName = this.functionNames[request.fn];
    if (!functionName) {
      throw new TransportError(`no function name configured for the ${request.fn} function`, false);
    }
    const payload = Buffer.from(JSON.stringify(directEvent(request)), 'utf8');
    let out: InvokeCommandOutput;
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
