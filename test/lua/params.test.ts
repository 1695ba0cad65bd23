/**
 * Wrong argument types -> status ERROR, errorCode INVALID_PARAMETER, nothing written; no argument list makes the
 * module raise a Lua error (every call returns a map).
 */
import fc from 'fast-check';
import type { BinValue } from '../../lib/engine/port';
import { UDF_FUNCTIONS, encodeSpendItems } from '../../lib/domain/udf';
import { H, R, displayHex, hash32, item, sd, txid, useEngine } from './helpers';

const U0 = hash32('u0');
const SD = sd(hash32('child'), 0);
const SHORT = Buffer.alloc(31, 1);

/** A valid argument list per function, and for each position, wrong values. */
const CASES: Record<string, { valid: BinValue[]; wrong: [number, BinValue][] }> = {
  spend: {
    valid: [0, U0, SD, false, false, H, R],
    wrong: [
      [0, 'zero'],
      [0, -1],
      [0, 1.5],
      [1, SHORT],
      [1, 'hash'],
      [2, Buffer.alloc(35)],
      [2, 7],
      [3, 'no'],
      [4, Buffer.alloc(1)],
      [5, 'H'],
      [5, -1],
      [6, null],
      [6, -2],
    ],
  },
  spendMulti: {
    valid: [[item(0, U0, SD)], false, false, H, R],
    wrong: [
      [0, 'spends'],
      [0, { offset: 0 }],
      [0, [5]],
      [0, [item(0, SHORT, SD)]],
      [0, [item(0, U0, Buffer.alloc(37))]],
      [0, [{ offset: 'x', utxoHash: U0, spendingData: SD }]],
      [0, [{ utxoHash: U0, spendingData: SD }]],
      // the bytes form: not a whole number of 72-byte items, a negative offset, the frozen marker
      [0, Buffer.alloc(71)],
      [0, Buffer.concat([encodeSpendItems([{ offset: 0, utxoHash: U0, spendingData: SD }]), Buffer.alloc(1)])],
      [0, Buffer.concat([Buffer.alloc(4, 0xff), U0, SD])],
      [0, encodeSpendItems([{ offset: 0, utxoHash: U0, spendingData: Buffer.alloc(36, 0xff) }])],
      [1, null],
      [2, 'true'],
      [3, true],
      [4, 'R'],
    ],
  },
  unspend: {
    valid: [0, U0, SD, H, R],
    wrong: [
      [0, null],
      [1, SD],
      [2, U0],
      [3, 'H'],
      [4, [1]],
    ],
  },
  setMined: {
    valid: [5, H, 0, H, R, true, false],
    wrong: [
      [0, 'block'],
      [1, -1],
      [1, 'h'],
      [2, null],
      [3, 1.25],
      [4, -1],
      [5, 'yes'],
      [5, null],
      [6, 2],
    ],
  },
  freeze: {
    valid: [0, U0, H, R],
    wrong: [
      [0, -3],
      [1, null],
      [2, 'H'],
      [3, false],
    ],
  },
  unfreeze: {
    valid: [0, U0, H, R],
    wrong: [
      [0, U0],
      [1, 'u0'],
      [2, null],
      [3, -1],
    ],
  },
  reassign: {
    valid: [0, U0, hash32('new'), H, 1000, H, R],
    wrong: [
      [0, 'o'],
      [1, SHORT],
      [2, SHORT],
      [3, 'bh'],
      [4, -1],
      [5, null],
      [6, 'R'],
    ],
  },
  setConflicting: {
    valid: [true, H, R],
    wrong: [
      [0, 'true'],
      [0, null],
      [1, 'H'],
      [2, null],
    ],
  },
  setLocked: {
    valid: [true, H, R],
    wrong: [
      [0, 3],
      [1, -1],
      [2, 'R'],
    ],
  },
  preserveUntil: {
    valid: [H + 10, H, R],
    wrong: [
      [0, 'later'],
      [0, -1],
      [1, null],
      [2, [R]],
    ],
  },
  expirePreserve: {
    valid: [H, R],
    wrong: [
      [0, 'H'],
      [1, -1],
    ],
  },
  incrementSpentExtraRecs: {
    valid: [1, H, R],
    wrong: [
      [0, 'one'],
      [0, 0.5],
      [1, null],
      [2, 'R'],
    ],
  },
  setSpentExtraRecs: {
    valid: [0, H, R],
    wrong: [
      [0, null],
      [1, 'H'],
      [2, -5],
    ],
  },
  clearCreating: {
    valid: [H, R],
    wrong: [
      [0, null],
      [1, 'R'],
    ],
  },
  addConflictingChild: {
    valid: [hash32('c')],
    wrong: [
      [0, 'c'],
      [0, SHORT],
      [0, null],
    ],
  },
  setDeletedChild: {
    valid: [displayHex(hash32('c'))],
    wrong: [
      [0, hash32('c')],
      [0, 'abc'],
      [0, 'z'.repeat(64)],
      [0, null],
    ],
  },
  markDeleting: {
    valid: [1],
    wrong: [
      [0, -1],
      [0, 1.5],
      [0, '1'],
      [0, null],
    ],
  },
  rerunDah: {
    valid: [H, R],
    wrong: [
      [0, true],
      [1, 'R'],
    ],
  },
  setLongestChain: {
    valid: [true, H, R],
    wrong: [
      [0, 'yes'],
      [0, null],
      [1, -1],
      [2, 'R'],
    ],
  },
  replaceSpend: {
    valid: [0, U0, SD, sd(hash32('loser'), 0), H, R],
    wrong: [
      [0, -1],
      [1, SHORT],
      [2, U0],
      [2, Buffer.alloc(36, 0xff)],
      [3, null],
      [4, 'H'],
      [5, -1],
    ],
  },
};

