/**
 * unspend (docs/udf.md): clears the slot only when it holds exactly the expected spender.
 */
import { H, R, frozenSlot, hash32, pageKey, sd, spentSlot, txid, useEngine } from './helpers';

describe('unspend', () => {
  const h = useEngine();
  const u = [hash32('u0'), hash32('u1'), hash32('u2')];
  const child = txid();

  test('the expected spender: slot back to 32 bytes, counter decremented, DAH removed', async () => {
    const key = await h().put({
      utxos: u.map((x, i) => spentSlot(x, sd(child, i))),
      deleteAtHeight: H + R,
    });
    await expect(h().call(key, 'unspend', 1, u[1], sd(child, 1), H, R)).resolves.toEqual({ status: 'OK' });
    const bins = await h().bins(key);
    expect(bins.utxos).toEqual([spentSlot(u[0], sd(child, 0)), u[1], spentSlot(u[2], sd(child, 2))]);
    expect(bins.spentUtxos).toBe(2);
    expect(bins.deleteAtHeight).toBeUndefined();
  });

  test('external master: DAHUNSET with childCount', async () => {
    const key = await h().put({
      utxos: u.map((x, i) => spentSlot(x, sd(child, i))),
      deleteAtHeight: H + R,
      external: true,
      totalExtraRecs: 1,
      spentExtraRecs: 1,
    });
    await expect(h().call(key, 'unspend', 0, u[0], sd(child, 0), H, R)).resolves.toEqual({
      status: 'OK',
      signal: 'DAHUNSET',
      childCount: 1,
    });
  });

  test('another spender or an unspent slot: OK, no change', async () => {
    const key = await h().put({ utxos: [spentSlot(u[0], sd(child, 0)), u[1]] });
    const before = await h().bins(key);
    const gen = await h().generation(key);
    await expect(h().call(key, 'unspend', 0, u[0], sd(txid(), 0), H, R)).resolves.toEqual({ status: 'OK' });
    await expect(h().call(key, 'unspend', 0, u[0], sd(child, 1), H, R)).resolves.toEqual({ status: 'OK' });
    await expect(h().call(key, 'unspend', 1, u[1], sd(child, 1), H, R)).resolves.toEqual({ status: 'OK' });
    expect(await h().bins(key)).toEqual(before);
    expect(await h().generation(key)).toBe(gen);
  });

  test('frozen -> FROZEN (whatever the expected spender), nothing written', async () => {
    const key = await h().put({ utxos: [frozenSlot(u[0])] });
    const before = await h().bins(key);
    for (const expected of [sd(child, 0), Buffer.alloc(36, 0xff)]) {
      await expect(h().call(key, 'unspend', 0, u[0], expected, H, R)).resolves.toMatchObject({
        status: 'ERROR',
        errorCode: 'FROZEN',
      });
    }
    expect(await h().bins(key)).toEqual(before);
  });

  test('TX_NOT_FOUND, DELETING, UTXOS_NOT_FOUND, UTXO_NOT_FOUND, UTXO_HASH_MISMATCH, UTXO_INVALID_SIZE', async () => {
    await expect(h().call(txid(), 'unspend', 0, u[0], sd(child), H, R)).resolves.toMatchObject({
      errorCode: 'TX_NOT_FOUND',
    });
    const deleting = await h().put({ utxos: [spentSlot(u[0], sd(child))], deleting: true });
    await expect(h().call(deleting, 'unspend', 0, u[0], sd(child), H, R)).resolves.toMatchObject({
      errorCode: 'DELETING',
    });
    expect((await h().bins(deleting)).spentUtxos).toBe(1);
    const noList = await h().put({ extra: { utxos: null } });
    await expect(h().call(noList, 'unspend', 0, u[0], sd(child), H, R)).resolves.toMatchObject({
      errorCode: 'UTXOS_NOT_FOUND',
    });
    const key = await h().put({ utxos: [null, spentSlot(u[1], sd(child)), Buffer.alloc(40, 1)] });
    await expect(h().call(key, 'unspend', 0, u[0], sd(child), H, R)).resolves.toMatchObject({
      errorCode: 'UTXO_NOT_FOUND',
    });
    await expect(h().call(key, 'unspend', 7, u[0], sd(child), H, R)).resolves.toMatchObject({
      errorCode: 'UTXO_NOT_FOUND',
    });
    await expect(h().call(key, 'unspend', 1, u[0], sd(child), H, R)).resolves.toMatchObject({
      errorCode: 'UTXO_HASH_MISMATCH',
    });
    await expect(h().call(key, 'unspend', 2, u[0], sd(child), H, R)).resolves.toMatchObject({
      errorCode: 'UTXO_INVALID_SIZE',
    });
    expect((await h().bins(key)).spentUtxos).toBe(1);
  });

  test('a pagination record: NOTALLSPENT when it stops being fully spent', async () => {
    const key = pageKey(txid(), 1);
    await h().put(
      { master: false, utxos: [spentSlot(u[0], sd(child, 0))], extra: { lastSpentState: 'ALLSPENT' } },
      key,
    );
    await expect(h().call(key, 'unspend', 0, u[0], sd(child, 0), H, R)).resolves.toEqual({
      status: 'OK',
      signal: 'NOTALLSPENT',
    });
    const bins = await h().bins(key);
    expect(bins.lastSpentState).toBe('NOTALLSPENT');
    expect(bins.deleteAtHeight).toBeUndefined();
  });
});
