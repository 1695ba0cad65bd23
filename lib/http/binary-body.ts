/**
 * A binary batch body (application/octet-stream, lib/http/binary-batch.ts) as the request the route validates: the
 * frame decoded whole (400 BAD_FRAME naming the byte offset and the item, before anything else is done), then the
 * JSON body it stands for, with each tx's bytes in place of its hex, so the route's schemas, its role checks
 * (FIELD_NOT_ALLOWED) and its handler see what a JSON body gives them (docs/api.md, "Binary batch bodies").
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { decodeBatchFrame, FRAME_KIND, FrameError } from './binary-batch';
import { HttpError, invalidArgument } from './errors';
import { MAX_BINARY_BODY_BYTES } from './payload-limits';
import { BINARY_MEDIA_TYPE, type RouteSpec } from './route-spec';

/** Whether a request's Content-Type is the binary media type (parameters and case aside). */
export function isBinaryBody(headers: APIGatewayProxyEvent['headers'] | null | undefined): boolean {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() !== 'content-type' || value === undefined) continue;
    return value.split(';')[0].trim().toLowerCase() === BINARY_MEDIA_TYPE;
  }
  return false;
}

function badFrame(err: FrameError): HttpError {
  const details = { offset: err.offset, ...(err.item !== undefined && { item: err.item }) };
  return new HttpError(400, 'BAD_FRAME', `malformed batch frame: ${err.message}`, details);
}

/** The bytes of a binary body: API Gateway (binaryMediaTypes), the local server and a direct invocation send base64. */
function bodyBytes(event: APIGatewayProxyEvent): Buffer {
  if (event.body === null || event.body === undefined || event.body === '') return Buffer.alloc(0);
  if (!event.isBase64Encoded) {
    // a binary body turned into text on the way has lost its bytes (API Gateway without binaryMediaTypes)
    throw new HttpError(400, 'BAD_FRAME', 'malformed batch frame: the body reached the function as text, not base64', {
      offset: 0,
    });
  }
  const bytes = Buffer.from(event.body, 'base64');
  if (bytes.length > MAX_BINARY_BODY_BYTES) {
    throw new HttpError(
      413,
      'PAYLOAD_TOO_LARGE',
      `the binary body is ${bytes.length} bytes; the limit is ${MAX_BINARY_BODY_BYTES} (its base64 fills the event)`,
    );
  }
  return bytes;
}

/**
 * The JSON body a binary request stands for: the request options with `txs` the frame's items (POST /v1/batch/txs:
 * each item's options with `tx` its bytes; POST /v1/batch/spends: each tx's bytes).
 */
export function framedBody(route: RouteSpec, event: APIGatewayProxyEvent): Record<string, unknown> {
  const binary = route.batch?.binary;
  if (!binary) {
    throw invalidArgument(
      'body',
      `${BINARY_MEDIA_TYPE} is taken by POST /v1/batch/txs and /v1/batch/spends: send JSON`,
    );
  }
  let frame;
  try {
    frame = decodeBatchFrame(bodyBytes(event), binary.kind);
  } catch (err) {
    throw err instanceof FrameError ? badFrame(err) : err;
  }
  const txs = frame.items.map((item) => (binary.kind === FRAME_KIND.txs ? { ...item.options, tx: item.tx } : item.tx));
  return { ...frame.options, [route.batch!.items]: txs };
}