describe('argument checks', () => {
  const h = useEngine();

  test('a case for every function of lib/domain/udf.ts', () => {
    expect(Object.keys(CASES).sort()).toEqual([...UDF_FUNCTIONS].sort());
  });

  test.each(Object.entries(CASES))('%s: valid arguments are accepted', async (fn, { valid }) => {
    const key = await h().put({ totalExtraRecs: 1, spentExtraRecs: 0 });
    const res = await h().call(key, fn, ...valid);
    expect(res.errorCode).not.toBe('INVALID_PARAMETER');
  });

  test.each(Object.entries(CASES))('%s: each wrong argument -> INVALID_PARAMETER, nothing written', async (fn, c) => {
    const key = await h().put({ totalExtraRecs: 1, spentExtraRecs: 0 });
    const before = await h().bins(key);
    const gen = await h().generation(key);
    for (const [position, value] of c.wrong) {
      const args = [...c.valid];
      args[position] = value;
      const res = await h().call(key, fn, ...args);
      expect({ fn, position, value, res }).toMatchObject({
        res: { status: 'ERROR', errorCode: 'INVALID_PARAMETER', message: expect.any(String) },
      });
    }
    expect(await h().bins(key)).toEqual(before);
    expect(await h().generation(key)).toBe(gen);
  });

  test('INVALID_PARAMETER is checked before the record: a missing record with bad arguments', async () => {
    await expect(h().call(txid(), 'freeze', 'x', U0, H, R)).resolves.toMatchObject({
      errorCode: 'INVALID_PARAMETER',
    });
  });

  test('fewer arguments than expected -> INVALID_PARAMETER', async () => {
    const key = await h().put();
    for (const fn of UDF_FUNCTIONS) {
      await expect(h().call(key, fn)).resolves.toMatchObject({ status: 'ERROR', errorCode: 'INVALID_PARAMETER' });
    }
  });

  test('no argument list raises a Lua error (property)', async () => {
    const key = await h().put({ totalExtraRecs: 1 });
    const value: fc.Arbitrary<BinValue> = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer({ min: -5, max: 5 }),
      fc.constantFrom(0, 1, 2, H, R, -1, 2 ** 40),
      fc.string({ maxLength: 70 }),
      fc.uint8Array({ maxLength: 70 }).map((a) => Buffer.from(a)),
      fc.uint8Array({ minLength: 72, maxLength: 216 }).map((a) => Buffer.from(a)),
      fc.constantFrom<BinValue>(U0, SD, Buffer.alloc(36, 0xff), [], [item(0, U0, SD)], { offset: 0 }, {}),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...UDF_FUNCTIONS), fc.array(value, { maxLength: 9 }), async (fn, args) => {
        const res = await h().call(key, fn, ...args);
        expect(['OK', 'ERROR']).toContain(res.status);
        if (res.status === 'ERROR' && res.errors === undefined) expect(typeof res.errorCode).toBe('string');
      }),
      { numRuns: 300 },
    );
  });
});
