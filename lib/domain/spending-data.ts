/**
 * Spending data (docs/records.md): 36 bytes = spending txid (internal order) || input index (uint32 LE).
 * As text: 72 hex characters = display-hex txid followed by the 4 index bytes as stored.
 * The frozen marker is spending data of 36 bytes 0xFF.
 */
import { hexToBuffer, reversed } from './hex';

export const SPENDING_DATA_BYTES = 36;

export const FROZEN_SPENDING_DATA: Buffer = Buffer.alloc(SPENDING_DATA_BYTES, 0xff);

export function encodeSpendingData(spendingTxid: Buffer, vin: number): Buffer {
  if (spendingTxid.length !== 32) throw new RangeError('spending txid must be 32 bytes');
  // every byte is written below; allocUnsafe takes it from Node's pool (Buffer.alloc of <= 64 bytes is on the V8
  // heap, and the Aerospike client moves such a buffer off it to read it: the spend path sends one per input)
  const out = Buffer.allocUnsafe(SPENDING_DATA_BYTES);
  spendingTxid.copy(out, 0);
  out.writeUInt32LE(vin, 32);
  return out;
}

export function decodeSpendingData(data: Buffer): { txid: Buffer; vin: number } {
  if (data.length !== SPENDING_DATA_BYTES) throw new RangeError('spending data must be 36 bytes');
  return { txid: Buffer.from(data.subarray(0, 32)), vin: data.readUInt32LE(32) };
}

export function isFrozenMarker(data: Buffer): boolean {
  return data.length === SPENDING_DATA_BYTES && data.equals(FROZEN_SPENDING_DATA);
}

export function spendingDataToText(data: Buffer): string {
  if (data.length !== SPENDING_DATA_BYTES) throw new RangeError('spending data must be 36 bytes');
  return reversed(data.subarray(0, 32)).toString('hex') + data.subarray(32).toString('hex');
}

export function spendingDataFromText(text: unknown, field = 'spendingData'): Buffer {
  const bytes = hexToBuffer(text, field, SPENDING_DATA_BYTES);
  return Buffer.concat([reversed(bytes.subarray(0, 32)), bytes.subarray(32)]);
}
