/**
 * setMined (docs/udf.md): add (idempotent per blockID) or remove the block triple; unminedSince; clears locked
 * and creating; blockIDs and childCount; a tx mined only on a fork is not deletable.
 */
import { H, R, hash32, sd, spentSlot, txid, useEngine } from './helpers';

describe('setMined', () => {
  const h = useEngine();
  const child = txid();
  const allSpent = () => [0, 1].map((i) => spentSlot(hash32(`u${i}`), sd(child, i)));

  test('adds the block triple, removes unminedSince, clears locked and creating, returns blockIDs', async () => {
    const key = await h().put({ blockIDs: [], unminedSince: 900, locked: true, creating: true });
    const res = await h().call(key, 'setMined', 7, H - 1, 3, H, R, true, false);
    expect(res).toEqual({ status: 'OK', blockIDs: [7], childCount: 0 });
    const bins = await h().bins(key);
    expect(bins).toMatchObject({ blockIDs: [7], blockHeights: [H - 1], subtreeIdxs: [3], locked: false });
    expect(bins.unminedSince).toBeUndefined();
    expect(bins.creating).toBeUndefined();
  });

  test('idempotent per blockID; a second block is appended', async () => {
    const key = await h().put({ blockIDs: [] });
    await h().call(key, 'setMined', 7, H - 1, 3, H, R, true, false);
    const once = await h().bins(key);
    await expect(h().call(key, 'setMined', 7, H - 1, 3, H, R, true, false)).resolves.toMatchObject({
      blockIDs: [7],
    });
    expect(await h().bins(key)).toEqual(once);
    await expect(h().call(key, 'setMined', 8, H, 1, H, R, false, false)).resolves.toMatchObject({
      blockIDs: [7, 8],
    });
    expect(await h().bins(key)).toMatchObject({ blockIDs: [7, 8], blockHeights: [H - 1, H], subtreeIdxs: [3, 1] });
  });

  test('unsetMined removes the triple; empty -> unminedSince = height; a missing block is a no-op', async () => {
    const key = await h().put({ blockIDs: [] });
    await h().call(key, 'setMined', 7, H - 1, 3, H, R, true, false);
    await h().call(key, 'setMined', 8, H, 1, H, R, true, false);
    await expect(h().call(key, 'setMined', 7, 0, 0, H + 1, R, true, true)).resolves.toMatchObject({
      status: 'OK',
      blockIDs: [8],
    });
    let bins = await h().bins(key);
    expect(bins).toMatchObject({ blockIDs: [8], blockHeights: [H], subtreeIdxs: [1] });
    expect(bins.unminedSince).toBeUndefined();
    await expect(h().call(key, 'setMined', 99, 0, 0, H + 1, R, true, true)).resolves.toMatchObject({
      blockIDs: [8],
    });
    await expect(h().call(key, 'setMined', 8, 0, 0, H + 2, R, true, true)).resolves.toMatchObject({
      status: 'OK',
      blockIDs: [],
    });
    bins = await h().bins(key);
    expect(bins).toMatchObject({ blockIDs: [], blockHeights: [], subtreeIdxs: [], unminedSince: H + 2 });
  });

  test('unsetting the block of a fully spent tx removes its DAH', async () => {
    const key = await h().put({ utxos: allSpent(), blockIDs: [4], deleteAtHeight: H + R });
    await h().call(key, 'setMined', 4, 0, 0, H, R, true, true);
    const bins = await h().bins(key);
    expect(bins.deleteAtHeight).toBeUndefined();
    expect(bins.unminedSince).toBe(H);
  });

  test('mined on the longest chain and fully spent: DAH = max(height, blockHeight) + R', async () => {
    const key = await h().put({ utxos: allSpent(), blockIDs: [] });
    await h().call(key, 'setMined', 5, H - 3, 0, H, R, true, false);
    expect((await h().bins(key)).deleteAtHeight).toBe(H + R);
    const ahead = await h().put({ utxos: allSpent(), blockIDs: [] });
    await h().call(ahead, 'setMined', 5, H + 4, 0, H, R, true, false);
    expect((await h().bins(ahead)).deleteAtHeight).toBe(H + 4 + R);
  });

  test('mined only on a fork: stays unmined, not deletable', async () => {
    const key = await h().put({ utxos: allSpent(), blockIDs: [], unminedSince: 900 });
    await expect(h().call(key, 'setMined', 5, H, 0, H, R, false, false)).resolves.toMatchObject({ blockIDs: [5] });
    let bins = await h().bins(key);
    expect(bins.unminedSince).toBe(900);
    expect(bins.deleteAtHeight).toBeUndefined();
    // a record that had no unminedSince and no block: mined on a fork marks it unmined
    const bare = await h().put({ utxos: allSpent(), blockIDs: [], unminedSince: null });
    await h().call(bare, 'setMined', 5, H, 0, H, R, false, false);
    bins = await h().bins(bare);
    expect(bins.unminedSince).toBe(H);
    expect(bins.deleteAtHeight).toBeUndefined();
    // then mined on the longest chain: deletable
    await h().call(bare, 'setMined', 6, H, 0, H, R, true, false);
    bins = await h().bins(bare);
    expect(bins.unminedSince).toBeUndefined();
    expect(bins.deleteAtHeight).toBe(H + R);
  });

  test('a fork block on an already mined tx keeps it mined', async () => {
    const key = await h().put({ blockIDs: [1] });
    await h().call(key, 'setMined', 2, H, 0, H, R, false, false);
    expect((await h().bins(key)).unminedSince).toBeUndefined();
  });

  test('childCount = totalExtraRecs; external DAHSET signal', async () => {
    const key = await h().put({
      utxos: allSpent(),
      blockIDs: [],
      external: true,
      totalExtraRecs: 3,
      spentExtraRecs: 3,
    });
    await expect(h().call(key, 'setMined', 5, H, 0, H, R, true, false)).resolves.toEqual({
      status: 'OK',
      blockIDs: [5],
      signal: 'DAHSET',
      childCount: 3,
    });
  });

  test('TX_NOT_FOUND (also when unsetting) and DELETING write nothing', async () => {
    await expect(h().call(txid(), 'setMined', 5, H, 0, H, R, true, false)).resolves.toMatchObject({
      status: 'ERROR',
      errorCode: 'TX_NOT_FOUND',
    });
    await expect(h().call(txid(), 'setMined', 5, H, 0, H, R, true, true)).resolves.toMatchObject({
      errorCode: 'TX_NOT_FOUND',
    });
    const key = await h().put({ blockIDs: [], deleting: true, locked: true });
    const before = await h().bins(key);
    await expect(h().call(key, 'setMined', 5, H, 0, H, R, true, false)).resolves.toMatchObject({
      status: 'ERROR',
      errorCode: 'DELETING',
    });
    expect(await h().bins(key)).toEqual(before);
  });

  test('R = 0: no DAH', async () => {
    const key = await h().put({ utxos: allSpent(), blockIDs: [] });
    await h().call(key, 'setMined', 5, H, 0, H, 0, true, false);
    expect((await h().bins(key)).deleteAtHeight).toBeUndefined();
  });
});
