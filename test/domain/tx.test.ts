import { createHash } from 'crypto';
import fc from 'fast-check';
import { PrivateKey, P2PKH, Script, Transaction } from '@bsv/sdk';
import { InvalidArgumentError } from '../../lib/domain/errors';
import { assembleTx, parseTx, serializeInput, serializeOutput } from '../../lib/domain/tx';
import { hashToHex, utxoHash, compactSize } from '../../lib/domain/utxo-hash';
import {
  GOLDEN_EF_HEX,
  GOLDEN_EXTENDED_SIZE,
  GOLDEN_FEE,
  GOLDEN_PARENT_TXID,
  GOLDEN_SIZE,
  GOLDEN_TXID,
  GOLDEN_UTXO_HASHES,
} from '../fixtures/golden-tx';
import { coinbaseTx, makeTx, rootTx } from '../fixtures/txs';

describe('parseTx on the golden EF transaction', () => {
  const parsed = parseTx(GOLDEN_EF_HEX);

  it('computes txid, fee and sizes', () => {
    expect(parsed.txidHex).toBe(GOLDEN_TXID);
    expect(parsed.isExtended).toBe(true);
    expect(parsed.isCoinbase).toBe(false);
    expect(parsed.fee).toBe(GOLDEN_FEE);
    expect(parsed.sizeInBytes).toBe(GOLDEN_SIZE);
    expect(parsed.extendedSize).toBe(GOLDEN_EXTENDED_SIZE);
    expect(parsed.inputs[0].prevTxidHex).toBe(GOLDEN_PARENT_TXID);
  });

  it('gives the check value of docs/records.md as the UTXO hash of output 0', () => {
    const o = parsed.outputs[0];
    expect(o.satoshis).toBe(5_000_000);
    expect(hashToHex(utxoHash(parsed.txid, 0, o.lockingScript, o.satoshis))).toBe(
      '5cee463416702311eace06a42e700f3d95ee7793d3ae52af9c051a4981e8345a',
    );
    const all = parsed.outputs.map((out, vout) =>
      hashToHex(utxoHash(parsed.txid, vout, out.lockingScript, out.satoshis)),
    );
    expect(all).toEqual(GOLDEN_UTXO_HASHES);
  });

  it('re-assembles the same EF and raw bytes from its parts', () => {
    const ef = assembleTx({
      version: parsed.version,
      locktime: parsed.locktime,
      inputs: parsed.inputs.map((i) => serializeInput(i, true)),
      outputs: parsed.outputs.map(serializeOutput),
      extended: true,
    });
    expect(ef.toString('hex')).toBe(GOLDEN_EF_HEX);
    // each part's wire bytes are its view of the tx: the same bytes its serialization writes, in the form it came in
    for (const i of parsed.inputs) expect(i.wire).toEqual(serializeInput(i, true));
    for (const o of parsed.outputs) expect(o.wire).toEqual(serializeOutput(o));
    for (const i of parseTx(parsed.raw).inputs) expect(i.wire).toEqual(serializeInput(i, false));
    expect(parseTx(parsed.raw).txidHex).toBe(GOLDEN_TXID);
    expect(parseTx(parsed.raw).isExtended).toBe(false);
    expect(parseTx(parsed.raw).fee).toBe(0);
  });

  it('reads bytes as well as hex, in any letter case', () => {
    expect(parseTx(Buffer.from(GOLDEN_EF_HEX, 'hex')).txidHex).toBe(GOLDEN_TXID);
    expect(parseTx(GOLDEN_EF_HEX.toUpperCase()).txidHex).toBe(GOLDEN_TXID);
  });
});

