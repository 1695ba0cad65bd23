/**
 * The reorg functions of the UDF module: setLongestChain (unminedSince on or off the longest chain, block lists kept)
 * and replaceSpend (an output moved from a losing spender to the winner in one atomic step).
 */
import { FROZEN, H, R, frozenSlot, hash32, pageKey, sd, spentSlot, txid, useEngine } from './helpers';

describe('setLongestChain', () => {
  const h = useEngine();

  test('off the longest chain: unminedSince = height, blocks kept, DAH removed', async () => {
    const u = hash32('u0');
    const key = await h().put({ utxos: [spentSlot(u, sd(txid()))], blockIDs: [4, 5], deleteAtHeight: H + R });
    await expect(h().call(key, 'setLongestChain', false, H, R)).resolves.toEqual({ status: 'OK' });
    const bins = await h().bins(key);
    expect(bins.unminedSince).toBe(H);
    expect(bins.blockIDs).toEqual([4, 5]);
    expect(bins.blockHeights).toEqual([H - 5, H - 5]);
    expect(bins.deleteAtHeight).toBeUndefined();
  });

  test('off again keeps the first unminedSince (no write)', async () => {
    const key = await h().put({ blockIDs: [4], unminedSince: H - 3 });
    const gen = await h().generation(key);
    await expect(h().call(key, 'setLongestChain', false, H, R)).resolves.toEqual({ status: 'OK' });
    expect((await h().bins(key)).unminedSince).toBe(H - 3);
    expect(await h().generation(key)).toBe(gen);
  });

  test('back on the longest chain: unminedSince removed, and a fully spent tx gets its DAH', async () => {
    const u = hash32('u0');
    const key = await h().put({ utxos: [spentSlot(u, sd(txid()))], blockIDs: [4], unminedSince: H - 3 });
    await expect(h().call(key, 'setLongestChain', true, H, R)).resolves.toEqual({ status: 'OK' });
    const bins = await h().bins(key);
    expect(bins.unminedSince).toBeUndefined();
    expect(bins.blockIDs).toEqual([4]);
    expect(bins.deleteAtHeight).toBe(H + R);
  });

  test('on the longest chain but in no block: stays unmined', async () => {
    const key = await h().put({ blockIDs: [], unminedSince: H - 3 });
    await expect(h().call(key, 'setLongestChain', true, H, R)).resolves.toEqual({ status: 'OK' });
    expect((await h().bins(key)).unminedSince).toBe(H - 3);
  });

  test('external master: the DAH signal with childCount', async () => {
    const u = hash32('u0');
    const key = await h().put({
      utxos: [spentSlot(u, sd(txid()))],
      blockIDs: [4],
      deleteAtHeight: H + R,
      external: true,
      totalExtraRecs: 2,
      spentExtraRecs: 2,
    });
    await expect(h().call(key, 'setLongestChain', false, H, R)).resolves.toEqual({
      status: 'OK',
      signal: 'DAHUNSET',
      childCount: 2,
    });
  });

  test('missing -> TX_NOT_FOUND; pagination record -> INVALID_PARAMETER; deleting -> DELETING', async () => {
    await expect(h().call(txid(), 'setLongestChain', true, H, R)).resolves.toMatchObject({
      errorCode: 'TX_NOT_FOUND',
    });
    const page = await h().put({ master: false }, pageKey(txid(), 1));
    await expect(h().call(page, 'setLongestChain', true, H, R)).resolves.toMatchObject({
      errorCode: 'INVALID_PARAMETER',
    });
    const deleting = await h().put({ deleting: true });
    await expect(h().call(deleting, 'setLongestChain', false, H, R)).resolves.toMatchObject({
      errorCode: 'DELETING',
    });
  });
});

