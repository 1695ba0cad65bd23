/**
 * Output slots (docs/records.md): nil when the output is not stored (0 sat and OP_RETURN / OP_FALSE OP_RETURN),
 * 32 bytes (unspent: the UTXO hash), 68 bytes (UTXO hash || spending data: spent, or frozen with the marker).
 */
import { FROZEN_SPENDING_DATA, isFrozenMarker } from './spending-data';

export const UNSPENT_SLOT_BYTES = 32;
export const SPENT_SLOT_BYTES = 68;

/** False for provably unspendable outputs that get no slot. */
export function isStoredOutput(satoshis: number | bigint, lockingScript: Buffer): boolean {
  if (satoshis !== 0 && satoshis !== 0n) return true;
  if (lockingScript.length >= 1 && lockingScript[0] === 0x6a) return false;
  if (lockingScript.length >= 2 && lockingScript[0] === 0x00 && lockingScript[1] === 0x6a) return false;
  return true;
}

export function unspentSlot(utxoHash: Buffer): Buffer {
  if (utxoHash.length !== UNSPENT_SLOT_BYTES) throw new RangeError('UTXO hash must be 32 bytes');
  return Buffer.from(utxoHash);
}

export function spentSlot(utxoHash: Buffer, spendingData: Buffer): Buffer {
  return Buffer.concat([unspentSlot(utxoHash), spendingData]);
}

export function frozenSlot(utxoHash: Buffer): Buffer {
  return spentSlot(utxoHash, FROZEN_SPENDING_DATA);
}

export type DecodedSlot =
  | { state: 'none' }
  | { state: 'unspent'; utxoHash: Buffer }
  | { state: 'spent'; utxoHash: Buffer; spendingData: Buffer }
  | { state: 'frozen'; utxoHash: Buffer };

/** A slot's state; anything that is not a 32- or 68-byte value is 'none'. */
export function decodeSlot(slot: unknown): DecodedSlot {
  if (!Buffer.isBuffer(slot)) return { state: 'none' };
  if (slot.length === UNSPENT_SLOT_BYTES) return { state: 'unspent', utxoHash: slot };
  if (slot.length !== SPENT_SLOT_BYTES) return { state: 'none' };
  const utxoHash = slot.subarray(0, 32);
  const spendingData = slot.subarray(32, 68);
  if (isFrozenMarker(spendingData)) return { state: 'frozen', utxoHash };
  return { state: 'spent', utxoHash, spendingData };
}
