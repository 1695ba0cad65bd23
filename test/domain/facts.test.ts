import fc from 'fast-check';
import { InvalidArgumentError } from '../../lib/domain/errors';
import { decodeHex, hexToBuffer } from '../../lib/domain/hex';
import {
  lockKey,
  lockTtlSeconds,
  locateOutput,
  masterKey,
  paginationKey,
  parseRecordKey,
  recordCount,
  recordKey,
} from '../../lib/domain/keys';
import { decodeOutputsBlob, encodeOutputsBlob } from '../../lib/domain/outputs-blob';
import { decodeSlot, frozenSlot, isStoredOutput, spentSlot, unspentSlot } from '../../lib/domain/slots';
import {
  decodeSpendingData,
  encodeSpendingData,
  FROZEN_SPENDING_DATA,
  isFrozenMarker,
  spendingDataFromText,
  spendingDataToText,
} from '../../lib/domain/spending-data';
import { txidToBytes, txidToHex } from '../../lib/domain/txid';
import { hashFromHex, hashToHex } from '../../lib/domain/utxo-hash';

const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((a) => Buffer.from(a));

describe('txid byte order', () => {
  it('display hex is the reversed internal order', () => {
    const internal = Buffer.from('00'.repeat(31) + 'ff', 'hex');
    expect(txidToHex(internal)).toBe('ff' + '00'.repeat(31));
    expect(txidToBytes('ff' + '00'.repeat(31)).equals(internal)).toBe(true);
  });

  it('round-trips', () => {
    fc.assert(fc.property(bytes32, (b) => txidToBytes(txidToHex(b)).equals(b) && hashFromHex(hashToHex(b)).equals(b)));
  });

  it.each([
    ['short', 'ab'],
    ['non-hex', 'g'.repeat(64)],
    ['65 chars', 'a'.repeat(65)],
    ['not a string', 42],
  ])('rejects %s, naming the field', (_n, value) => {
    expect(() => txidToBytes(value, 'spends[0].txid')).toThrow(InvalidArgumentError);
    expect(() => txidToBytes(value, 'spends[0].txid')).toThrow(/^spends\[0\]\.txid: /);
    expect(() => hashFromHex(value, 'utxoHash')).toThrow(/^utxoHash: /);
  });

  it('hex helpers', () => {
    expect(() => hexToBuffer('0f0', 'f')).toThrow(/f: expected hex characters/);
    expect(() => hexToBuffer('00ff', 'f', 3)).toThrow(/f: expected 6 hex characters, got 4/);
    expect(hexToBuffer('0a0b', 'f').equals(Buffer.from([10, 11]))).toBe(true);
    expect(() => hexToBuffer(1, 'f')).toThrow(/f: expected a hex string/);
    expect(() => hexToBuffer('0a0g', 'f')).toThrow(/f: expected hex characters/);
  });

  it('decodes exactly the hex digits in pairs, in one pass (the write stops at the first pair that is not hex)', () => {
    const hexish = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEFg \u0100-x'.split('')), maxLength: 40 });
    fc.assert(
      fc.property(
        fc.oneof(
          hexish,
          fc.string({ maxLength: 40 }),
          fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b).toString('hex')),
        ),
        (text) => {
          const decoded = decodeHex(text);
          if (/^(?:[0-9a-fA-F]{2})*$/.test(text)) expect(decoded?.equals(Buffer.from(text, 'hex'))).toBe(true);
          else expect(decoded).toBeUndefined();
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('spending data', () => {
  it('is txid (internal) || vin LE, text = display txid || index bytes as stored', () => {
    const txid = Buffer.from('11'.repeat(31) + '22', 'hex');
    const sd = encodeSpendingData(txid, 1);
    expect(sd.toString('hex')).toBe('11'.repeat(31) + '22' + '01000000');
    expect(spendingDataToText(sd)).toBe('22' + '11'.repeat(31) + '01000000');
    expect(spendingDataFromText(spendingDataToText(sd)).equals(sd)).toBe(true);
    expect(decodeSpendingData(sd)).toEqual({ txid, vin: 1 });
  });

  it('round-trips any txid and vin', () => {
    fc.assert(
      fc.property(bytes32, fc.integer({ min: 0, max: 0xffffffff }), (t, vin) => {
        const sd = encodeSpendingData(t, vin);
        return decodeSpendingData(sd).vin === vin && spendingDataFromText(spendingDataToText(sd)).equals(sd);
      }),
    );
  });

  it('frozen marker is 36 x 0xff', () => {
    expect(FROZEN_SPENDING_DATA.toString('hex')).toBe('ff'.repeat(36));
    expect(isFrozenMarker(FROZEN_SPENDING_DATA)).toBe(true);
    expect(isFrozenMarker(encodeSpendingData(Buffer.alloc(32), 0))).toBe(false);
  });

  it('rejects bad lengths', () => {
    expect(() => encodeSpendingData(Buffer.alloc(31), 0)).toThrow(RangeError);
    expect(() => spendingDataToText(Buffer.alloc(35))).toThrow(RangeError);
    expect(() => decodeSpendingData(Buffer.alloc(37))).toThrow(RangeError);
    expect(() => spendingDataFromText('00', 'sd')).toThrow(/sd: expected 72 hex/);
  });
});

describe('slots', () => {
  const hash = Buffer.alloc(32, 7);
  it('decodes unspent, spent, frozen and none', () => {
    expect(decodeSlot(unspentSlot(hash))).toEqual({ state: 'unspent', utxoHash: hash });
    const sd = encodeSpendingData(Buffer.alloc(32, 1), 3);
    const spent = decodeSlot(spentSlot(hash, sd));
    expect(spent.state).toBe('spent');
    expect(spent.state === 'spent' && spent.spendingData.equals(sd)).toBe(true);
    expect(decodeSlot(frozenSlot(hash)).state).toBe('frozen');
    expect(decodeSlot(null).state).toBe('none');
    expect(decodeSlot(Buffer.alloc(33)).state).toBe('none');
  });

  it.each([
    [0, '6a', false],
    [0, '006a01', false],
    [0, '6a0102', false],
    [1, '6a', true],
    [0, '51', true],
    [0, '', true],
    [0, '00', true],
  ])('isStoredOutput(%d, %s) = %s', (sat, script, stored) => {
    expect(isStoredOutput(sat, Buffer.from(script, 'hex'))).toBe(stored);
  });

  it('rejects a hash of the wrong size', () => expect(() => unspentSlot(Buffer.alloc(31))).toThrow(RangeError));
});

describe('record keys', () => {
  const txid = Buffer.alloc(32, 0xab);
  it('master, pagination n and lock keys', () => {
    expect(masterKey(txid).equals(txid)).toBe(true);
    expect(paginationKey(txid, 1).toString('hex')).toBe('ab'.repeat(32) + '01000000');
    expect(lockKey(txid).toString('hex')).toBe('ab'.repeat(32) + 'ffffffff');
    expect(recordKey(txid, 0).equals(masterKey(txid))).toBe(true);
    expect(recordKey(txid, 2).equals(paginationKey(txid, 2))).toBe(true);
    expect(() => paginationKey(txid, 0)).toThrow(RangeError);
    expect(() => masterKey(Buffer.alloc(31))).toThrow(RangeError);
  });

  it('parses keys back', () => {
    expect(parseRecordKey(masterKey(txid))).toEqual({ kind: 'master', txid, recordNumber: 0 });
    expect(parseRecordKey(paginationKey(txid, 5))).toEqual({ kind: 'pagination', txid, recordNumber: 5 });
    expect(parseRecordKey(lockKey(txid))).toEqual({ kind: 'lock', txid });
    expect(parseRecordKey(Buffer.alloc(33))).toBeNull();
  });

  it('locates every output in exactly one record for any B', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50000 }), fc.integer({ min: 1, max: 20000 }), (outputs, B) => {
        const count = recordCount(outputs, B);
        const last = locateOutput(outputs - 1, B);
        expect(last.recordNumber).toBe(count - 1);
        const v = Math.floor(outputs / 2);
        const { recordNumber, offset } = locateOutput(v, B);
        expect(recordNumber * B + offset).toBe(v);
        expect(offset).toBeLessThan(B);
      }),
    );
    expect(recordCount(0, 10)).toBe(1);
  });

  it('lock TTL is min(30 + 2 x records, 300)', () => {
    expect(lockTtlSeconds(2)).toBe(34);
    expect(lockTtlSeconds(1000)).toBe(300);
  });
});

