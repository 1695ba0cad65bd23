/**
 * UTXO hash (docs/records.md): SHA-256 (single) of
 *   txid (internal order) || CompactSize(vout) || locking script || CompactSize(satoshis)
 * stored as the 32-byte digest, shown reversed in the API.
 */
import { createHash, hash } from 'crypto';
import { hexToBuffer, reversed } from './hex';

export const UTXO_HASH_BYTES = 32;

/** Bytes of the CompactSize encoding of `n` (a non-negative safe integer). */
export function compactSizeLength(n: number): number {
  return n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9;
}

/** Writes the CompactSize encoding of `n` (a non-negative safe integer) at `offset`; returns the offset after it. */
export function writeCompactSize(out: Buffer, n: number, offset: number): number {
  if (n < 0xfd) {
    out[offset] = n;
    return offset + 1;
  }
  if (n <= 0xffff) {
    out[offset] = 0xfd;
    return out.writeUInt16LE(n, offset + 1);
  }
  if (n <= 0xffffffff) {
    out[offset] = 0xfe;
    return out.writeUInt32LE(n, offset + 1);
  }
  out[offset] = 0xff;
  return out.writeBigUInt64LE(BigInt(n), offset + 1);
}

/** Bitcoin CompactSize (varint) encoding of a non-negative integer. */
export function compactSize(value: number | bigint): Buffer {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
    const b = Buffer.allocUnsafe(compactSizeLength(value));
    writeCompactSize(b, value, 0);
    return b;
  }
  const n = BigInt(value);
  if (n < 0n || n > 0xffffffffffffffffn) throw new RangeError(`compactSize: ${n} out of range`);
  if (n <= BigInt(Number.MAX_SAFE_INTEGER)) return compactSize(Number(n));
  const b = Buffer.alloc(9);
  b[0] = 0xff;
  b.writeBigUInt64LE(n, 1);
  return b;
}

/** A fresh 32-byte buffer (the caller may keep it): one preimage buffer and one hash call per output. */
export function utxoHash(txid: Buffer, vout: number, lockingScript: Buffer, satoshis: number | bigint): Buffer {
  if (typeof satoshis !== 'number' || !Number.isSafeInteger(satoshis) || satoshis < 0) {
    return createHash('sha256')
      .update(txid)
      .update(compactSize(vout))
      .update(lockingScript)
      .update(compactSize(satoshis))
      .digest();
  }
  const preimage = Buffer.allocUnsafe(
    txid.length + compactSizeLength(vout) + lockingScript.length + compactSizeLength(satoshis),
  );
  let at = txid.copy(preimage, 0);
  at = writeCompactSize(preimage, vout, at);
  at += lockingScript.copy(preimage, at);
  writeCompactSize(preimage, satoshis, at);
  return sha256(preimage);
}

/**
 * SHA-256 of `data` as a fresh 32-byte buffer. The digest is taken as a latin1 ('binary') string and copied into a buffer of
 * Node's pool: about half the CPU of `hash(..., 'buffer')`, which gives every digest an ArrayBuffer of its own (an
 * allocation outside the heap and work for the GC per hash; the create path hashes every output and every txid).
 */
export function sha256(data: Buffer): Buffer {
  return Buffer.from(hash('sha256', data, 'binary'), 'binary');
}

/** Display hex of a stored hash (reversed). */
export function hashToHex(hash: Buffer): string {
  return reversed(hash).toString('hex');
}

/** Stored bytes of a display-hex hash; InvalidArgumentError naming `field` otherwise. */
export function hashFromHex(hex: unknown, field = 'utxoHash'): Buffer {
  return reversed(hexToBuffer(hex, field, UTXO_HASH_BYTES));
}
