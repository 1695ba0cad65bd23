/**
 * Transaction ids (docs/records.md): 32 bytes, double SHA-256 of the serialized tx, stored in internal
 * (little-endian) order and shown in display hex (reversed), as block explorers show them.
 */
import { hexToBuffer, reversed } from './hex';
import { sha256 } from './utxo-hash';

export const TXID_BYTES = 32;

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
