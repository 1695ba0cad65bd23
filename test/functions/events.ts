/**
 * Real-shaped Lambda events (as API Gateway REST proxy integration, SQS and EventBridge deliver them) and a fake
 * Lambda context, for handler unit tests without network.
 */
import { createHash, randomUUID } from 'crypto';
import type { APIGatewayProxyEvent, Context, ScheduledEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import { GATEWAY_ALIAS } from '../../lib/http/gateway-alias';
import { proxyIdentity } from '../../lib/http/proxy-identity';
import { scheduledEvent as localScheduledEvent } from '../../server/local-server';

/**
 * A Lambda context: of an invocation of the unqualified function, or of `qualifier` (an alias or version) when given,
 * as Lambda reports it in invokedFunctionArn.
 */
export function lambdaContext(remainingMs = 30_000, functionName = 'utxo-store-test', qualifier?: string): Context {
  const started = Date.now();
  const arn = `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}`;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: qualifier === undefined ? '$LATEST' : '7',
    invokedFunctionArn: qualifier === undefined ? arn : `${arn}:${qualifier}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2024/05/01/[$LATEST]0123456789abcdef0123456789abcdef',
    getRemainingTimeInMillis: () => Math.max(0, remainingMs - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The context of API Gateway's invocation: the gateway alias (the ARN the REST API's integrations name). */
export function gatewayContext(remainingMs = 30_000): Context {
  return lambdaContext(remainingMs, undefined, GATEWAY_ALIAS);
}

export interface ApiEventOptions {
  method: string;
  /** API Gateway resource, e.g. /v1/txs/{txid} */
  resource: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string | string[]>;
  body?: unknown;
  /** send the body base64-encoded (binary media types) */
  base64?: boolean;
  /** the raw body text, as sent */
  rawBody?: string;
  /** a binary body (application/octet-stream): base64 in the event, as binaryMediaTypes has API Gateway send it */
  binary?: Buffer;
}

/** An API Gateway REST API (v1) Lambda proxy integration event, shaped like the AWS sample event. */
export function apiEvent(o: ApiEventOptions): APIGatewayProxyEvent {
  let requestPath = o.resource;
  for (const [k, v] of Object.entries(o.pathParameters ?? {})) requestPath = requestPath.replace(`{${k}}`, v);
  const text = o.rawBody ?? (o.body === undefined ? null : JSON.stringify(o.body));
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(o.query ?? {})) {
    const list = Array.isArray(v) ? v : [v];
    query[k] = list[list.length - 1];
    multiQuery[k] = list;
  }
  const headers: Record<string, string> = {
    Accept: 'application/json',
    'CloudFront-Forwarded-Proto': 'https',
    'CloudFront-Is-Desktop-Viewer': 'true',
    'CloudFront-Viewer-Country': 'GB',
    Host: 'abcdef1234.execute-api.eu-west-1.amazonaws.com',
    'User-Agent': 'validator/1.0',
    Via: '2.0 0123456789abcdef.cloudfront.net (CloudFront)',
    'X-Amz-Cf-Id': 'cDehVQoZnx43VYQb9j2-nvCh-9z396Uhbp027Y2JvkCPNLmGJHqlaA==',
    'X-Amzn-Trace-Id': 'Root=1-5e66d96f-7491f09xmpl79d18acf3d050',
    'X-Forwarded-For': '10.0.0.1, 130.176.0.1',
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
  };
  if (o.binary !== undefined) {
    headers['Content-Type'] = 'application/octet-stream';
    headers['Content-Length'] = String(o.binary.length);
  } else if (text !== null) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(text));
  }
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers)) multiValueHeaders[k] = [v];
  return {
    resource: o.resource,
    path: requestPath,
    httpMethod: o.method,
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length > 0 ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length > 0 ? multiQuery : null,
    pathParameters: o.pathParameters ?? null,
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abcdef1234',
      authorizer: null,
      domainName: 'abcdef1234.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abcdef1234',
      extendedRequestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      httpMethod: o.method,
      // a SigV4 caller: the local identity's fields, with the IAM ones API Gateway fills in
      identity: {
        ...proxyIdentity('10.0.0.1', 'validator/1.0'),
        accessKey: 'AKIAIOSFODNN7EXAMPLE',
        accountId: '123456789012',
        caller: 'AROAEXAMPLE:validator',
        user: 'AROAEXAMPLE:validator',
        userArn: 'arn:aws:sts::123456789012:assumed-role/validator/validator',
      },
      path: `/prod${requestPath}`,
      protocol: 'HTTP/1.1',
      requestId: randomUUID(),
      requestTime: '01/May/2024:12:00:00 +0000',
      requestTimeEpoch: Date.now(),
      resourceId: 'abc123',
      resourcePath: o.resource,
      stage: 'prod',
    },
    body:
      o.binary !== undefined
        ? o.binary.toString('base64')
        : text === null
          ? null
          : o.base64
            ? Buffer.from(text).toString('base64')
            : text,
    isBase64Encoded: o.binary !== undefined || Boolean(o.base64),
  };
}

export interface SqsMessage {
  body: string;
  messageId?: string;
  receiveCount?: number;
}

/** An SQS event as the event source mapping delivers it. */
export function sqsEvent(messages: SqsMessage[]): SQSEvent {
  const Records: SQSRecord[] = messages.map((m) => ({
    messageId: m.messageId ?? randomUUID(),
    receiptHandle: `AQEB${Buffer.from(randomUUID()).toString('base64')}`,
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount ?? 1),
      SentTimestamp: String(Date.now() - 1000),
      SenderId: 'AROAEXAMPLE:utxo-store-spend',
      ApproximateFirstReceiveTimestamp: String(Date.now() - 500),
    },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(m.body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:utxo-store-signals',
    awsRegion: 'eu-west-1',
  }));
  return { Records };
}

/** An EventBridge scheduled event (rate(1 minute)). */
export function scheduledEvent(): ScheduledEvent {
  return {
    ...localScheduledEvent(),
    account: '123456789012',
    region: 'eu-west-1',
    resources: ['arn:aws:events:eu-west-1:123456789012:rule/utxo-store-cleanup'],
  };
}

/** Captures what Powertools writes to stdout and stderr (structured logs and EMF) during `fn`. */
export async function captureStdout<T>(fn: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const lines: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((s) => s.write);
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array) => {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((l) => l.trim() !== ''),
      );
      return true;
    }) as typeof stream.write;
  }
  try {
    const result = await fn();
    return { result, lines };
  } finally {
    streams.forEach((s, i) => (s.write = originals[i]));
  }
}

/** JSON lines of a capture (others ignored). */
export function jsonLines(lines: string[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const l of lines) {
    try {
      const v = JSON.parse(l);
      if (v && typeof v === 'object') out.push(v);
    } catch {
      // not JSON
    }
  }
  return out;
}
