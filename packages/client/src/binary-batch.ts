/**
 * The binary body of the write batches (the API's "Binary batch bodies"): POST /v1/batch/txs and
 * POST /v1/batch/spends take `Content-Type: application/octet-stream`, a frame with each tx's bytes instead of its hex
 * (about half the bytes on the wire). All integers unsigned little-endian:
 *
 *   magic "UTXB" | version (u8) | kind (u8: 1 txs, 2 spends) | options length (u32) | options JSON
 *   | item count (u32) | per item: options length (u32) | options JSON | tx length (u32) | tx bytes
 *
 * Options are the JSON body's fields but the txs (an item's: the JSON item's fields but `tx`), length 0 when none.
 * The magic, version and kinds are the server's (generated/api-types.ts); the server decodes with its own codec and
 * the repository's tests hold both to the same golden bytes.
 */
import { BATCH_FRAME } from './generated/api-types.js';
import type { BatchCreateRequest, BatchSpendRequest } from './batch-routes.js';

/** The batch operations that take a binary body. */
export type BinaryBatchOperation = 'createMany' | 'spendMany';

/** The media type of a binary batch body. */
export const BINARY_MEDIA_TYPE = 'application/octet-stream';

function json(value: Record<string, unknown>): Buffer {
  const text = JSON.stringify(value);
  return text === '{}' ? Buffer.alloc(0) : Buffer.from(text, 'utf8');
}

/** A tx's bytes, or undefined when it is not (non-empty, even-length) hex. */
function txBytes(tx: unknown): Buffer | undefined {
  if (typeof tx !== 'string' || tx.length === 0 || tx.length % 2 !== 0) return undefined;
  // node stops decoding hex at the first pair that is not hex: a short result is a tx that is not hex
  const bytes = Buffer.from(tx, 'hex');
  return bytes.length * 2 === tx.length ? bytes : undefined;
}

/**
 * The binary frame of a batch request, or undefined when one of its txs is not hex: that request goes as JSON, and
 * the server answers the item that is not hex as it always has (a 400 for that item alone).
 */
export function encodeBatchFrame(operation: 'createMany', body: BatchCreateRequest): Uint8Array | undefined;
export function encodeBatchFrame(operation: 'spendMany', body: BatchSpendRequest): Uint8Array | undefined;
export function encodeBatchFrame(
  operation: BinaryBatchOperation,
  body: BatchCreateRequest | BatchSpendRequest,
): Uint8Array | undefined;
export function encodeBatchFrame(
  operation: BinaryBatchOperation,
  body: BatchCreateRequest | BatchSpendRequest,
): Uint8Array | undefined {
  const { txs, ...requestOptions } = body as { txs: unknown[] };
  const items: { options: Buffer; tx: Buffer }[] = [];
  for (const entry of txs) {
    let tx: Buffer | undefined;
    let options: Buffer = Buffer.alloc(0);
    if (operation === 'createMany') {
      if (entry === null || typeof entry !== 'object') return undefined;
      const { tx: hex, ...rest } = entry as { tx: unknown };
      tx = txBytes(hex);
      options = json(rest);
    } else {
      tx = txBytes(entry);
    }
    if (tx === undefined) return undefined;
    items.push({ options, tx });
  }
  const options = json(requestOptions);
  let size = 10 + options.length + 4;
  for (const item of items) size += 8 + item.options.length + item.tx.length;
  const out = Buffer.allocUnsafe(size);
  out.write(BATCH_FRAME.magic, 0, 'latin1');
  out[4] = BATCH_FRAME.version;
  out[5] = operation === 'createMany' ? BATCH_FRAME.kinds.createTxs : BATCH_FRAME.kinds.spendTxs;
  let p = out.writeUInt32LE(options.length, 6);
  p += options.copy(out, p);
  p = out.writeUInt32LE(items.length, p);
  for (const item of items) {
    p = out.writeUInt32LE(item.options.length, p);
    p += item.options.copy(out, p);
    p = out.writeUInt32LE(item.tx.length, p);
    p += item.tx.copy(out, p);
  }
  return out;
}
