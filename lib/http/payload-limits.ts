/**
 * The payload limits a request meets on its way in and its answer on its way out. Lambda's synchronous invocation
 * takes at most 6 MB (6,291,456 bytes) of event and returns at most 6 MB of result, whether the caller is API Gateway
 * or the Lambda Invoke API (API Gateway's own 10 MB limit is never the one that bites). The event holds more than the
 * body (headers, request context, the body's JSON escaping), so the body limit keeps a reserve for them.
 */

/** Lambda's synchronous invocation payload limit, for the request event and for the response, each. */
export const LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** Kept back from the body limit for the rest of the event: headers, request context, JSON escaping of the body. */
export const EVENT_RESERVE_BYTES = 64 * 1024;

/** Bodies over this get 413 PAYLOAD_TOO_LARGE (6,225,920 bytes). */
export const MAX_BODY_BYTES = LAMBDA_PAYLOAD_BYTES - EVENT_RESERVE_BYTES;

/**
 * Binary bodies over this get 413 PAYLOAD_TOO_LARGE (4,669,440 bytes): the event carries a binary body base64-encoded
 * (API Gateway's binaryMediaTypes, and a direct invocation's bodyBase64), 4 characters for every 3 bytes, so this is
 * the most whose base64 stays within MAX_BODY_BYTES.
 */
export const MAX_BINARY_BODY_BYTES = Math.floor(MAX_BODY_BYTES / 4) * 3;

/** Bytes of a value as Lambda counts it: its JSON serialization, UTF-8. */
export function payloadBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/**
 * payloadBytes(value) when it is over `limit`, else undefined, for a value whose `body` string may be large (a
 * request event, a response). JSON writes at most 6 bytes for one UTF-16 code unit of a string (`\u001f`; UTF-8
 * takes at most 3), so when the value with an empty body plus 6 bytes per code unit of the body is within the limit,
 * the body is neither serialized nor counted.
 */
export function payloadBytesOver(value: { body?: string | null }, limit: number): number | undefined {
  if (typeof value.body === 'string' && payloadBytes({ ...value, body: '' }) + 6 * value.body.length <= limit) {
    return undefined;
  }
  const bytes = payloadBytes(value);
  return bytes > limit ? bytes : undefined;
}