describe('.outputs blob', () => {
  it('encodes the layout of docs/records.md and decodes it back', () => {
    const txid = Buffer.alloc(32, 1);
    const blob = {
      txid,
      height: 1000,
      isCoinbase: true,
      outputs: [
        { index: 0, satoshis: 5000000000, lockingScript: Buffer.from('51', 'hex') },
        { index: 2, satoshis: 1, lockingScript: Buffer.alloc(0) },
      ],
    };
    const data = encodeOutputsBlob(blob);
    expect(data.subarray(32, 40).toString('hex')).toBe('d107000002000000');
    expect(data.subarray(40, 56).toString('hex')).toBe('00000000' + '00f2052a01000000' + '01000000');
    expect(decodeOutputsBlob(data)).toEqual(blob);
  });

  it('rejects truncated or padded blobs', () => {
    const data = encodeOutputsBlob({
      txid: Buffer.alloc(32),
      height: 1,
      isCoinbase: false,
      outputs: [{ index: 0, satoshis: 1, lockingScript: Buffer.from('51', 'hex') }],
    });
    expect(() => decodeOutputsBlob(data.subarray(0, 20))).toThrow(/header/);
    expect(() => decodeOutputsBlob(data.subarray(0, data.length - 1))).toThrow(/truncated/);
    expect(() => decodeOutputsBlob(Buffer.concat([data, Buffer.alloc(1)]))).toThrow(/trailing/);
  });
});
