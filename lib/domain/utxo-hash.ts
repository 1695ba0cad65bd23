/**
 * UTXO hash (docs/records.md): SHA-256 (single) of
 *   txid (internal order) || CompactSize(vout) || locking script || CompactSize(satoshis)
 * stored as the 32-byte digest, shown reversed in the API.
 */
import { createHash } from 'crypto';
import { hexToBuffer, reversed } from './hex';

export const UTXO_HASH_BYTES = 32;

/** Bitcoin CompactSize (varint) encoding of a non-negative integer. */
export function compactSize(value: number | bigint): Buffer {
  const n = BigInt(value);
  if (n < 0n || n > 0xffffffffffffffffn) throw new RangeError(`compactSize: ${n} out of range`);
  if (n < 0xfdn) return Buffer.from([Number(n)]);
  if (n <= 0xffffn) {
    const b = Buffer.alloc(3);
    b[0] = 0xfd;
    b.writeUInt16LE(Number(n), 1);
    return b;
  }
  if (n <= 0xffffffffn) {
    const b = Buffer.alloc(5);
    b[0] = 0xfe;
    b.writeUInt32LE(Number(n), 1);
    return b;
  }
  const b = Buffer.alloc(9);
  b[0] = 0xff;
  b.writeBigUInt64LE(n, 1);
  return b;
}

export function utxoHash(txid: Buffer, vout: number, lockingScript: Buffer, satoshis: number | bigint): Buffer {
  return createHash('sha256')
    .update(txid)
    .update(compactSize(vout))
    .update(lockingScript)
    .update(compactSize(satoshis))
    .digest();
}

/** Display hex of a stored hash (reversed). */
export function hashToHex(hash: Buffer): string {
  return reversed(hash).toString('hex');
}

/** Stored bytes of a display-hex hash; InvalidArgumentError naming `field` otherwise. */
export function hashFromHex(hex: unknown, field = 'utxoHash'): Buffer {
  return reversed(hexToBuffer(hex, field, UTXO_HASH_BYTES));
}
