/**
 * The record facts cleanup reads (docs/records.md), as thin views over lib/domain: keys, slot states, the spender
 * of a spent slot and the outpoints a tx spends (from its `inputs` bin or its `.tx` blob).
 */
import { recordKey } from '../domain/keys';
import { decodeSlot } from '../domain/slots';
import { decodeSpendingData } from '../domain/spending-data';
import { parseTx } from '../domain/tx';
import { txidToBytes, txidToHex } from '../domain/txid';

export const txidHex = txidToHex;

export function txidBytes(displayHex: string): Buffer {
  return txidToBytes(displayHex);
}

/** Key of record n of a tx: the master (n = 0) or pagination record n. */
export const keyOfRecord = recordKey;

export interface SpendingChild {
  /** child txid, internal order */
  txid: Buffer;
  /** display hex */
  txidHex: string;
  vin: number;
}

export type SlotState = 'none' | 'unspent' | 'spent' | 'frozen' | 'invalid';

export function slotState(slot: unknown): SlotState {
  if (slot === null || slot === undefined) return 'none';
  const decoded = decodeSlot(slot);
  return decoded.state === 'none' ? 'invalid' : decoded.state;
}

/** The spender of a spent (non-frozen, 68-byte) slot. */
export function spendingChildOf(slot: Buffer): SpendingChild {
  const { txid, vin } = decodeSpendingData(slot.subarray(32, 68));
  return { txid, txidHex: txidToHex(txid), vin };
}

export interface Outpoint {
  /** previous txid, internal order */
  txid: Buffer;
  vout: number;
}

/**
 * Outpoints of the `inputs` bin: a list with one serialized input per element (prev txid || vout || ...).
 * Null when an element is not an input (unknown encoding: the caller keeps the tx).
 */
export function outpointsOfInputsBin(inputs: unknown): Outpoint[] | null {
  if (!Array.isArray(inputs)) return null;
  const out: Outpoint[] = [];
  for (const input of inputs) {
    if (!Buffer.isBuffer(input) || input.length < 41) return null;
    out.push({ txid: Buffer.from(input.subarray(0, 32)), vout: input.readUInt32LE(32) });
  }
  return out;
}

/** Outpoints of a serialized tx (EF as in the `.tx` blob, or raw). Null when the bytes do not parse. */
export function outpointsOfTx(bytes: Buffer): Outpoint[] | null {
  try {
    return parseTx(bytes).inputs.map((i) => ({ txid: i.prevTxid, vout: i.vout }));
  } catch {
    return null;
  }
}

/** A coinbase input spends the null outpoint: there is no parent to update. */
export function isNullOutpoint(o: Outpoint): boolean {
  return o.vout === 0xffffffff && o.txid.every((b) => b === 0);
}
