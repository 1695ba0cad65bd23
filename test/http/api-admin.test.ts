/**
 * Every route of docs/api.md through the local server, with success and each documented error (api.test.ts): setMined,
 * the admin routes, and the no-output and raw-input rules.
 */
import './quiet-logs';
import { Transaction } from '@bsv/sdk';
import { makeTx, rootTx, spendItem, utxoHashOf, type Fixture } from '../fixtures/txs';
import { expectBadArgument, expectError, useApi } from './harness';

const api = useApi();

const { create, utxoStatus } = api;

describe('POST /v1/mined', () => {
  test('adds a block, raises the tip, is idempotent, unsets', async () => {
    const f = rootTx(1);
    await create(f);
    const block7 = { txids: [f.txid], blockId: 7, blockHeight: 1001, subtreeIdx: 3 };
    const mined = await api.post('/v1/mined', block7);
    expect(mined).toMatchObject({ status: 200, body: { blockIds: { [f.txid]: [7] } } });
    expect((await api.post('/v1/mined', block7)).body).toEqual({ blockIds: { [f.txid]: [7] } });
    const got = await api.get(`/v1/txs/${f.txid}`);
    expect(got.body).toMatchObject({ blockIDs: [7], blockHeights: [1001], subtreeIdxs: [3] });
    expect(got.body.unminedSince).toBeUndefined();
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1001 });

    const unset = await api.post('/v1/mined', { ...block7, unsetMined: true });
    expect(unset.body).toEqual({ blockIds: { [f.txid]: [] } });
    expect((await api.get(`/v1/txs/${f.txid}`)).body.unminedSince).toBeDefined();

    const fork = await api.post('/v1/mined', {
      txids: [f.txid],
      blockId: 8,
      blockHeight: 5000,
      subtreeIdx: 0,
      onLongestChain: false,
    });
    expect(fork.body).toEqual({ blockIds: { [f.txid]: [8] } });
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1001 });
    await api.put('/v1/chain/tip/force', { height: 1000 });
  });

  test('a block more than MAX_TIP_ADVANCE (10) above the tip on the longest chain is 400 naming blockHeight, nothing marked', async () => {
    const f = rootTx(1);
    await create(f);
    const far = await api.post('/v1/mined', { txids: [f.txid], blockId: 9, blockHeight: 1011, subtreeIdx: 0 });
    expectError(far, 400, 'INVALID_ARGUMENT', 'blockHeight');
    expect(far.body.error.details).toMatchObject({ current: 1000, maxAdvance: 10 });
    expect((await api.get(`/v1/txs/${f.txid}`)).body).toMatchObject({ blockIDs: [] });
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1000 });
  });

  test('errors: missing txid 404 (not when unsetting), bad numbers 400', async () => {
    const missing = rootTx(1).txid;
    const base = { blockId: 1, blockHeight: 1001, subtreeIdx: 0 };
    expectError(await api.post('/v1/mined', { txids: [missing], ...base }), 404, 'TX_NOT_FOUND');
    expect((await api.post('/v1/mined', { txids: [missing], ...base, unsetMined: true })).body).toEqual({
      blockIds: { [missing]: [] },
    });
    expectBadArgument(await api.post('/v1/mined', { txids: [missing], ...base, blockId: -1 }), 'blockId');
    expectBadArgument(await api.post('/v1/mined', { txids: [missing], ...base, subtreeIdx: 0.5 }), 'subtreeIdx');
    expectError(await api.post('/v1/mined', { txids: [], ...base }), 400, 'INVALID_ARGUMENT', 'txids');
    expectError(await api.post('/v1/mined', { txids: ['ab'], ...base }), 400, 'INVALID_ARGUMENT', 'txids[0]');
    expectBadArgument(await api.post('/v1/mined', { txids: [missing], blockId: 1, subtreeIdx: 0 }), 'blockHeight');
    expectBadArgument(
      await api.post('/v1/mined', { txids: [missing], ...base, onLongestChain: 'yes' }),
      'onLongestChain',
    );
  });
});

