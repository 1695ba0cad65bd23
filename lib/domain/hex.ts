/**
 * Hex text <-> bytes, with errors that name the field.
 */
import { InvalidArgumentError } from './errors';

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

export function isHex(value: unknown, bytes?: number): value is string {
  if (typeof value !== 'string' || !HEX.test(value)) return false;
  return bytes === undefined || value.length === bytes * 2;
}

/** Hex to bytes; `bytes` demands an exact length. */
export function hexToBuffer(value: unknown, field: string, bytes?: number): Buffer {
  if (typeof value !== 'string') throw new InvalidArgumentError(field, 'expected a hex string');
  if (!HEX.test(value)) throw new InvalidArgumentError(field, 'expected hex characters (0-9, a-f) in pairs');
  if (bytes !== undefined && value.length !== bytes * 2) {
    throw new InvalidArgumentError(field, `expected ${bytes * 2} hex characters, got ${value.length}`);
  }
  return Buffer.from(value, 'hex');
}

/** A reversed copy (internal byte order <-> display order). */
export function reversed(bytes: Buffer): Buffer {
  return Buffer.from(bytes).reverse();
}
