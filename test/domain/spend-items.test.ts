/**
 * spendMulti's bytes form (lib/domain/udf.ts encodeSpendItems, docs/udf.md): 72-byte items, offset uint32 LE first.
 */
import { SPEND_ITEM_BYTES, encodeSpendItems } from '../../lib/domain/udf';

const hash = Buffer.alloc(32, 0xaa);
const data = Buffer.alloc(36, 0x11);

test('items back to back: offset (uint32 LE), utxoHash, spendingData', () => {
  const out = encodeSpendItems([
    { offset: 3, utxoHash: hash, spendingData: data },
    { offset: 0x01020304, utxoHash: data.subarray(0, 32), spendingData: Buffer.alloc(36, 0x22) },
  ]);
  expect(out.length).toBe(2 * SPEND_ITEM_BYTES);
  expect(out.subarray(0, 4)).toEqual(Buffer.from([3, 0, 0, 0]));
  expect(out.subarray(4, 36)).toEqual(hash);
  expect(out.subarray(36, 72)).toEqual(data);
  expect(out.subarray(72, 76)).toEqual(Buffer.from([4, 3, 2, 1]));
  expect(out.subarray(108, 144)).toEqual(Buffer.alloc(36, 0x22));
  expect(encodeSpendItems([])).toEqual(Buffer.alloc(0));
});

test('a hash or spending data of the wrong size is refused, naming the item', () => {
  expect(() => encodeSpendItems([{ offset: 0, utxoHash: hash, spendingData: data.subarray(1) }])).toThrow(
    'spend item 0: utxoHash must be 32 bytes and spendingData 36',
  );
  expect(() =>
    encodeSpendItems([
      { offset: 0, utxoHash: hash, spendingData: data },
      { offset: 1, utxoHash: hash.subarray(2), spendingData: data },
    ]),
  ).toThrow('spend item 1');
});
