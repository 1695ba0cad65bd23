import { CANDIDATE_BINS, PAGE_BINS, collectChildren, isMaster, masterDecision } from '../../lib/cleanup/candidates';
import { childVerdict, isDeletedChild, parentVerdict, type ChildVerdict } from '../../lib/cleanup/child-safety';
import {
  isNullOutpoint,
  keyOfRecord,
  outpointsOfInputsBin,
  outpointsOfTx,
  slotState,
  spendingChildOf,
  txidBytes,
  txidHex,
} from '../../lib/cleanup/record-facts';
import { Transaction } from '@bsv/sdk';
import type { Bins } from '../../lib/engine/port';
import { GOLDEN_EF_HEX, GOLDEN_PARENT_TXID } from '../fixtures/golden-tx';

const hash = Buffer.alloc(32, 1);
const childId = Buffer.alloc(32, 2);
const vin = Buffer.from([3, 0, 0, 0]);
const spent = Buffer.concat([hash, childId, vin]);
const frozen = Buffer.concat([hash, Buffer.alloc(36, 0xff)]);

describe('record facts', () => {
  test('txid display hex is the reversed internal order, both ways', () => {
    const id = Buffer.from([...Array(32).keys()]);
    expect(txidHex(id)).toBe(Buffer.from(id).reverse().toString('hex'));
    expect(txidBytes(txidHex(id))).toEqual(id);
  });

  test('record keys: master is the txid, record n appends uint32 LE n', () => {
    expect(keyOfRecord(childId, 0)).toEqual(childId);
    expect(keyOfRecord(childId, 258)).toEqual(Buffer.concat([childId, Buffer.from([2, 1, 0, 0])]));
  });

  test('slot states', () => {
    expect(slotState(null)).toBe('none');
    expect(slotState(hash)).toBe('unspent');
    expect(slotState(spent)).toBe('spent');
    expect(slotState(frozen)).toBe('frozen');
    expect(slotState(Buffer.alloc(40))).toBe('invalid');
    expect(slotState('x')).toBe('invalid');
  });

  test('spending child of a spent slot', () => {
    expect(spendingChildOf(spent)).toEqual({ txid: childId, txidHex: txidHex(childId), vin: 3 });
  });

  test('outpoints of the golden EF tx (EF and plain serializations) match @bsv/sdk; garbage -> null', () => {
    const tx = Transaction.fromHexEF(GOLDEN_EF_HEX);
    const expected = [{ txid: txidBytes(GOLDEN_PARENT_TXID), vout: tx.inputs[0].sourceOutputIndex }];
    expect(outpointsOfTx(Buffer.from(GOLDEN_EF_HEX, 'hex'))).toEqual(expected);
    expect(outpointsOfTx(Buffer.from(tx.toHex(), 'hex'))).toEqual(expected);
    expect(outpointsOfTx(Buffer.from('0100000001', 'hex'))).toBeNull();
  });

  test('inputs bin: one serialized input per element; anything else -> null', () => {
    const input = Buffer.concat([
      childId,
      Buffer.from([1, 0, 0, 0]),
      Buffer.from([1, 0x51]),
      Buffer.alloc(4, 0xff),
      Buffer.alloc(8, 1),
      Buffer.from([1, 0x51]),
    ]);
    const expected = [
      { txid: childId, vout: 1 },
      { txid: childId, vout: 1 },
    ];
    expect(outpointsOfInputsBin([input, input])).toEqual(expected);
    expect(outpointsOfInputsBin([])).toEqual([]);
    expect(outpointsOfInputsBin(Buffer.concat([input, input]))).toBeNull();
    expect(outpointsOfInputsBin([Buffer.from([5, 1, 2])])).toBeNull();
  });

  test('null outpoint (coinbase)', () => {
    expect(isNullOutpoint({ txid: Buffer.alloc(32), vout: 0xffffffff })).toBe(true);
    expect(isNullOutpoint({ txid: Buffer.alloc(32), vout: 0 })).toBe(false);
  });
});