describe('replaceSpend', () => {
  const h = useEngine();
  const u = [hash32('u0'), hash32('u1')];
  const loser = sd(txid(), 0);
  const winner = sd(txid(), 1);

  test('held by the expected spender: moved to the new spender, counter unchanged', async () => {
    const key = await h().put({ utxos: [spentSlot(u[0], loser), u[1]] });
    await expect(h().call(key, 'replaceSpend', 0, u[0], winner, loser, H, R)).resolves.toEqual({ status: 'OK' });
    const bins = await h().bins(key);
    expect(bins.utxos).toEqual([spentSlot(u[0], winner), u[1]]);
    expect(bins.spentUtxos).toBe(1);
  });

  test('a retry (already held by the new spender): OK, nothing written', async () => {
    const key = await h().put({ utxos: [spentSlot(u[0], winner), u[1]] });
    const gen = await h().generation(key);
    await expect(h().call(key, 'replaceSpend', 0, u[0], winner, loser, H, R)).resolves.toEqual({ status: 'OK' });
    expect(await h().generation(key)).toBe(gen);
  });

  test('unspent: spent by the new spender, counter incremented, locked record too', async () => {
    const key = await h().put({ utxos: [u[0], u[1]], locked: true });
    await expect(h().call(key, 'replaceSpend', 1, u[1], winner, loser, H, R)).resolves.toEqual({ status: 'OK' });
    const bins = await h().bins(key);
    expect(bins.utxos).toEqual([u[0], spentSlot(u[1], winner)]);
    expect(bins.spentUtxos).toBe(1);
  });

  test('the last unspent output of a mined tx: DAH set', async () => {
    const key = await h().put({ utxos: [spentSlot(u[0], loser)] });
    await h().call(key, 'replaceSpend', 0, u[0], winner, loser, H, R);
    expect((await h().bins(key)).deleteAtHeight).toBe(H + R);
  });

  test('another spender -> SPENT with its spending data; frozen -> FROZEN; nothing written', async () => {
    const other = sd(txid(), 3);
    const key = await h().put({ utxos: [spentSlot(u[0], other), frozenSlot(u[1])] });
    const before = await h().bins(key);
    await expect(h().call(key, 'replaceSpend', 0, u[0], winner, loser, H, R)).resolves.toMatchObject({
      status: 'ERROR',
      errorCode: 'SPENT',
      spendingData: other,
    });
    await expect(h().call(key, 'replaceSpend', 1, u[1], winner, loser, H, R)).resolves.toMatchObject({
      errorCode: 'FROZEN',
    });
    await expect(h().call(key, 'replaceSpend', 1, u[1], FROZEN, loser, H, R)).resolves.toMatchObject({
      errorCode: 'INVALID_PARAMETER',
    });
    expect(await h().bins(key)).toEqual(before);
  });

  test('hash mismatch, missing output, creating, deleting, missing record', async () => {
    const key = await h().put({ utxos: [spentSlot(u[0], loser)] });
    await expect(h().call(key, 'replaceSpend', 0, u[1], winner, loser, H, R)).resolves.toMatchObject({
      errorCode: 'UTXO_HASH_MISMATCH',
    });
    await expect(h().call(key, 'replaceSpend', 5, u[0], winner, loser, H, R)).resolves.toMatchObject({
      errorCode: 'UTXO_NOT_FOUND',
    });
    const creating = await h().put({ utxos: [u[0]], creating: true });
    await expect(h().call(creating, 'replaceSpend', 0, u[0], winner, loser, H, R)).resolves.toMatchObject({
      errorCode: 'CREATING',
    });
    const deleting = await h().put({ utxos: [u[0]], deleting: true });
    await expect(h().call(deleting, 'replaceSpend', 0, u[0], winner, loser, H, R)).resolves.toMatchObject({
      errorCode: 'DELETING',
    });
    await expect(h().call(txid(), 'replaceSpend', 0, u[0], winner, loser, H, R)).resolves.toMatchObject({
      errorCode: 'TX_NOT_FOUND',
    });
  });
});
