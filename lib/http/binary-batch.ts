/**
 * The binary body of the write batches (docs/api.md, "Binary batch bodies"): POST /v1/batch/txs and
 * POST /v1/batch/spends take `Content-Type: application/octet-stream`, a frame holding each tx's raw bytes and the
 * request's options, instead of JSON with the txs in hex (half the bytes on the wire, no hex to decode). All integers
 * are unsigned little-endian:
 *
 *   magic "UTXB" (4) | version 1 (u8) | kind (u8: 1 txs, 2 spends) | options length (u32) | options JSON
 *   | item count (u32) | per item: options length (u32) | options JSON | tx length (u32) | tx bytes
 *
 * An options length of 0 means none; options are a UTF-8 JSON object: the request's hold the JSON body's fields but
 * `txs`, an item's the JSON item's fields but `tx` (POST /v1/batch/txs); a spend item has no options. Nothing may follow the last item. Only the magic and the version byte are fixed for every
 * version to come. This module is the codec alone (no zod, no store): lib/http/binary-body.ts turns a decoded frame
 * into the route's body; the client has its own encoder (packages/client/src/binary-batch.ts), and both are held to
 * the same golden bytes (test/http/binary-batch-codec.test.ts).
 */

export const FRAME_MAGIC = Buffer.from('UTXB', 'latin1');
export const FRAME_VERSION = 1;

/** The route a frame is for: a frame sent to the other route is refused, not read as that route's items. */
export const FRAME_KIND = { txs: 1, spends: 2 } as const;
export type FrameKind = (typeof FRAME_KIND)[keyof typeof FRAME_KIND];

const KIND_ROUTE: Record<number, string> = { 1: 'POST /v1/batch/txs', 2: 'POST /v1/batch/spends' };

/** The fixed bytes of an item: its options length and its tx length. */
export const ITEM_HEADER_BYTES = 8;
/** magic, version, kind and the request options' length */
const HEAD_BYTES = 10;

export interface FrameItem {
  /** the item's options (POST /v1/batch/txs: blockHeight, minedBlocks, ...), absent when none */
  options?: Record<string, unknown>;
  /** the tx's bytes: raw, or extended format (BIP-239) when it has inputs */
  tx: Uint8Array;
}

export interface BatchFrame {
  kind: FrameKind;
  /** the request's options (brief; for spends ignoreConflicting, ignoreLocked, blockHeight), absent when none */
  options?: Record<string, unknown>;
  items: FrameItem[];
}

export interface DecodedFrame extends BatchFrame {
  /** views into the decoded body, not copies */
  items: { options?: Record<string, unknown>; tx: Buffer }[];
}