describe('admin: locked, conflicting, freeze, unfreeze, reassign, preserve, delete, unmined', () => {
  test('POST /v1/locked blocks spends until unlocked', async () => {
    const parent = rootTx(1);
    await create(parent);
    const spend = makeTx({ inputs: [{ parent, vout: 0 }] });
    expect(await api.post('/v1/locked', { txids: [parent.txid], locked: true })).toMatchObject({
      status: 200,
      body: { status: 'OK' },
    });
    expectError(await api.post('/v1/spends', { tx: spend.hex }), 409, 'LOCKED');
    expect(await utxoStatus(parent.txid, 0)).toEqual({ status: 'LOCKED' });
    expect((await api.post('/v1/spends', { tx: spend.hex, ignoreLocked: true })).status).toBe(200);
    await api.post('/v1/unspends', { spends: [spendItem(parent, 0, spend)] });
    expect((await api.post('/v1/locked', { txids: [parent.txid], locked: false })).status).toBe(200);
    expect((await api.post('/v1/spends', { tx: spend.hex })).status).toBe(200);

    expectError(await api.post('/v1/locked', { txids: [rootTx(1).txid], locked: true }), 404, 'TX_NOT_FOUND');
    expectError(await api.post('/v1/locked', { txids: [parent.txid], locked: 1 }), 400, 'INVALID_ARGUMENT', 'locked');
    expectError(await api.post('/v1/locked', { txids: [parent.txid] }), 400, 'INVALID_ARGUMENT', 'locked');
  });

  test('POST /v1/conflicting blocks spends unless ignoreConflicting', async () => {
    const parent = rootTx(2);
    await create(parent);
    expect((await api.post('/v1/conflicting', { txids: [parent.txid], conflicting: true })).status).toBe(200);
    expect((await api.get(`/v1/txs/${parent.txid}?fields=conflicting`)).body.conflicting).toBe(true);
    const spend = makeTx({ inputs: [{ parent, vout: 0 }] });
    expectError(await api.post('/v1/spends', { tx: spend.hex }), 409, 'CONFLICTING');
    expect((await api.post('/v1/spends', { tx: spend.hex, ignoreConflicting: true })).status).toBe(200);
    expect((await api.post('/v1/conflicting', { txids: [parent.txid], conflicting: false })).status).toBe(200);
    const second = makeTx({ inputs: [{ parent, vout: 1 }] });
    expect((await api.post('/v1/spends', { tx: second.hex })).status).toBe(200);
    expectError(await api.post('/v1/conflicting', { txids: [rootTx(1).txid], conflicting: true }), 404, 'TX_NOT_FOUND');
    expectBadArgument(await api.post('/v1/conflicting', { txids: [parent.txid], conflicting: 'true' }), 'conflicting');
  });

  test('POST /v1/freeze and /v1/unfreeze, 409 per utxo', async () => {
    const parent = rootTx(2);
    await create(parent);
    const u0 = { txid: parent.txid, vout: 0, utxoHash: utxoHashOf(parent, 0) };
    const u1 = { txid: parent.txid, vout: 1, utxoHash: utxoHashOf(parent, 1) };
    expect(await api.post('/v1/freeze', { utxos: [u0] })).toMatchObject({ status: 200, body: { status: 'OK' } });
    expect(await utxoStatus(parent.txid, 0)).toEqual({ status: 'FROZEN' });
    const spend = makeTx({ inputs: [{ parent, vout: 0 }] });
    expectError(await api.post('/v1/spends', { tx: spend.hex }), 409, 'FROZEN');

    const again = expectError(await api.post('/v1/freeze', { utxos: [u1, u0] }), 409, 'ALREADY_FROZEN');
    expect(again.details?.utxos).toEqual([
      expect.objectContaining({ txid: parent.txid, vout: 1, status: 'OK' }),
      expect.objectContaining({ txid: parent.txid, vout: 0, status: 'ERROR', code: 'ALREADY_FROZEN' }),
    ]);
    expect((await api.post('/v1/unfreeze', { utxos: [u0, u1] })).status).toBe(200);
    expect(await utxoStatus(parent.txid, 0)).toEqual({ status: 'OK' });
    const notFrozen = expectError(await api.post('/v1/unfreeze', { utxos: [u0] }), 409, 'UTXO_NOT_FROZEN');
    expect(notFrozen.details).toMatchObject({ txid: parent.txid, vout: 0 });

    // a spent output cannot be frozen
    expect((await api.post('/v1/spends', { tx: spend.hex })).status).toBe(200);
    expectError(await api.post('/v1/freeze', { utxos: [u0] }), 409, 'SPENT');

    expectBadArgument(await api.post('/v1/freeze', { utxos: [{ ...u1, utxoHash: 'ab' }] }), 'utxos[0].utxoHash');
    expectError(await api.post('/v1/freeze', { utxos: [] }), 400, 'INVALID_ARGUMENT', 'utxos');
    expectError(await api.post('/v1/freeze', { utxos: [{ ...u1, txid: rootTx(1).txid }] }), 404, 'TX_NOT_FOUND');
  });

  test('POST /v1/reassign: a frozen output gets a new hash, spendable 1000 blocks later', async () => {
    const parent = rootTx(1);
    await create(parent);
    const u0 = { txid: parent.txid, vout: 0, utxoHash: utxoHashOf(parent, 0) };
    const newUtxoHash = 'ab'.repeat(32);
    expectError(await api.post('/v1/reassign', { ...u0, newUtxoHash }), 409, 'UTXO_NOT_FROZEN');
    expect((await api.post('/v1/freeze', { utxos: [u0] })).status).toBe(200);
    expect(await api.post('/v1/reassign', { ...u0, newUtxoHash })).toMatchObject({ status: 200 });
    const tip = (await api.get('/v1/chain/tip')).body.height;
    const status = await api.get(`/v1/utxos/${parent.txid}/0?utxoHash=${newUtxoHash}`);
    expect(status.body).toEqual({ status: 'FROZEN', spendableAt: tip + 1000 });
    // the old hash no longer matches
    expect((await api.get(`/v1/utxos/${parent.txid}/0?utxoHash=${u0.utxoHash}`)).body).toEqual({ status: 'NOT_FOUND' });
    expect((await api.get(`/v1/txs/${parent.txid}?fields=reassignments`)).body.reassignments).toHaveLength(1);

    expectError(await api.post('/v1/reassign', { ...u0, newUtxoHash: 'zz' }), 400, 'INVALID_ARGUMENT', 'newUtxoHash');
    expectError(await api.post('/v1/reassign', { ...u0 }), 400, 'INVALID_ARGUMENT', 'newUtxoHash');
    expectError(await api.post('/v1/reassign', { ...u0, txid: rootTx(1).txid, newUtxoHash }), 404, 'TX_NOT_FOUND');
  });

  test('POST /v1/preserve sets preserveUntil', async () => {
    const f = rootTx(1);
    await create(f);
    expect((await api.post('/v1/preserve', { txids: [f.txid], untilHeight: 5000 })).status).toBe(200);
    expect((await api.get(`/v1/txs/${f.txid}?fields=preserveUntil,deleteAtHeight`)).body).toEqual({
      txid: f.txid,
      preserveUntil: 5000,
    });
    expectError(await api.post('/v1/preserve', { txids: [rootTx(1).txid], untilHeight: 5 }), 404, 'TX_NOT_FOUND');
    expectBadArgument(await api.post('/v1/preserve', { txids: [f.txid], untilHeight: -5 }), 'untilHeight');
  });

  test('DELETE /v1/txs/{txid}', async () => {
    const f = rootTx(1);
    await create(f);
    const deleted = await api.del(`/v1/txs/${f.txid}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectError(await api.get(`/v1/txs/${f.txid}`), 404, 'TX_NOT_FOUND');
    expectError(await api.del(`/v1/txs/${f.txid}`), 404, 'TX_NOT_FOUND');
    expectError(await api.del('/v1/txs/1234'), 400, 'INVALID_ARGUMENT', 'txid');
    // and it can be created again
    await create(f);
  });

  test('GET /v1/unmined pages with a cursor', async () => {
    await api.put('/v1/chain/tip/force', { height: 3000 });
    const fresh: Fixture[] = Array.from({ length: 5 }, () => rootTx(1));
    for (const f of fresh) await create(f, { blockHeight: 3000 });
    await api.put('/v1/chain/tip/force', { height: 1000 });

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const q = `/v1/unmined?cutoff=3000&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await api.get(q);
      expect(page.status).toBe(200);
      expect(page.body.txids.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.txids);
      cursor = page.body.cursor;
      pages++;
    } while (cursor && pages < 100);
    for (const f of fresh) expect(seen).toContain(f.txid);
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBeGreaterThan(2);

    const early = await api.get('/v1/unmined?cutoff=2999&limit=10000');
    for (const f of fresh) expect(early.body.txids).not.toContain(f.txid);

    expectError(await api.get('/v1/unmined'), 400, 'INVALID_ARGUMENT', 'cutoff');
    expectError(await api.get('/v1/unmined?cutoff=-1'), 400, 'INVALID_ARGUMENT', 'cutoff');
    expectError(await api.get('/v1/unmined?cutoff=1.5'), 400, 'INVALID_ARGUMENT', 'cutoff');
    expectError(await api.get('/v1/unmined?cutoff=5&limit=0'), 400, 'INVALID_ARGUMENT', 'limit');
    expectError(await api.get('/v1/unmined?cutoff=5&page=2'), 400, 'INVALID_ARGUMENT', 'page');
    expectError(await api.get('/v1/unmined?cutoff=5&cutoff=6'), 400, 'INVALID_ARGUMENT', 'cutoff');
  });
});

describe('the no-output and raw-input rules', () => {
  test('a tx with no outputs and a raw tx with inputs are rejected; nothing is stored', async () => {
    const empty = new Transaction();
    empty.version = 1;
    empty.lockTime = 424242;
    const emptyHex = empty.toHex();
    expectError(await api.post('/v1/txs', { tx: emptyHex }), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(await api.get(`/v1/txs/${empty.id('hex')}`), 404, 'TX_NOT_FOUND');

    const parent = rootTx(1);
    const raw = makeTx({ inputs: [{ parent, vout: 0 }] });
    expectError(await api.post('/v1/txs', { tx: raw.tx.toHex() }), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(await api.get(`/v1/txs/${raw.txid}`), 404, 'TX_NOT_FOUND');
  });
});
