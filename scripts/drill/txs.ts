/**
 * The drill's transactions, built with the store's own serializer (lib/domain/tx.ts) rather than a tx library: a
 * spender needs only its parent's output (EF carries it), so the load keeps outpoints, not parent txs, in memory.
 * Outputs are OP_TRUE and inputs unlock with an empty script, as in the partition harness (scripts/partition/plan.ts):
 * the store stores and spends, it does not run scripts.
 */
import { assembleTx, serializeInput, serializeOutput } from '../../lib/domain/tx';
import { txidOf, txidToBytes, txidToHex } from '../../lib/domain/txid';

const TRUE_SCRIPT = Buffer.from([0x51]);

/** A spendable output: what a spender's EF input needs. */
export interface Utxo {
  txid: string;
  vout: number;
  satoshis: number;
}

export interface BuiltTx {
  txid: string;
  /** raw hex (a seed) or EF hex (a spender) */
  hex: string;
  outputs: Utxo[];
}

/** A tx without inputs and `outputs` outputs of `satoshis` each; `nonce` (its locktime) makes its txid unique. */
export function seedTx(nonce: number, outputs: number, satoshis: number): BuiltTx {
  const raw = assembleTx({
    version: 1,
    locktime: nonce >>> 0,
    inputs: [],
    outputs: Array.from({ length: outputs }, () => serializeOutput({ satoshis, lockingScript: TRUE_SCRIPT })),
    extended: false,
  });
  const txid = txidToHex(txidOf(raw));
  return {
    txid,
    hex: raw.toString('hex'),
    outputs: Array.from({ length: outputs }, (_, vout) => ({ txid, vout, satoshis })),
  };
}

/**
 * The EF tx spending `parent` with one output; `variant` (its locktime and a satoshi less per variant) makes rival
 * spenders of one output differ. The fee is `1 + variant` satoshis.
 */
export function spenderTx(parent: Utxo, variant = 0): BuiltTx {
  const satoshis = parent.satoshis - 1 - variant;
  if (satoshis < 1) throw new Error(`output ${parent.txid}:${parent.vout} holds too few satoshis to spend`);
  const input = {
    prevTxid: txidToBytes(parent.txid),
    prevTxidHex: parent.txid,
    vout: parent.vout,
    unlockingScript: Buffer.alloc(0),
    sequence: 0xffffffff,
    satoshis: parent.satoshis,
    lockingScript: TRUE_SCRIPT,
  };
  const parts = {
    version: 1,
    locktime: variant,
    outputs: [serializeOutput({ satoshis, lockingScript: TRUE_SCRIPT })],
  };
  const raw = assembleTx({ ...parts, inputs: [serializeInput(input, false)], extended: false });
  const ef = assembleTx({ ...parts, inputs: [serializeInput(input, true)], extended: true });
  const txid = txidToHex(txidOf(raw));
  return { txid, hex: ef.toString('hex'), outputs: [{ txid, vout: 0, satoshis }] };
}