/** A malformed frame: where in the body (byte offset) and in which item (undefined: the frame's own fields). */
export class FrameError extends Error {
  constructor(
    readonly offset: number,
    readonly item: number | undefined,
    readonly problem: string,
  ) {
    super(`byte ${offset}${item === undefined ? '' : `, item ${item}`}: ${problem}`);
    this.name = 'FrameError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function optionsJson(value: Record<string, unknown> | undefined): Buffer {
  if (value === undefined) return Buffer.alloc(0);
  const text = JSON.stringify(value);
  return text === '{}' ? Buffer.alloc(0) : Buffer.from(text, 'utf8');
}

/** The frame's bytes. Options that serialize to `{}` are written as none (length 0). */
export function encodeBatchFrame(frame: BatchFrame): Buffer {
  const options = optionsJson(frame.options);
  const items = frame.items.map((item) => ({ options: optionsJson(item.options), tx: item.tx }));
  let size = HEAD_BYTES + options.length + 4;
  for (const item of items) size += ITEM_HEADER_BYTES + item.options.length + item.tx.length;
  const out = Buffer.allocUnsafe(size);
  FRAME_MAGIC.copy(out, 0);
  out[4] = FRAME_VERSION;
  out[5] = frame.kind;
  let p = out.writeUInt32LE(options.length, 6);
  p += options.copy(out, p);
  p = out.writeUInt32LE(items.length, p);
  for (const item of items) {
    p = out.writeUInt32LE(item.options.length, p);
    p += item.options.copy(out, p);
    p = out.writeUInt32LE(item.tx.length, p);
    out.set(item.tx, p);
    p += item.tx.length;
  }
  return out;
}

/** Reads a frame whole (nothing is applied from a frame that fails anywhere), or throws a FrameError. */
export function decodeBatchFrame(body: Buffer, expectedKind?: FrameKind): DecodedFrame {
  let item: number | undefined;
  const fail = (offset: number, problem: string): never => {
    throw new FrameError(offset, item, problem);
  };
  const u32 = (at: number, what: string): number => {
    if (at + 4 > body.length) fail(at, `truncated: the ${what} (4 bytes) runs past the end of the body`);
    return body.readUInt32LE(at);
  };
  const json = (at: number, length: number, what: string, reserved: string): Record<string, unknown> | undefined => {
    if (length > body.length - at) {
      fail(at - 4, `the ${what} length ${length} runs past the end of the body (${body.length - at} bytes left)`);
    }
    if (length === 0) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(body.subarray(at, at + length)));
    } catch (err) {
      return fail(at, `the ${what} are not UTF-8 JSON: ${(err as Error).message}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      fail(at, `the ${what} must be a JSON object (length 0 for none)`);
    }
    // the txs are the frame's own bytes: options naming them would stand for a second, conflicting copy
    if (Object.hasOwn(value as object, reserved))
      fail(at, `the ${what} may not hold "${reserved}": the frame carries it`);
    return value as Record<string, unknown>;
  };

  if (body.length < FRAME_MAGIC.length || !body.subarray(0, 4).equals(FRAME_MAGIC)) {
    fail(0, 'not a batch frame: it must start with the magic "UTXB"');
  }
  if (body.length < 5) fail(4, 'truncated: no version byte');
  if (body[4] !== FRAME_VERSION) fail(4, `version ${body[4]} is not supported (this server reads version 1)`);
  if (body.length < 6) fail(5, 'truncated: no kind byte');
  const kind = body[5];
  if (KIND_ROUTE[kind] === undefined) fail(5, `unknown kind ${kind} (1: POST /v1/batch/txs, 2: /v1/batch/spends)`);
  if (expectedKind !== undefined && kind !== expectedKind) {
    fail(5, `a frame of kind ${kind} (${KIND_ROUTE[kind]}) sent to ${KIND_ROUTE[expectedKind]}`);
  }
  const optionsLength = u32(6, 'request options length');
  const options = json(HEAD_BYTES, optionsLength, 'request options', 'txs');
  let p = HEAD_BYTES + optionsLength;
  const count = u32(p, 'item count');
  p += 4;
  // every item takes at least its 8 header bytes: a count the body cannot hold is refused before anything is allocated
  const room = Math.floor((body.length - p) / ITEM_HEADER_BYTES);
  if (count > room) fail(p - 4, `item count ${count}: the ${body.length - p} bytes left hold at most ${room} items`);
  const items: DecodedFrame['items'] = new Array(count);
  for (let i = 0; i < count; i++) {
    item = i;
    const itemOptionsLength = u32(p, 'options length');
    if (kind === FRAME_KIND.spends && itemOptionsLength !== 0) {
      fail(p, `a spend item has no options: its options length must be 0, not ${itemOptionsLength}`);
    }
    const itemOptions = json(p + 4, itemOptionsLength, 'item options', 'tx');
    p += 4 + itemOptionsLength;
    const txLength = u32(p, 'tx length');
    p += 4;
    if (txLength > body.length - p) {
      fail(p - 4, `the tx length ${txLength} runs past the end of the body (${body.length - p} bytes left)`);
    }
    const tx = body.subarray(p, p + txLength);
    p += txLength;
    items[i] = itemOptions === undefined ? { tx } : { options: itemOptions, tx };
  }
  item = undefined;
  if (p !== body.length) fail(p, `${body.length - p} trailing bytes after the last item`);
  return { kind: kind as FrameKind, ...(options !== undefined && { options }), items };
}
