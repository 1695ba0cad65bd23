/**
 * Spend items: derived from an EF spending tx (one per input) or validated from explicit spends, with their
 * record key and offset for B.
 */
import type { ItemOutcome } from '../domain/errors';
import { InvalidArgumentError } from '../domain/errors';
import { locateOutput, recordKey } from '../domain/keys';
import { encodeSpendingData, isFrozenMarker, spendingDataToText } from '../domain/spending-data';
import { parseTx } from '../domain/tx';
import { utxoHash } from '../domain/utxo-hash';
import { hashArg, intArg, listArg, txidArg } from './args';
import type { SpendItem, SpendRequest } from './types';

export interface ResolvedSpend {
  txid: string;
  txidBytes: Buffer;
  vout: number;
  utxoHash: Buffer;
  spendingTxid: string;
  spendingTxidBytes: Buffer;
  vin: number;
  spendingData: Buffer;
  recordNumber: number;
  offset: number;
}

function resolve(
  parent: { hex: string; bytes: Buffer },
  vout: number,
  hash: Buffer,
  spender: { hex: string; bytes: Buffer },
  vin: number,
  B: number,
): ResolvedSpend {
  const { recordNumber, offset } = locateOutput(vout, B);
  return {
    txid: parent.hex,
    txidBytes: parent.bytes,
    vout,
    utxoHash: hash,
    spendingTxid: spender.hex,
    spendingTxidBytes: spender.bytes,
    vin,
    spendingData: encodeSpendingData(spender.bytes, vin),
    recordNumber,
    offset,
  };
}

/** The key of the record holding the input's output: made when asked (once per record of a batch), not per input. */
export function recordKeyOf(item: ResolvedSpend): Buffer {
  return recordKey(item.txidBytes, item.recordNumber);
}

/** Explicit spends to spend: as resolveSpendItems, and no spending data may be the frozen marker (36 x 0xFF). */
export function resolveSpendsToSpend(value: unknown, B: number, field = 'spends'): ResolvedSpend[] {
  const items = resolveSpendItems(value, B, field);
  items.forEach((item, i) => {
    if (isFrozenMarker(item.spendingData)) {
      throw new InvalidArgumentError(`${field}[${i}]`, 'spendingTxid ff..ff with vin 0xffffffff is the frozen marker');
    }
  });
  return items;
}

/** Explicit spends ({txid, vout, utxoHash, spendingTxid, vin}), validated. */
export function resolveSpendItems(value: unknown, B: number, field = 'spends'): ResolvedSpend[] {
  return listArg<SpendItem>(value, field).map((s, i) => {
    const f = `${field}[${i}]`;
    if (s === null || typeof s !== 'object') throw new InvalidArgumentError(f, 'expected an object');
    const parent = { hex: String(s.txid).toLowerCase(), bytes: txidArg(s.txid, `${f}.txid`) };
    const spender = { hex: String(s.spendingTxid).toLowerCase(), bytes: txidArg(s.spendingTxid, `${f}.spendingTxid`) };
    return resolve(
      parent,
      intArg(s.vout, `${f}.vout`),
      hashArg(s.utxoHash, `${f}.utxoHash`),
      spender,
      intArg(s.vin, `${f}.vin`),
      B,
    );
  });
}

/** One spend per input of an EF tx; the UTXO hash comes from the EF prevout. */
export function spendsFromTx(tx: string | Buffer, B: number): ResolvedSpend[] {
  const parsed = parseTx(tx, 'tx');
  if (parsed.isCoinbase || parsed.inputs.length === 0) {
    throw new InvalidArgumentError('tx', 'the transaction spends no outputs');
  }
  if (!parsed.isExtended) throw new InvalidArgumentError('tx', 'extended format (EF, BIP-239) is required to spend');
  if (parsed.outputs.length === 0) throw new InvalidArgumentError('tx', 'a transaction needs at least one output');
  const spender = { hex: parsed.txidHex, bytes: parsed.txid };
  return parsed.inputs.map((input, vin) => {
    // a parsed input makes a new view of its parts each time one is asked: each is asked once
    const { lockingScript, satoshis, prevTxid } = input;
    if (lockingScript === undefined || satoshis === undefined) {
      throw new InvalidArgumentError(`tx.inputs[${vin}]`, 'missing the EF previous output');
    }
    const hash = utxoHash(prevTxid, input.vout, lockingScript, satoshis);
    return resolve({ hex: input.prevTxidHex, bytes: prevTxid }, input.vout, hash, spender, vin, B);
  });
}

export function spendsOf(request: SpendRequest, B: number): ResolvedSpend[] {
  if (request === null || typeof request !== 'object') throw new InvalidArgumentError('request', 'expected an object');
  if ('tx' in request && request.tx !== undefined) return spendsFromTx(request.tx, B);
  if ('spends' in request) return resolveSpendsToSpend(request.spends, B);
  throw new InvalidArgumentError('tx', 'either tx or spends is required');
}

/** Spending data as (display-hex txid, vin). */
export function spenderOf(spendingData: Buffer): { spendingTxid: string; vin: number } {
  const text = spendingDataToText(spendingData);
  return { spendingTxid: text.slice(0, 64), vin: Buffer.from(text.slice(64, 72), 'hex').readUInt32LE(0) };
}

export function outcome(item: ResolvedSpend, status: ItemOutcome['status']): ItemOutcome {
  return { txid: item.txid, vout: item.vout, status };
}
