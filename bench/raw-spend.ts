/**
 * The raw limit's unit of work, shared by the bench sections: one spendMulti of output 0 of a parent, applied
 * straight on the engine (no store), so a section's store rows can be read as a ratio of it.
 */
import { encodeSpendItems } from '../lib/domain/udf';
import type { Fixture } from '../test/fixtures/txs';
import { utxoHashOf } from '../test/fixtures/txs';

const key = (txid: string): Buffer => Buffer.from(txid, 'hex').reverse();

/** Teranode's spending data: the spender's txid (little endian) and the input index. */
export function spendingData(txid: string, vin: number): Buffer {
  const b = Buffer.alloc(36);
  key(txid).copy(b);
  b.writeUInt32LE(vin, 32);
  return b;
}

/** The engine call that spends output 0 of `parent` by input `vin` of `spender` at height 1001. */
export function rawSpendCall(moduleName: string, parent: Fixture, spender: string, vin: number, retention: number) {
  return {
    key: key(parent.txid),
    module: moduleName,
    fn: 'spendMulti',
    args: [
      // the store's form of the items (one bytes value), so the raw limit does the store's engine work
      encodeSpendItems([
        {
          offset: 0,
          utxoHash: Buffer.from(utxoHashOf(parent, 0), 'hex').reverse(),
          spendingData: spendingData(spender, vin),
        },
      ]),
      false,
      false,
      1001,
      retention,
    ],
  };
}
