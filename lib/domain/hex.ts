/**
 * Hex text <-> bytes, with errors that name the field.
 */
import { InvalidArgumentError } from './errors';

/**
 * The bytes of hex text, or undefined when it is not hex digits in pairs. One pass: a write stops at the first pair
 * that is not hex, so a short write is the check. The buffer is sized exactly before the write: Buffer.from(hex)
 * reserves up to four bytes per character in Node's shared pool, so a block of ~1 KB txs started a new 8 KB pool
 * every few txs (2.6 % of a spend phase's CPU in a profile of the scale bench).
 */
export function decodeHex(hex: string): Buffer | undefined {
  if (hex.length % 2 !== 0) return undefined;
  const bytes = Buffer.allocUnsafe(hex.length >>> 1);
  return bytes.write(hex, 'hex') === bytes.length ? bytes : undefined;
}

/** Hex to bytes; `bytes` demands an exact length. */
export function hexToBuffer(value: unknown, field: string, bytes?: number): Buffer {
  if (typeof value !== 'string') throw new InvalidArgumentError(field, 'expected a hex string');
  const decoded = decodeHex(value);
  if (decoded === undefined) throw new InvalidArgumentError(field, 'expected hex characters (0-9, a-f) in pairs');
  if (bytes !== undefined && value.length !== bytes * 2) {
    throw new InvalidArgumentError(field, `expected ${bytes * 2} hex characters, got ${value.length}`);
  }
  return decoded;
}

/** A reversed copy (internal byte order <-> display order). */
export function reversed(bytes: Buffer): Buffer {
  return Buffer.from(bytes).reverse();
}
