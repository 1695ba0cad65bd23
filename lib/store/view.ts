/**
 * Record bins as JSON-friendly values (get): txids and hashes in display hex, other bytes in hex, 64-bit integers
 * as numbers when safe (else decimal strings).
 */
import type { BinValue } from '../engine/port';
import { BIN } from '../domain/bins';
import { decodeSlot } from '../domain/slots';
import { txidToHex } from '../domain/txid';
import { hashToHex } from '../domain/utxo-hash';
import type { UtxoView } from './types';
import { spenderOf } from './spend-items';

export function plain(value: BinValue): unknown {
  if (value === null) return null;
  if (Buffer.isBuffer(value)) return value.toString('hex');
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v);
    return out;
  }
  return value;
}

function reassignmentView(value: BinValue): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value))
    return plain(value);
  const out = plain(value) as Record<string, unknown>;
  if (Buffer.isBuffer(value.utxoHash)) out.utxoHash = hashToHex(value.utxoHash);
  if (Buffer.isBuffer(value.newUtxoHash)) out.newUtxoHash = hashToHex(value.newUtxoHash);
  return out;
}

export function slotView(slot: BinValue): UtxoView | null {
  if (!Buffer.isBuffer(slot)) return null;
  const decoded = decodeSlot(slot);
  if (decoded.state === 'none') return null;
  const utxoHash = hashToHex(slot.subarray(0, 32));
  if (decoded.state === 'unspent') return { utxoHash, status: 'UNSPENT' };
  if (decoded.state === 'frozen') return { utxoHash, status: 'FROZEN' };
  return { utxoHash, status: 'SPENT', ...spenderOf(slot.subarray(32, 68)) };
}

/** One bin's value as returned by get(). */
export function binView(name: string, value: BinValue | undefined): unknown {
  if (value === undefined) return undefined;
  switch (name) {
    case BIN.txID:
      return Buffer.isBuffer(value) ? txidToHex(value) : plain(value);
    case BIN.conflictingCs:
      return Array.isArray(value) ? value.map((v) => (Buffer.isBuffer(v) ? txidToHex(v) : plain(v))) : plain(value);
    case BIN.reassignments:
      return Array.isArray(value) ? value.map(reassignmentView) : plain(value);
    case BIN.utxos:
      return Array.isArray(value) ? value.map(slotView) : plain(value);
    default:
      return plain(value);
  }
}