describe('parseTx against @bsv/sdk as the oracle', () => {
  it('agrees on txid, outputs and prevouts of random transactions', () => {
    const key = PrivateKey.fromRandom();
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 2_000_000 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (ins, outs, locktime) => {
          const tx = new Transaction();
          tx.lockTime = locktime;
          ins.forEach((sat, i) => {
            const parent = new Transaction();
            parent.addOutput({ lockingScript: new P2PKH().lock(key.toAddress()), satoshis: sat });
            parent.lockTime = i + locktime;
            tx.addInput({
              sourceTransaction: parent,
              sourceOutputIndex: 0,
              unlockingScript: Script.fromHex('51'),
              sequence: 0xffffffff,
            });
          });
          outs.forEach((sat) =>
            tx.addOutput({ lockingScript: Script.fromHex('76a914' + '00'.repeat(20) + '88ac'), satoshis: sat }),
          );
          const totalIn = ins.reduce((a, b) => a + b, 0);
          const totalOut = outs.reduce((a, b) => a + b, 0);
          if (totalOut > totalIn) {
            expect(() => parseTx(tx.toHexEF())).toThrow(InvalidArgumentError);
            return;
          }
          const parsed = parseTx(tx.toHexEF());
          expect(parsed.txidHex).toBe(tx.id('hex'));
          expect(parsed.raw.toString('hex')).toBe(tx.toHex());
          expect(parsed.fee).toBe(totalIn - totalOut);
          expect(parsed.outputs.map((o) => o.satoshis)).toEqual(outs);
          expect(parsed.inputs.map((i) => i.prevTxidHex)).toEqual(tx.inputs.map((i) => i.sourceTransaction!.id('hex')));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('recognises coinbase and no-input transactions', () => {
    const cb = parseTx(coinbaseTx(2).hex);
    expect(cb.isCoinbase).toBe(true);
    // one input spending vout 0xffffffff of a txid that is not all zeroes is not a coinbase
    const notNull = Buffer.from(cb.raw);
    notNull[5 + 31] = 1; // the last byte of the input's parent txid (after the version and the input count)
    expect(parseTx(notNull).isCoinbase).toBe(false);
    expect(cb.fee).toBe(0);
    const root = parseTx(rootTx(3).hex);
    expect(root.inputs).toHaveLength(0);
    expect(root.outputs).toHaveLength(3);
    expect(root.isCoinbase).toBe(false);
    const child = makeTx({ inputs: [{ parent: rootTx(1), vout: 0 }], outputs: 1 });
    expect(parseTx(child.hex).isExtended).toBe(true);
  });
});

describe('parseTx rejects malformed input with the field named', () => {
  const cases: [string, string | Buffer, RegExp][] = [
    ['empty', '', /empty/],
    ['odd length', 'abc', /hex/],
    ['non-hex', 'zz', /hex/],
    ['truncated', GOLDEN_EF_HEX.slice(0, 100), /truncated/],
    ['trailing bytes', GOLDEN_EF_HEX + '00', /after the locktime/],
  ];
  it.each(cases)('%s', (_name, input, message) => {
    try {
      parseTx(input, 'body.tx');
      throw new Error('expected a failure');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).details.field).toBe('body.tx');
      expect((err as Error).message).toMatch(message);
    }
  });

  it('rejects an EF tx whose outputs exceed its inputs', () => {
    const parsed = parseTx(GOLDEN_EF_HEX);
    const outputs = parsed.outputs.map((o, i) =>
      serializeOutput(i === 0 ? { lockingScript: o.lockingScript, satoshis: 2_000_000_000_000_000 } : o),
    );
    const ef = assembleTx({
      version: 1,
      locktime: 0,
      inputs: parsed.inputs.map((i) => serializeInput(i, true)),
      outputs,
      extended: true,
    });
    expect(() => parseTx(ef)).toThrow(/exceed inputs/);
  });
});

describe('compactSize', () => {
  it.each([
    [0, '00'],
    [0xfc, 'fc'],
    [0xfd, 'fdfd00'],
    [0xffff, 'fdffff'],
    [0x10000, 'fe00000100'],
    [0x100000000, 'ff0000000001000000'],
  ])('%d -> %s', (n, hex) => expect(compactSize(n).toString('hex')).toBe(hex));

  it('rejects negatives', () => expect(() => compactSize(-1)).toThrow(RangeError));

  it('encodes a bigint like the number of the same value, and the 9-byte form above 2^53', () => {
    expect(compactSize(0xfdn).toString('hex')).toBe('fdfd00');
    expect(compactSize(0xffffffffffffffffn).toString('hex')).toBe('ffffffffffffffffff');
    expect(() => compactSize(0x10000000000000000n)).toThrow(RangeError);
  });
});

describe('utxoHash', () => {
  // the definition of docs/records.md, written out with one hash update per part
  const reference = (txid: Buffer, vout: number, script: Buffer, satoshis: number | bigint): Buffer =>
    createHash('sha256').update(txid).update(compactSize(vout)).update(script).update(compactSize(satoshis)).digest();

  it('is SHA-256 of txid || CompactSize(vout) || script || CompactSize(satoshis) for every size class', () => {
    const sizes = fc.oneof(
      fc.integer({ min: 0, max: 0xfc }),
      fc.integer({ min: 0xfd, max: 0xffff }),
      fc.integer({ min: 0x10000, max: 0xffffffff }),
      fc.integer({ min: 0x100000000, max: Number.MAX_SAFE_INTEGER }),
    );
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.uint8Array({ maxLength: 300 }),
        fc.oneof(sizes, fc.bigInt({ min: 0n, max: 0xffffffffffffffffn })),
        (txid, vout, script, satoshis) => {
          const args = [Buffer.from(txid), vout, Buffer.from(script), satoshis] as const;
          expect(utxoHash(...args).equals(reference(...args))).toBe(true);
        },
      ),
    );
  });
});
