/**
 * Request validation shared by the operations: display-hex txids and hashes to bytes, integers, lists.
 */
import { InvalidArgumentError } from '../domain/errors';
import { hashFromHex } from '../domain/utxo-hash';
import { txidToBytes } from '../domain/txid';

export function txidArg(value: unknown, field: string): Buffer {
  if (typeof value !== 'string') throw new InvalidArgumentError(field, 'expected a 64-character hex txid');
  return txidToBytes(value, field);
}

export function hashArg(value: unknown, field: string): Buffer {
  if (typeof value !== 'string') throw new InvalidArgumentError(field, 'expected a 64-character hex hash');
  return hashFromHex(value, field);
}

export function intArg(value: unknown, field: string, min = 0, max = 0xffffffff): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(field, `expected an integer in [${min}, ${max}]`);
  }
  return value;
}

export function optionalIntArg(value: unknown, field: string, min = 0, max = 0xffffffff): number | undefined {
  return value === undefined ? undefined : intArg(value, field, min, max);
}

export function boolArg(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidArgumentError(field, 'expected true or false');
  return value;
}

export function listArg<T>(value: unknown, field: string, allowEmpty = false): T[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(field, 'expected a list');
  if (!allowEmpty && value.length === 0) throw new InvalidArgumentError(field, 'expected at least one item');
  return value as T[];
}

/** Unique txids of a list, as [display hex, bytes] pairs in first-seen order. */
export function txidListArg(value: unknown, field: string): { hex: string; bytes: Buffer }[] {
  const seen = new Map<string, Buffer>();
  listArg<unknown>(value, field).forEach((t, i) => {
    const bytes = txidArg(t, `${field}[${i}]`);
    const hex = (t as string).toLowerCase();
    if (!seen.has(hex)) seen.set(hex, bytes);
  });
  return [...seen].map(([hex, bytes]) => ({ hex, bytes }));
}

export function optionalBoolArg(value: unknown, field: string, fallback = false): boolean {
  return value === undefined ? fallback : boolArg(value, field);
}