describe('child safety rule', () => {
  test('safe only when read, mined, with heights, and buried under the window', () => {
    expect(childVerdict({ blockHeights: [1001] }, 1289, 288)).toEqual({ safe: true });
    expect(childVerdict({ blockHeights: [1001] }, 1288, 288)).toEqual({ safe: false, reason: 'child_unstable' });
    // several blocks (a fork): the highest counts
    expect(childVerdict({ blockHeights: [900, 1001] }, 1288, 288)).toMatchObject({ reason: 'child_unstable' });
    expect(childVerdict({ blockHeights: [1001], unminedSince: 5 }, 9999, 288)).toMatchObject({
      reason: 'child_unmined',
    });
    expect(childVerdict({ blockHeights: [] }, 9999, 288)).toMatchObject({ reason: 'child_unmined' });
    expect(childVerdict({}, 9999, 288)).toMatchObject({ reason: 'child_unmined' });
    expect(childVerdict({ blockHeights: ['x'] }, 9999, 288)).toMatchObject({ reason: 'child_unmined' });
    expect(childVerdict(null, 9999, 288)).toMatchObject({ reason: 'child_missing' });
    expect(childVerdict(new Error('timeout'), 9999, 288)).toMatchObject({ reason: 'child_read_error' });
    expect(childVerdict(undefined, 9999, 288)).toMatchObject({ reason: 'child_read_error' });
  });

  test('deletedChildren vouches for a child; an unread child is unsafe', () => {
    const parent = { deletedChildren: { aa: true } };
    expect(isDeletedChild(parent, 'aa')).toBe(true);
    expect(isDeletedChild(parent, 'bb')).toBe(false);
    expect(isDeletedChild({}, 'aa')).toBe(false);
    const verdicts = new Map<string, ChildVerdict>([
      ['aa', { safe: false, reason: 'child_missing' }],
      ['bb', { safe: true }],
    ]);
    const aa = { txidHex: 'aa', vouched: true };
    const bb = { txidHex: 'bb', vouched: false };
    const cc = { txidHex: 'cc', vouched: false };
    expect(parentVerdict([aa, bb], verdicts)).toBeNull();
    expect(parentVerdict([aa, bb, cc], verdicts)).toBe('child_read_error');
    // vouched but still in the store and unmined: unsafe
    const present = new Map<string, ChildVerdict>([['aa', { safe: false, reason: 'child_unmined' }]]);
    expect(parentVerdict([aa], present)).toBe('child_unmined');
    expect(parentVerdict([{ txidHex: 'aa', vouched: false }], verdicts)).toBe('child_missing');
    expect(
      parentVerdict(
        [bb, { txidHex: 'dd', vouched: false }],
        new Map<string, ChildVerdict>([
          ['bb', { safe: true }],
          ['dd', { safe: false, reason: 'child_unstable' }],
        ]),
      ),
    ).toBe('child_unstable');
  });
});

describe('candidate state', () => {
  const mined = { totalExtraRecs: 0, blockIDs: [1], utxos: [spent] };
  test('masters only', () => {
    expect(isMaster({ key: childId, bins: mined, generation: 1, ttl: -1 })).toBe(true);
    expect(isMaster({ key: keyOfRecord(childId, 1), bins: { utxos: [] }, generation: 1, ttl: -1 })).toBe(false);
  });

  test('decisions', () => {
    expect(masterDecision(mined)).toBe('check');
    expect(masterDecision({ ...mined, deleting: true })).toBe('finish');
    expect(masterDecision({ ...mined, preserveUntil: 9 })).toBe('preserved');
    expect(masterDecision({ ...mined, creating: true })).toBe('creating');
    expect(masterDecision({ ...mined, locked: true })).toBe('locked');
    expect(masterDecision({ ...mined, blockIDs: [] })).toBe('not_mined');
    expect(masterDecision({ ...mined, unminedSince: 3 })).toBe('not_mined');
    expect(masterDecision({ ...mined, reassignments: [{}] })).toBe('not_all_spent');
    expect(masterDecision({ ...mined, totalExtraRecs: -1 })).toBe('invalid_record');
    expect(masterDecision({ ...mined, blockIDs: [], conflicting: true })).toBe('check');
  });

  test('children of every record; unspent or frozen slots keep a non-conflicting tx', () => {
    const other = Buffer.concat([hash, Buffer.alloc(32, 9), vin]);
    const r = collectChildren([{ utxos: [spent, null, spent] }, { utxos: [other] }], false);
    expect(r.ok && r.children.map((c) => [c.txidHex, c.vouched])).toEqual([
      [txidHex(childId), false],
      [txidHex(Buffer.alloc(32, 9)), false],
    ]);
    // vouched only when every record holding one of its outputs lists it
    const listed = { deletedChildren: { [txidHex(childId)]: true } };
    const one = collectChildren([{ utxos: [spent], ...listed }, { utxos: [spent] }], false);
    expect(one.ok && one.children[0].vouched).toBe(false);
    const both = collectChildren(
      [
        { utxos: [spent], ...listed },
        { utxos: [spent], ...listed },
      ],
      false,
    );
    expect(both.ok && both.children[0].vouched).toBe(true);
    expect(collectChildren([{ utxos: [spent, hash] }], false)).toEqual({ ok: false, reason: 'not_all_spent' });
    expect(collectChildren([{ utxos: [frozen] }], false)).toEqual({ ok: false, reason: 'not_all_spent' });
    expect(collectChildren([{ utxos: [hash] }], true)).toEqual({ ok: true, children: [] });
    expect(collectChildren([{ utxos: [spent] }, null], false)).toEqual({ ok: false, reason: 'record_missing' });
    expect(collectChildren([{}], false)).toEqual({ ok: false, reason: 'invalid_record' });
    expect(collectChildren([{ utxos: [Buffer.alloc(3)] }], false)).toEqual({ ok: false, reason: 'invalid_record' });
  });

  test('the DAH query and the pagination reads ask for every bin the decisions read', () => {
    // a master with every bin the decisions look at set to something that lets them go on reading
    const read = new Set<string>();
    const watched = (bins: Bins): Bins =>
      new Proxy(bins, {
        get: (target, name) => {
          if (typeof name === 'string') read.add(name);
          return target[name as string];
        },
      });
    masterDecision(watched({ ...mined }));
    masterDecision(watched({ ...mined, conflicting: true }));
    collectChildren([watched({ utxos: [spent], deletedChildren: { [txidHex(childId)]: true } })], false);
    expect([...read].filter((bin) => !CANDIDATE_BINS.includes(bin))).toEqual([]);
    read.clear();
    collectChildren([watched({ utxos: [spent], deletedChildren: {} })], false);
    expect([...read].filter((bin) => !PAGE_BINS.includes(bin))).toEqual([]);
  });
});
