/**
 * freeze / unfreeze / reassign, the flags, preserve, the pagination counters and the small bookkeeping functions.
 */
import {
  H,
  R,
  displayHex,
  frozenSlot,
  hash32,
  item,
  pageKey,
  sd,
  spendArgs,
  spentSlot,
  txid,
  useEngine,
} from './helpers';

describe('freeze / unfreeze / reassign', () => {
  const h = useEngine();
  const u = [hash32('u0'), hash32('u1'), hash32('u2')];
  const child = txid();
  const slots = () => [u[0], spentSlot(u[1], sd(child, 1)), frozenSlot(u[2]), null, Buffer.alloc(33, 7)];

  test('freeze: writes the frozen marker; a frozen output cannot be spent', async () => {
    const key = await h().put({ utxos: slots() });
    await expect(h().call(key, 'freeze', 0, u[0], H, R)).resolves.toEqual({ status: 'OK' });
    const bins = await h().bins(key);
    expect((bins.utxos as Buffer[])[0]).toEqual(frozenSlot(u[0]));
    expect(bins.spentUtxos).toBe(1);
    const res = await h().call(key, 'spendMulti', ...spendArgs([item(0, u[0], sd(txid(), 0))]));
    expect(res.errors).toEqual({ '0': { errorCode: 'FROZEN', message: expect.any(String) } });
  });

  test('freeze errors: ALREADY_FROZEN, SPENT (with spender), UTXO_NOT_FOUND, UTXO_HASH_MISMATCH, UTXO_INVALID_SIZE, TX_NOT_FOUND, UTXOS_NOT_FOUND', async () => {
    const key = await h().put({ utxos: slots() });
    const before = await h().bins(key);
    await expect(h().call(key, 'freeze', 2, u[2], H, R)).resolves.toMatchObject({ errorCode: 'ALREADY_FROZEN' });
    await expect(h().call(key, 'freeze', 1, u[1], H, R)).resolves.toMatchObject({
      status: 'ERROR',
      errorCode: 'SPENT',
      spendingData: sd(child, 1),
      message: expect.stringContaining(displayHex(child)),
    });
    await expect(h().call(key, 'freeze', 3, u[0], H, R)).resolves.toMatchObject({ errorCode: 'UTXO_NOT_FOUND' });
    await expect(h().call(key, 'freeze', 9, u[0], H, R)).resolves.toMatchObject({ errorCode: 'UTXO_NOT_FOUND' });
    await expect(h().call(key, 'freeze', 0, u[1], H, R)).resolves.toMatchObject({ errorCode: 'UTXO_HASH_MISMATCH' });
    await expect(h().call(key, 'freeze', 4, u[0], H, R)).resolves.toMatchObject({ errorCode: 'UTXO_INVALID_SIZE' });
    await expect(h().call(txid(), 'freeze', 0, u[0], H, R)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
    const noList = await h().put({ extra: { utxos: null } });
    await expect(h().call(noList, 'freeze', 0, u[0], H, R)).resolves.toMatchObject({ errorCode: 'UTXOS_NOT_FOUND' });
    expect(await h().bins(key)).toEqual(before);
  });

  test('unfreeze: back to the 32-byte hash; spendable again', async () => {
    const key = await h().put({ utxos: slots() });
    await expect(h().call(key, 'unfreeze', 2, u[2], H, R)).resolves.toEqual({ status: 'OK' });
    expect(((await h().bins(key)).utxos as Buffer[])[2]).toEqual(u[2]);
    await expect(h().call(key, 'spendMulti', ...spendArgs([item(2, u[2], sd(child, 2))]))).resolves.toMatchObject({
      status: 'OK',
    });
  });

  test('unfreeze errors: UTXO_NOT_FROZEN (unspent, spent), UTXO_NOT_FOUND, UTXO_HASH_MISMATCH, UTXO_INVALID_SIZE, TX_NOT_FOUND', async () => {
    const key = await h().put({ utxos: slots() });
    const before = await h().bins(key);
    await expect(h().call(key, 'unfreeze', 0, u[0], H, R)).resolves.toMatchObject({ errorCode: 'UTXO_NOT_FROZEN' });
    await expect(h().call(key, 'unfreeze', 1, u[1], H, R)).resolves.toMatchObject({ errorCode: 'UTXO_NOT_FROZEN' });
    await expect(h().call(key, 'unfreeze', 3, u[0], H, R)).resolves.toMatchObject({ errorCode: 'UTXO_NOT_FOUND' });
    await expect(h().call(key, 'unfreeze', 2, u[0], H, R)).resolves.toMatchObject({
      errorCode: 'UTXO_HASH_MISMATCH',
    });
    await expect(h().call(key, 'unfreeze', 4, u[0], H, R)).resolves.toMatchObject({ errorCode: 'UTXO_INVALID_SIZE' });
    await expect(h().call(txid(), 'unfreeze', 0, u[0], H, R)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
    expect(await h().bins(key)).toEqual(before);
  });

  test('reassign: new hash, reassignments entry, utxoSpendableIn[offset] = blockHeight + spendableAfter', async () => {
    const key = await h().put({ utxos: slots() });
    const fresh = hash32('new');
    await expect(h().call(key, 'reassign', 2, u[2], fresh, H - 2, 1000, H, R)).resolves.toEqual({ status: 'OK' });
    const bins = await h().bins(key);
    expect((bins.utxos as Buffer[])[2]).toEqual(fresh);
    expect(bins.reassignments).toEqual([{ offset: 2, utxoHash: u[2], newUtxoHash: fresh, blockHeight: H - 2 }]);
    expect(bins.utxoSpendableIn).toEqual({ '2': H - 2 + 1000 });
    // FROZEN_UNTIL until then, under the new hash
    const early = await h().call(key, 'spendMulti', ...spendArgs([item(2, fresh, sd(child, 2))], { h: H + 997 }));
    expect((early.errors as Record<string, { errorCode: string }>)['0'].errorCode).toBe('FROZEN_UNTIL');
    const old = await h().call(key, 'spendMulti', ...spendArgs([item(2, u[2], sd(child, 2))], { h: H + 998 }));
    expect((old.errors as Record<string, { errorCode: string }>)['0'].errorCode).toBe('UTXO_HASH_MISMATCH');
    await expect(
      h().call(key, 'spendMulti', ...spendArgs([item(2, fresh, sd(child, 2))], { h: H + 998 })),
    ).resolves.toMatchObject({ status: 'OK' });
  });

  test('reassign keeps the record from ever counting as fully spent', async () => {
    const key = await h().put({ utxos: [spentSlot(u[0], sd(child, 0)), frozenSlot(u[1])] });
    const fresh = hash32('new');
    await h().call(key, 'reassign', 1, u[1], fresh, H, 0, H, R);
    await h().call(key, 'spendMulti', ...spendArgs([item(1, fresh, sd(child, 1))]));
    const bins = await h().bins(key);
    expect(bins.spentUtxos).toBe(bins.recordUtxos);
    expect(bins.deleteAtHeight).toBeUndefined();
    // a pagination record with a reassignment never reports ALLSPENT
    const page = pageKey(txid(), 1);
    await h().put({ master: false, utxos: [frozenSlot(u[0])] }, page);
    await h().call(page, 'reassign', 0, u[0], fresh, H, 0, H, R);
    await expect(h().call(page, 'spendMulti', ...spendArgs([item(0, fresh, sd(child, 0))]))).resolves.toEqual({
      status: 'OK',
    });
    expect((await h().bins(page)).lastSpentState).toBe('NOTALLSPENT');
  });

  test('reassign errors: UTXO_NOT_FROZEN (unspent, spent), UTXO_NOT_FOUND, UTXO_HASH_MISMATCH, UTXO_INVALID_SIZE, TX_NOT_FOUND', async () => {
    const key = await h().put({ utxos: slots() });
    const before = await h().bins(key);
    const fresh = hash32('new');
    const call = (offset: number, hash: Buffer) => h().call(key, 'reassign', offset, hash, fresh, H, 1000, H, R);
    await expect(call(0, u[0])).resolves.toMatchObject({ errorCode: 'UTXO_NOT_FROZEN' });
    await expect(call(1, u[1])).resolves.toMatchObject({ errorCode: 'UTXO_NOT_FROZEN' });
    await expect(call(3, u[0])).resolves.toMatchObject({ errorCode: 'UTXO_NOT_FOUND' });
    await expect(call(2, u[0])).resolves.toMatchObject({ errorCode: 'UTXO_HASH_MISMATCH' });
    await expect(call(4, u[0])).resolves.toMatchObject({ errorCode: 'UTXO_INVALID_SIZE' });
    await expect(h().call(txid(), 'reassign', 2, u[2], fresh, H, 1000, H, R)).resolves.toMatchObject({
      errorCode: 'TX_NOT_FOUND',
    });
    expect(await h().bins(key)).toEqual(before);
  });
});

describe('flags, preserve, counters, bookkeeping', () => {
  const h = useEngine();
  const child = txid();
  const allSpent = () => [0, 1].map((i) => spentSlot(hash32(`u${i}`), sd(child, i)));

  test('setConflicting: sets the flag and DAH = height + R (DAHSET when external); unset removes it', async () => {
    const key = await h().put({ external: true, totalExtraRecs: 2 });
    await expect(h().call(key, 'setConflicting', true, H, R)).resolves.toEqual({
      status: 'OK',
      signal: 'DAHSET',
      childCount: 2,
    });
    expect(await h().bins(key)).toMatchObject({ conflicting: true, deleteAtHeight: H + R });
    // already set: kept, no signal
    await expect(h().call(key, 'setConflicting', true, H + 5, R)).resolves.toEqual({ status: 'OK', childCount: 2 });
    expect((await h().bins(key)).deleteAtHeight).toBe(H + R);
    await expect(h().call(key, 'setConflicting', false, H, R)).resolves.toEqual({
      status: 'OK',
      signal: 'DAHUNSET',
      childCount: 2,
    });
    const bins = await h().bins(key);
    expect(bins.conflicting).toBe(false);
    expect(bins.deleteAtHeight).toBeUndefined();
    await expect(h().call(txid(), 'setConflicting', true, H, R)).resolves.toMatchObject({
      errorCode: 'TX_NOT_FOUND',
    });
  });

  test('setLocked: a locked tx is not deletable; unlocking makes it deletable again', async () => {
    const key = await h().put({ utxos: allSpent(), deleteAtHeight: H + R });
    await expect(h().call(key, 'setLocked', true, H, R)).resolves.toMatchObject({ status: 'OK' });
    let bins = await h().bins(key);
    expect(bins.locked).toBe(true);
    expect(bins.deleteAtHeight).toBeUndefined();
    await h().call(key, 'setLocked', false, H + 1, R);
    bins = await h().bins(key);
    expect(bins.locked).toBe(false);
    expect(bins.deleteAtHeight).toBe(H + 1 + R);
    await expect(h().call(txid(), 'setLocked', true, H, R)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
  });

  test('setLocked / setConflicting on a pagination record: no DAH of its own from spending', async () => {
    const page = pageKey(txid(), 1);
    await h().put({ master: false, utxos: allSpent(), extra: { lastSpentState: 'ALLSPENT' } }, page);
    await expect(h().call(page, 'setLocked', true, H, R)).resolves.toEqual({ status: 'OK' });
    expect((await h().bins(page)).deleteAtHeight).toBeUndefined();
  });

  test('preserveUntil: sets preserveUntil, removes DAH, PRESERVE when external; the DAH rule then does nothing', async () => {
    const key = await h().put({
      utxos: allSpent(),
      deleteAtHeight: H + R,
      external: true,
      totalExtraRecs: 1,
      spentExtraRecs: 1,
    });
    await expect(h().call(key, 'preserveUntil', H + 50, H, R)).resolves.toEqual({
      status: 'OK',
      signal: 'PRESERVE',
      childCount: 1,
    });
    let bins = await h().bins(key);
    expect(bins.preserveUntil).toBe(H + 50);
    expect(bins.deleteAtHeight).toBeUndefined();
    await h().call(key, 'rerunDah', H, R);
    await h().call(key, 'setConflicting', true, H, R);
    bins = await h().bins(key);
    expect(bins.deleteAtHeight).toBeUndefined();
    const internal = await h().put();
    await expect(h().call(internal, 'preserveUntil', H + 50, H, R)).resolves.toEqual({ status: 'OK' });
    await expect(h().call(txid(), 'preserveUntil', H, H, R)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
  });

  test('preserveUntil on a record cleanup marked `deleting`: DELETING, nothing written (the delete goes ahead)', async () => {
    const key = await h().put({ utxos: allSpent(), deleting: true, deleteAtHeight: H - 1 });
    const gen = await h().generation(key);
    await expect(h().call(key, 'preserveUntil', H + 50, H, R)).resolves.toMatchObject({
      status: 'ERROR',
      errorCode: 'DELETING',
    });
    expect(await h().generation(key)).toBe(gen);
    const bins = await h().bins(key);
    expect(bins.preserveUntil).toBeUndefined();
    expect(bins.deleteAtHeight).toBe(H - 1);
  });

  test('expirePreserve: kept before the height; removed at it and the DAH rule re-run', async () => {
    const key = await h().put({ utxos: allSpent(), preserveUntil: H + 5, external: true });
    const gen = await h().generation(key);
    await expect(h().call(key, 'expirePreserve', H + 4, R)).resolves.toEqual({ status: 'OK' });
    expect(await h().generation(key)).toBe(gen);
    expect((await h().bins(key)).preserveUntil).toBe(H + 5);
    await expect(h().call(key, 'expirePreserve', H + 5, R)).resolves.toEqual({
      status: 'OK',
      signal: 'DAHSET',
      childCount: 0,
    });
    const bins = await h().bins(key);
    expect(bins.preserveUntil).toBeUndefined();
    expect(bins.deleteAtHeight).toBe(H + 5 + R);
    await expect(h().call(txid(), 'expirePreserve', H, R)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
  });

  test('incrementSpentExtraRecs: counts (clamped to [0, totalExtraRecs]) and re-runs the DAH rule', async () => {
    const key = await h().put({ utxos: allSpent(), totalExtraRecs: 2, spentExtraRecs: 0, external: true });
    await expect(h().call(key, 'incrementSpentExtraRecs', 1, H, R)).resolves.toEqual({ status: 'OK' });
    expect((await h().bins(key)).spentExtraRecs).toBe(1);
    await expect(h().call(key, 'incrementSpentExtraRecs', 5, H, R)).resolves.toEqual({
      status: 'OK',
      signal: 'DAHSET',
      childCount: 2,
    });
    expect(await h().bins(key)).toMatchObject({ spentExtraRecs: 2, deleteAtHeight: H + R });
    await expect(h().call(key, 'incrementSpentExtraRecs', -5, H, R)).resolves.toEqual({
      status: 'OK',
      signal: 'DAHUNSET',
      childCount: 2,
    });
    const bins = await h().bins(key);
    expect(bins.spentExtraRecs).toBe(0);
    expect(bins.deleteAtHeight).toBeUndefined();
  });

  test('setSpentExtraRecs: exact value; out of range or on a pagination record -> INVALID_PARAMETER', async () => {
    const key = await h().put({ utxos: allSpent(), totalExtraRecs: 2, spentExtraRecs: 0 });
    await expect(h().call(key, 'setSpentExtraRecs', 2, H, R)).resolves.toEqual({ status: 'OK' });
    expect(await h().bins(key)).toMatchObject({ spentExtraRecs: 2, deleteAtHeight: H + R });
    for (const bad of [3, -1]) {
      await expect(h().call(key, 'setSpentExtraRecs', bad, H, R)).resolves.toMatchObject({
        errorCode: 'INVALID_PARAMETER',
      });
    }
    expect((await h().bins(key)).spentExtraRecs).toBe(2);
    const page = pageKey(txid(), 1);
    await h().put({ master: false }, page);
    for (const fn of ['setSpentExtraRecs', 'incrementSpentExtraRecs']) {
      await expect(h().call(page, fn, 1, H, R)).resolves.toMatchObject({ errorCode: 'INVALID_PARAMETER' });
      await expect(h().call(txid(), fn, 1, H, R)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
    }
  });

  test('clearCreating: removes creating, a fully spent mined master becomes deletable; spendable again', async () => {
    const key = await h().put({ utxos: allSpent(), creating: true });
    await expect(h().call(key, 'clearCreating', H, R)).resolves.toEqual({ status: 'OK' });
    const bins = await h().bins(key);
    expect(bins.creating).toBeUndefined();
    expect(bins.deleteAtHeight).toBe(H + R);
    const gen = await h().generation(key);
    await expect(h().call(key, 'clearCreating', H, R)).resolves.toEqual({ status: 'OK' });
    expect(await h().generation(key)).toBe(gen);
    await expect(h().call(txid(), 'clearCreating', H, R)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
  });

  test('addConflictingChild: appended once', async () => {
    const key = await h().put();
    const c1 = txid();
    const c2 = txid();
    await expect(h().call(key, 'addConflictingChild', c1)).resolves.toEqual({ status: 'OK' });
    await h().call(key, 'addConflictingChild', c2);
    await h().call(key, 'addConflictingChild', c1);
    expect((await h().bins(key)).conflictingCs).toEqual([c1, c2]);
    await expect(h().call(txid(), 'addConflictingChild', c1)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
  });

  test('setDeletedChild: deletedChildren[display hex] = true (lowercased); a respend by it is INVALID_SPEND', async () => {
    const spender = txid();
    const key = await h().put({ utxos: [spentSlot(hash32('u0'), sd(spender, 0)), hash32('u1')] });
    await expect(h().call(key, 'setDeletedChild', displayHex(spender).toUpperCase())).resolves.toEqual({
      status: 'OK',
    });
    await h().call(key, 'setDeletedChild', displayHex(spender));
    expect((await h().bins(key)).deletedChildren).toEqual({ [displayHex(spender)]: true });
    const res = await h().call(key, 'spendMulti', ...spendArgs([item(0, hash32('u0'), sd(spender, 0))]));
    expect(res.errors).toEqual({
      '0': { errorCode: 'INVALID_SPEND', message: expect.any(String), spendingData: sd(spender, 0) },
    });
    await expect(h().call(txid(), 'setDeletedChild', displayHex(spender))).resolves.toMatchObject({
      errorCode: 'TX_NOT_FOUND',
    });
  });

  test('markDeleting: deleting = true at the expected generation; another generation -> CHANGED, nothing written', async () => {
    const key = await h().put({ utxos: allSpent() });
    const gen = await h().generation(key);
    await expect(h().call(key, 'markDeleting', gen + 1)).resolves.toMatchObject({ errorCode: 'CHANGED' });
    expect(await h().generation(key)).toBe(gen);
    expect((await h().bins(key)).deleting).toBeUndefined();
    await expect(h().call(key, 'markDeleting', gen)).resolves.toEqual({ status: 'OK' });
    expect((await h().bins(key)).deleting).toBe(true);
    expect(await h().generation(key)).toBe(gen + 1);
    // a marked record refuses spends
    const res = await h().call(key, 'spendMulti', ...spendArgs([item(0, hash32('u0'), sd(txid(), 0))]));
    expect(res).toMatchObject({ errorCode: 'DELETING' });
    await expect(h().call(txid(), 'markDeleting', 1)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
  });

  test('rerunDah: re-evaluates only', async () => {
    const key = await h().put({ utxos: allSpent() });
    await expect(h().call(key, 'rerunDah', H, R)).resolves.toEqual({ status: 'OK' });
    expect((await h().bins(key)).deleteAtHeight).toBe(H + R);
    await expect(h().call(key, 'rerunDah', H - 5, R)).resolves.toEqual({ status: 'OK' });
    expect((await h().bins(key)).deleteAtHeight).toBe(H + R);
    await expect(h().call(txid(), 'rerunDah', H, R)).resolves.toMatchObject({ errorCode: 'TX_NOT_FOUND' });
  });
});
