/**
 * spendMulti and spend (docs/udf.md): record checks in order, per-item errors, partial application,
 * idempotence, counters.
 */
import { encodeSpendItems } from '../../lib/domain/udf';
import {
  FROZEN,
  H,
  R,
  displayHex,
  frozenSlot,
  hash32,
  item,
  sd,
  spendArgs,
  spentSlot,
  txid,
  useEngine,
  type RecordOptions,
} from './helpers';

describe('spendMulti', () => {
  const h = useEngine();
  const u = [hash32('u0'), hash32('u1'), hash32('u2')];
  const child = txid();

  test("spends as bytes (the store's form): each 72-byte item taken in order; a bad item is named by its position", async () => {
    const key = await h().put();
    const spends = encodeSpendItems([
      { offset: 2, utxoHash: u[2], spendingData: sd(child, 0) },
      { offset: 0, utxoHash: u[0], spendingData: sd(child, 1) },
    ]);
    await expect(h().call(key, 'spendMulti', spends, false, false, H, R)).resolves.toEqual({
      status: 'OK',
      blockIDs: [1],
    });
    expect((await h().bins(key)).utxos).toEqual([spentSlot(u[0], sd(child, 1)), u[1], spentSlot(u[2], sd(child, 0))]);
    const frozen = encodeSpendItems([
      { offset: 1, utxoHash: u[1], spendingData: sd(child, 2) },
      { offset: 1, utxoHash: u[1], spendingData: FROZEN },
    ]);
    await expect(h().call(key, 'spendMulti', frozen, false, false, H, R)).resolves.toMatchObject({
      errorCode: 'INVALID_PARAMETER',
      message: 'spends[1].spendingData is the frozen marker',
    });
    await expect(h().call(key, 'spendMulti', spends.subarray(1), false, false, H, R)).resolves.toMatchObject({
      errorCode: 'INVALID_PARAMETER',
      message: 'spends must be a multiple of 72 bytes',
    });
    expect((await h().bins(key)).utxos).toEqual([spentSlot(u[0], sd(child, 1)), u[1], spentSlot(u[2], sd(child, 0))]);
  });

  test('success: writes the 68-byte slots, counts them, returns OK with blockIDs', async () => {
    const key = await h().put();
    const res = await h().call(
      key,
      'spendMulti',
      ...spendArgs([item(0, u[0], sd(child, 0)), item(2, u[2], sd(child, 1))]),
    );
    expect(res).toEqual({ status: 'OK', blockIDs: [1] });
    const bins = await h().bins(key);
    expect(bins.utxos).toEqual([spentSlot(u[0], sd(child, 0)), u[1], spentSlot(u[2], sd(child, 1))]);
    expect(bins.spentUtxos).toBe(2);
    expect(bins.deleteAtHeight).toBeUndefined();
  });

  test('spending the last slot of a mined master sets DAH = height + R (no signal: not external)', async () => {
    const key = await h().put();
    const res = await h().call(key, 'spendMulti', ...spendArgs([0, 1, 2].map((i) => item(i, u[i], sd(child, i)))));
    expect(res.status).toBe('OK');
    expect(res.signal).toBeUndefined();
    const bins = await h().bins(key);
    expect(bins.spentUtxos).toBe(3);
    expect(bins.deleteAtHeight).toBe(H + R);
  });

  test('external master: DAHSET with childCount = totalExtraRecs', async () => {
    const key = await h().put({ external: true, totalExtraRecs: 2, spentExtraRecs: 2 });
    const res = await h().call(key, 'spendMulti', ...spendArgs([0, 1, 2].map((i) => item(i, u[i], sd(child, i)))));
    expect(res).toMatchObject({ status: 'OK', signal: 'DAHSET', childCount: 2 });
  });

  test('spend: the one-item form, item errors also at the top level', async () => {
    const key = await h().put();
    await expect(h().call(key, 'spend', 1, u[1], sd(child, 3), false, false, H, R)).resolves.toMatchObject({
      status: 'OK',
    });
    expect((await h().bins(key)).utxos).toEqual([u[0], spentSlot(u[1], sd(child, 3)), u[2]]);
    const other = txid();
    const res = await h().call(key, 'spend', 1, u[1], sd(other, 0), false, false, H, R);
    expect(res).toMatchObject({
      status: 'ERROR',
      errorCode: 'SPENT',
      errors: { '0': { errorCode: 'SPENT', spendingData: sd(child, 3) } },
    });
    await expect(h().call(txid(), 'spend', 1, u[1], sd(child, 3), false, false, H, R)).resolves.toMatchObject({
      status: 'ERROR',
      errorCode: 'TX_NOT_FOUND',
    });
  });

  describe('record checks, in order, write nothing', () => {
    const spends = () => [item(0, u[0], sd(child, 0))];

    test('TX_NOT_FOUND', async () => {
      await expect(h().call(txid(), 'spendMulti', ...spendArgs(spends()))).resolves.toMatchObject({
        status: 'ERROR',
        errorCode: 'TX_NOT_FOUND',
      });
    });

    // each row carries every later condition too, so the first one must win
    const rows: [string, RecordOptions][] = [
      ['CREATING', { creating: true, deleting: true, conflicting: true, locked: true, spendingHeight: H + 1 }],
      ['DELETING', { deleting: true, conflicting: true, locked: true, spendingHeight: H + 1 }],
      ['CONFLICTING', { conflicting: true, locked: true, spendingHeight: H + 1 }],
      ['LOCKED', { locked: true, spendingHeight: H + 1 }],
      ['COINBASE_IMMATURE', { isCoinbase: true, spendingHeight: H + 1 }],
    ];
    test.each(rows)('%s', async (code, options) => {
      const key = await h().put(options);
      const before = await h().bins(key);
      const gen = await h().generation(key);
      const res = await h().call(key, 'spendMulti', ...spendArgs(spends()));
      expect(res).toMatchObject({ status: 'ERROR', errorCode: code });
      expect(typeof res.message).toBe('string');
      expect(res.errors).toBeUndefined();
      expect(await h().bins(key)).toEqual(before);
      expect(await h().generation(key)).toBe(gen);
    });

    test('ignoreConflicting / ignoreLocked skip those checks; a mature coinbase spends', async () => {
      const c = await h().put({ conflicting: true });
      await expect(h().call(c, 'spendMulti', ...spendArgs(spends(), { ic: true }))).resolves.toMatchObject({
        status: 'OK',
      });
      const l = await h().put({ locked: true });
      await expect(h().call(l, 'spendMulti', ...spendArgs(spends(), { il: true }))).resolves.toMatchObject({
        status: 'OK',
      });
      const cb = await h().put({ isCoinbase: true, spendingHeight: H });
      await expect(h().call(cb, 'spendMulti', ...spendArgs(spends()))).resolves.toMatchObject({ status: 'OK' });
    });

    test('UTXOS_NOT_FOUND: a record without a utxos list', async () => {
      const key = await h().put({ extra: { utxos: null } });
      await expect(h().call(key, 'spendMulti', ...spendArgs(spends()))).resolves.toMatchObject({
        status: 'ERROR',
        errorCode: 'UTXOS_NOT_FOUND',
      });
    });
  });

  describe('per-item errors (keyed by 0-based position), successful items applied', () => {
    test('every item error in one call', async () => {
      const earlier = txid();
      const deleted = txid();
      const key = await h().put({
        utxos: [
          u[0], // 0: spent by this call
          null, // 1: UTXO_NOT_FOUND
          hash32('u2'), // 2: hash mismatch (wrong hash given)
          hash32('u3'), // 3: FROZEN_UNTIL
          spentSlot(hash32('u4'), sd(earlier, 4)), // 4: idempotent same spender
          spentSlot(hash32('u5'), sd(deleted, 5)), // 5: INVALID_SPEND (deleted child)
          frozenSlot(hash32('u6')), // 6: FROZEN
          spentSlot(hash32('u7'), sd(earlier, 7)), // 7: SPENT by another
          hash32('u8'), // 8: spent by this call
        ],
        extra: {
          utxoSpendableIn: { '3': H + 1 },
          deletedChildren: { [displayHex(deleted)]: true },
        },
      });
      const before = await h().bins(key);
      const res = await h().call(
        key,
        'spendMulti',
        ...spendArgs([
          item(0, u[0], sd(child, 0)),
          item(1, hash32('u1'), sd(child, 1)),
          item(2, hash32('wrong'), sd(child, 2)),
          item(3, hash32('u3'), sd(child, 3)),
          item(4, hash32('u4'), sd(earlier, 4)),
          item(5, hash32('u5'), sd(deleted, 5)),
          item(6, hash32('u6'), sd(child, 6)),
          item(7, hash32('u7'), sd(child, 7)),
          item(8, hash32('u8'), sd(child, 8)),
          item(99, hash32('u9'), sd(child, 9)),
        ]),
      );
      expect(res.status).toBe('ERROR');
      expect(res.errorCode).toBeUndefined();
      const errors = res.errors as Record<string, Record<string, unknown>>;
      expect(Object.keys(errors).sort()).toEqual(['1', '2', '3', '5', '6', '7', '9']);
      expect(errors['1']).toMatchObject({ errorCode: 'UTXO_NOT_FOUND' });
      expect(errors['2']).toMatchObject({ errorCode: 'UTXO_HASH_MISMATCH' });
      expect(errors['3']).toMatchObject({ errorCode: 'FROZEN_UNTIL' });
      expect(errors['3'].message).toContain(String(H + 1));
      expect(errors['5']).toEqual({
        errorCode: 'INVALID_SPEND',
        message: expect.any(String),
        spendingData: sd(deleted, 5),
      });
      expect(errors['6']).toEqual({ errorCode: 'FROZEN', message: expect.any(String) });
      expect(errors['7']).toEqual({
        errorCode: 'SPENT',
        message: expect.stringContaining(displayHex(earlier)),
        spendingData: sd(earlier, 7),
      });
      expect(errors['9']).toMatchObject({ errorCode: 'UTXO_NOT_FOUND' });
      // item 4 succeeded without a write: a rollback of this call must not unspend it
      expect(res.unchanged).toEqual([4]);

      const after = await h().bins(key);
      const slots = after.utxos as (Buffer | null)[];
      const was = before.utxos as (Buffer | null)[];
      expect(slots[0]).toEqual(spentSlot(u[0], sd(child, 0)));
      expect(slots[8]).toEqual(spentSlot(hash32('u8'), sd(child, 8)));
      for (const i of [1, 2, 3, 4, 5, 6, 7]) expect(slots[i]).toEqual(was[i]);
      expect(after.spentUtxos).toBe((before.spentUtxos as number) + 2);
    });

    test('FROZEN_UNTIL lifts at the height; utxoSpendableIn is read by offset', async () => {
      const key = await h().put({ extra: { utxoSpendableIn: { '1': H } } });
      // offset 0 has no entry: spendable
      await expect(
        h().call(key, 'spendMulti', ...spendArgs([item(0, u[0], sd(child, 0))], { h: H - 1 })),
      ).resolves.toMatchObject({ status: 'OK' });
      const early = await h().call(key, 'spendMulti', ...spendArgs([item(1, u[1], sd(child, 1))], { h: H - 1 }));
      expect((early.errors as Record<string, { errorCode: string }>)['0'].errorCode).toBe('FROZEN_UNTIL');
      await expect(
        h().call(key, 'spendMulti', ...spendArgs([item(1, u[1], sd(child, 1))], { h: H })),
      ).resolves.toMatchObject({ status: 'OK' });
    });

    test('the same spender again is success with the same bins, written (the answer rests on every copy)', async () => {
      const key = await h().put();
      const spends = [item(1, u[1], sd(child, 1))];
      await h().call(key, 'spendMulti', ...spendArgs(spends));
      const gen = await h().generation(key);
      const bins = await h().bins(key);
      await expect(h().call(key, 'spendMulti', ...spendArgs(spends))).resolves.toEqual({
        status: 'OK',
        blockIDs: [1],
        unchanged: [0],
      });
      expect(await h().bins(key)).toEqual(bins);
      // a write: on a cluster it goes through commit-all like the first spend (decision 0009)
      expect(await h().generation(key)).toBe(gen + 1);
      expect(bins.spentUtxos).toBe(1);
    });

    test('the same offset twice in one call: the second spender gets SPENT by the first', async () => {
      const key = await h().put();
      const other = txid();
      const res = await h().call(
        key,
        'spendMulti',
        ...spendArgs([item(0, u[0], sd(child, 0)), item(0, u[0], sd(other, 0))]),
      );
      expect(res.errors).toEqual({
        '1': { errorCode: 'SPENT', message: expect.any(String), spendingData: sd(child, 0) },
      });
      expect((await h().bins(key)).spentUtxos).toBe(1);
    });

    test('all items failing: nothing written', async () => {
      const key = await h().put();
      const gen = await h().generation(key);
      const res = await h().call(key, 'spendMulti', ...spendArgs([item(0, hash32('x'), sd(child, 0))]));
      expect(res.status).toBe('ERROR');
      expect(await h().generation(key)).toBe(gen);
    });

    test('an empty spends list is OK and changes nothing', async () => {
      const key = await h().put();
      const before = await h().bins(key);
      await expect(h().call(key, 'spendMulti', ...spendArgs([]))).resolves.toMatchObject({ status: 'OK' });
      expect(await h().bins(key)).toEqual(before);
    });
  });

  test('the frozen marker is not valid spending data', async () => {
    const key = await h().put();
    await expect(h().call(key, 'spendMulti', ...spendArgs([item(0, u[0], FROZEN)]))).resolves.toMatchObject({
      status: 'ERROR',
      errorCode: 'INVALID_PARAMETER',
    });
    expect((await h().bins(key)).spentUtxos).toBe(0);
  });
});
