/**
 * Transaction ids (docs/records.md): 32 bytes, double SHA-256 of the serialized tx, stored in internal
 * (little-endian) order and shown in display hex (reversed), as block explorers show them.
 */
import { hash } from 'crypto';
import { hexToBuffer, reversed } from './hex';

export const TXID_BYTES = 32;

/**
 * SHA-256 of `data`, a fresh 32-byte Buffer. The digest is asked as 'binary' (latin1) text, one char per byte
 * (exact), and copied into Node's buffer pool: on Node 22 that is about half the CPU of crypto.hash's 'buffer'
 * output, and the result is a view of the pool, which the Aerospike client reads without moving it off the V8 heap
 * (the spend path sends every input's UTXO hash to a UDF).
 */
export function sha256(data: Buffer): Buffer {
  return Buffer.from(hash('sha256', data, 'binary'), 'binary');
}

export function doubleSha256(data: Buffer): Buffer {
  return sha256(sha256(data));
}

/** Internal-order txid of serialized (non-extended) tx bytes. */
export function txidOf(rawTx: Buffer): Buffer {
  return doubleSha256(rawTx);
}

/** A txid's display order is written here to be hex-encoded: no buffer per txid shown (every input shows one). */
const displayOrder = Buffer.alloc(TXID_BYTES);

/** Display hex (reversed, lowercase) of internal-order txid bytes. */
export function txidToHex(txid: Buffer): string {
  if (txid.length !== TXID_BYTES) return reversed(txid).toString('hex');
  for (let i = 0; i < TXID_BYTES; i++) displayOrder[i] = txid[TXID_BYTES - 1 - i];
  return displayOrder.toString('hex');
}

/** Internal-order bytes of a display-hex txid; InvalidArgumentError naming `field` otherwise. */
export function txidToBytes(hex: unknown, field = 'txid'): Buffer {
  return reversed(hexToBuffer(hex, field, TXID_BYTES));
}
