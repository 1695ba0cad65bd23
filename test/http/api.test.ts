/**
 * Every route of docs/api.md through the local server, with success and each documented error.
 */
import './quiet-logs';
import { Transaction } from '@bsv/sdk';
import {
  GOLDEN_EF_HEX,
  GOLDEN_EXTENDED_SIZE,
  GOLDEN_FEE,
  GOLDEN_SIZE,
  GOLDEN_TXID,
  GOLDEN_UTXO_HASHES,
} from '../fixtures/golden-tx';
import { coinbaseTx, makeTx, rootTx, spendItem, utxoHashOf, type Fixture } from '../fixtures/txs';
import { expectError, startApi, type Api } from './harness';

let api: Api;

beforeAll(async () => {
  api = await startApi();
  expect((await api.put('/v1/chain/tip/force', { height: 1000 })).status).toBe(200);
});

afterAll(async () => {
  await api?.close();
});

async function create(f: Fixture, extra: Record<string, unknown> = {}) {
  const reply = await api.post('/v1/txs', { tx: f.hex, ...extra });
  expect(reply.status).toBe(201);
  return reply.body;
}

async function utxoStatus(txid: string, vout: number) {
  const reply = await api.get(`/v1/utxos/${txid}/${vout}`);
  expect(reply.status).toBe(200);
  return reply.body;
}

describe('GET /v1/health and chain tip', () => {
  test('health reports every port', async () => {
    const reply = await api.get('/v1/health');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      status: 'ok',
      engine: 'embedded: ok',
      blobStore: 'file: ok',
      queue: 'inline: ok',
    });
    expect(reply.headers.get('content-type')).toMatch(/application\/json/);
  });

  test('GET and PUT /v1/chain/tip/force: any height, back or far forward; bad heights are 400', async () => {
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1000 });
    const put = await api.put('/v1/chain/tip/force', { height: 1000 });
    expect(put.status).toBe(200);
    expectError(await api.put('/v1/chain/tip/force', { height: -1 }), 400, 'INVALID_ARGUMENT', 'height');
    expectError(await api.put('/v1/chain/tip/force', { height: 1.5 }), 400, 'INVALID_ARGUMENT', 'height');
    expectError(await api.put('/v1/chain/tip/force', { height: '7' }), 400, 'INVALID_ARGUMENT', 'height');
    expectError(await api.put('/v1/chain/tip/force', {}), 400, 'INVALID_ARGUMENT', 'height');
    expectError(await api.put('/v1/chain/tip/force', { height: 5, extra: 1 }), 400, 'INVALID_ARGUMENT', 'extra');
    expect((await api.put('/v1/chain/tip/force', { height: 999_999 })).body).toEqual({ height: 999_999 });
    expect((await api.put('/v1/chain/tip/force', { height: 1000 })).body).toEqual({ height: 1000 });
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1000 });
  });

  test('PUT /v1/chain/tip moves forward by at most MAX_TIP_ADVANCE (10) per call; back or further is 400, unchanged', async () => {
    expect((await api.put('/v1/chain/tip', { height: 1000 })).body).toEqual({ height: 1000 });
    expect((await api.put('/v1/chain/tip', { height: 1010 })).body).toEqual({ height: 1010 });
    const far = await api.put('/v1/chain/tip', { height: 1021 });
    expectError(far, 400, 'INVALID_ARGUMENT', 'height');
    expect(far.body.error.details).toMatchObject({ current: 1010, maxAdvance: 10 });
    expectError(await api.put('/v1/chain/tip', { height: 1009 }), 400, 'INVALID_ARGUMENT', 'height');
    expectError(await api.put('/v1/chain/tip', { height: -1 }), 400, 'INVALID_ARGUMENT', 'height');
    expectError(await api.put('/v1/chain/tip', {}), 400, 'INVALID_ARGUMENT', 'height');
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1010 });
    await api.put('/v1/chain/tip/force', { height: 1000 });
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1000 });
  });
});

describe('POST /v1/txs and GET /v1/txs/{txid}', () => {
  test('the golden EF tx: fee 215, sizes 328/368, UTXO hashes, tx round trip', async () => {
    const created = await api.post('/v1/txs', { tx: GOLDEN_EF_HEX });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      txid: GOLDEN_TXID,
      fee: GOLDEN_FEE,
      sizeInBytes: GOLDEN_SIZE,
      extendedSize: GOLDEN_EXTENDED_SIZE,
      external: false,
      records: 1,
    });

    const got = await api.get(`/v1/txs/${GOLDEN_TXID}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      txid: GOLDEN_TXID,
      fee: GOLDEN_FEE,
      sizeInBytes: GOLDEN_SIZE,
      isCoinbase: false,
      unminedSince: 1000,
    });

    const full = await api.get(`/v1/txs/${GOLDEN_TXID}?fields=tx,utxos,extendedSize`);
    expect(full.status).toBe(200);
    expect(full.body.tx).toBe(GOLDEN_EF_HEX);
    expect(full.body.extendedSize).toBe(GOLDEN_EXTENDED_SIZE);
    expect(full.body.utxos).toHaveLength(5);
    expect(full.body.utxos.map((u: { utxoHash: string }) => u.utxoHash)).toEqual(GOLDEN_UTXO_HASHES);
    expect(full.body.utxos[0]).toEqual({ utxoHash: GOLDEN_UTXO_HASHES[0], status: 'UNSPENT' });

    // upper-case txid in the path is the same tx
    expect((await api.get(`/v1/txs/${GOLDEN_TXID.toUpperCase()}`)).status).toBe(200);
  });

  test('a second create of the same tx is TX_EXISTS (409)', async () => {
    const f = rootTx(1);
    await create(f);
    const again = await api.post('/v1/txs', { tx: f.hex });
    const error = expectError(again, 409, 'TX_EXISTS');
    expect(error.details?.txid).toBe(f.txid);
  });

  test('create options: blockHeight, minedBlocks, locked, conflicting', async () => {
    const f = rootTx(1);
    const created = await create(f, {
      blockHeight: 990,
      minedBlocks: [{ blockId: 5, blockHeight: 990, subtreeIdx: 2 }],
      locked: true,
    });
    expect(created).toMatchObject({ txid: f.txid, records: 1, external: false });
    const got = await api.get(`/v1/txs/${f.txid}?fields=blockIDs,blockHeights,subtreeIdxs,locked,unminedSince`);
    expect(got.body).toMatchObject({ blockIDs: [5], blockHeights: [990], subtreeIdxs: [2], locked: true });
    expect(got.body.unminedSince).toBeUndefined();

    const c = rootTx(1);
    await create(c, { conflicting: true });
    expect((await api.get(`/v1/txs/${c.txid}?fields=conflicting`)).body).toEqual({ txid: c.txid, conflicting: true });
  });

  test('isCoinbase: a raw coinbase is accepted; a tx that is not a coinbase is 400 naming isCoinbase, nothing stored', async () => {
    const cb = coinbaseTx(1);
    const created = await api.post('/v1/txs', { tx: cb.hex, isCoinbase: true });
    expect(created.status).toBe(201);
    expect(created.body.txid).toBe(cb.txid);
    const parent = rootTx(1);
    for (const tx of [makeTx({ inputs: [{ parent, vout: 0 }] }), rootTx(1)]) {
      for (const hex of [tx.tx.toHex(), tx.hex]) {
        expectError(await api.post('/v1/txs', { tx: hex, isCoinbase: true }), 400, 'INVALID_ARGUMENT', 'isCoinbase');
      }
      expectError(await api.get(`/v1/txs/${tx.txid}`), 404, 'TX_NOT_FOUND');
    }
  });

  test('GET errors: unknown txid 404, bad txid 400, unknown field 400', async () => {
    const missing = rootTx(1).txid;
    const error = expectError(await api.get(`/v1/txs/${missing}`), 404, 'TX_NOT_FOUND');
    expect(error.details?.txid).toBe(missing);
    expectError(await api.get('/v1/txs/abc'), 400, 'INVALID_ARGUMENT', 'txid');
    expectError(await api.get(`/v1/txs/${'g'.repeat(64)}`), 400, 'INVALID_ARGUMENT', 'txid');
    expectError(await api.get(`/v1/txs/${GOLDEN_TXID}?fields=fee,bogus`), 400, 'INVALID_ARGUMENT', 'fields');
    expectError(await api.get(`/v1/txs/${GOLDEN_TXID}?color=red`), 400, 'INVALID_ARGUMENT', 'color');
  });
});

describe('POST /v1/spends and /v1/unspends, GET /v1/utxos', () => {
  test('spend with an EF tx, idempotent, then a double spend names the first spender', async () => {
    const parent = rootTx(2);
    await create(parent);
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    const spent = await api.post('/v1/spends', { tx: child.hex });
    expect(spent).toMatchObject({ status: 200, body: { spends: [{ txid: parent.txid, vout: 0, status: 'OK' }] } });
    expect((await api.post('/v1/spends', { tx: child.hex })).status).toBe(200);

    expect(await utxoStatus(parent.txid, 0)).toEqual({ status: 'SPENT', spendingTxid: child.txid, vin: 0 });
    expect(await utxoStatus(parent.txid, 1)).toEqual({ status: 'OK' });

    const rival = makeTx({ inputs: [{ parent, vout: 0 }], outputs: [400, 500] });
    const error = expectError(await api.post('/v1/spends', { tx: rival.hex }), 409, 'SPENT');
    expect(error.details).toMatchObject({ txid: parent.txid, vout: 0, spendingTxid: child.txid, vin: 0 });
    expect(error.details?.spends).toEqual([
      expect.objectContaining({
        txid: parent.txid,
        vout: 0,
        status: 'ERROR',
        code: 'SPENT',
        spendingTxid: child.txid,
        vin: 0,
      }),
    ]);
    const got = await api.get(`/v1/txs/${parent.txid}?fields=utxos`);
    expect(got.body.utxos[0]).toEqual({
      utxoHash: utxoHashOf(parent, 0),
      status: 'SPENT',
      spendingTxid: child.txid,
      vin: 0,
    });
  });

  test('a multi-input spend with one failing input is rolled back', async () => {
    const a = rootTx(1);
    const b = rootTx(1);
    await create(a);
    await create(b);
    const first = makeTx({ inputs: [{ parent: b, vout: 0 }] });
    expect((await api.post('/v1/spends', { tx: first.hex })).status).toBe(200);

    const both = makeTx({
      inputs: [
        { parent: a, vout: 0 },
        { parent: b, vout: 0 },
      ],
    });
    const error = expectError(await api.post('/v1/spends', { tx: both.hex }), 409, 'SPENT');
    const spends = error.details?.spends as { txid: string; status: string; code?: string; spendingTxid?: string }[];
    expect(spends).toHaveLength(2);
    expect(spends[0]).toMatchObject({ txid: a.txid, vout: 0, status: 'ROLLED_BACK' });
    expect(spends[1]).toMatchObject({
      txid: b.txid,
      vout: 0,
      status: 'ERROR',
      code: 'SPENT',
      spendingTxid: first.txid,
    });
    expect(await utxoStatus(a.txid, 0)).toEqual({ status: 'OK' });
    expect(await utxoStatus(b.txid, 0)).toMatchObject({ status: 'SPENT', spendingTxid: first.txid });
  });

  test('20 concurrent spenders of one output: exactly one wins', async () => {
    const parent = rootTx(1);
    await create(parent);
    const spenders = Array.from({ length: 20 }, (_, i) =>
      makeTx({ inputs: [{ parent, vout: 0 }], outputs: [100 + i] }),
    );
    const replies = await Promise.all(spenders.map((s) => api.post('/v1/spends', { tx: s.hex })));
    const winners = replies.map((r, i) => ({ r, s: spenders[i] })).filter(({ r }) => r.status === 200);
    expect(winners).toHaveLength(1);
    const winner = winners[0].s.txid;
    for (const r of replies.filter((x) => x.status !== 200)) {
      const error = expectError(r, 409, 'SPENT');
      expect(error.details?.spendingTxid).toBe(winner);
    }
    expect(await utxoStatus(parent.txid, 0)).toEqual({ status: 'SPENT', spendingTxid: winner, vin: 0 });
  });

  test('explicit spends, unspend, hash mismatch, missing parent, validation', async () => {
    const parent = rootTx(2);
    await create(parent);
    const spender = rootTx(1).txid;
    const item = spendItem(parent, 1, spender, 3);
    expect((await api.post('/v1/spends', { spends: [item] })).body).toEqual({
      spends: [{ txid: parent.txid, vout: 1, status: 'OK' }],
    });
    expect(await utxoStatus(parent.txid, 1)).toEqual({ status: 'SPENT', spendingTxid: spender, vin: 3 });

    // unspend: only the expected spender is cleared
    const other = { ...item, spendingTxid: rootTx(1).txid };
    expect((await api.post('/v1/unspends', { spends: [other] })).status).toBe(200);
    expect((await utxoStatus(parent.txid, 1)).status).toBe('SPENT');
    expect(await api.post('/v1/unspends', { spends: [item] })).toMatchObject({ status: 200, body: { status: 'OK' } });
    expect(await utxoStatus(parent.txid, 1)).toEqual({ status: 'OK' });

    const wrongHash = { ...item, utxoHash: utxoHashOf(parent, 0) };
    expectError(await api.post('/v1/spends', { spends: [wrongHash] }), 409, 'UTXO_HASH_MISMATCH');

    const orphan = rootTx(1);
    const missing = await api.post('/v1/spends', { spends: [spendItem(orphan, 0, spender)] });
    const error = expectError(missing, 404, 'TX_NOT_FOUND');
    expect(error.details?.spends).toEqual([expect.objectContaining({ txid: orphan.txid, status: 'ERROR' })]);
    expectError(await api.post('/v1/unspends', { spends: [spendItem(orphan, 0, spender)] }), 404, 'TX_NOT_FOUND');

    expectError(await api.post('/v1/spends', {}), 400, 'INVALID_ARGUMENT', 'tx');
    expectError(
      await api.post('/v1/spends', { tx: makeTx({ inputs: [{ parent, vout: 0 }] }).hex, spends: [item] }),
      400,
      'INVALID_ARGUMENT',
      'spends',
    );
    expectError(
      await api.post('/v1/spends', { spends: [{ ...item, vout: -1 }] }),
      400,
      'INVALID_ARGUMENT',
      'spends[0].vout',
    );
    expectError(
      await api.post('/v1/spends', { spends: [{ ...item, spendingTxid: 'xyz' }] }),
      400,
      'INVALID_ARGUMENT',
      'spends[0].spendingTxid',
    );
    expectError(await api.post('/v1/spends', { spends: [] }), 400, 'INVALID_ARGUMENT', 'spends');
    expectError(
      await api.post('/v1/unspends', { spends: [{ ...item, vin: 1.5 }] }),
      400,
      'INVALID_ARGUMENT',
      'spends[0].vin',
    );
    // a raw tx cannot spend (the UTXO hashes need the EF prevouts)
    const raw = makeTx({ inputs: [{ parent, vout: 0 }] }).tx.toHex();
    expectError(await api.post('/v1/spends', { tx: raw }), 400, 'INVALID_ARGUMENT', 'tx');
    expect(await utxoStatus(parent.txid, 0)).toEqual({ status: 'OK' });
  });

  test('coinbase maturity: spendable from tip + 1 = creation height + 100', async () => {
    const cb = coinbaseTx(1);
    await create(cb, { isCoinbase: true, blockHeight: 1000 });
    const spend = makeTx({ inputs: [{ parent: cb, vout: 0 }] });
    expect(await utxoStatus(cb.txid, 0)).toEqual({ status: 'IMMATURE', spendableAt: 1100 });

    // a request's blockHeight may not stand in for a tip more than MAX_TIP_ADVANCE ahead (security review #2): 400
    // naming blockHeight on the single and the batch route, the coinbase still immature, the tip unchanged
    for (const blockHeight of [1098, 4294967294]) {
      const single = expectError(
        await api.post('/v1/spends', { tx: spend.hex, blockHeight }),
        400,
        'INVALID_ARGUMENT',
        'blockHeight',
      );
      expect(single.details).toMatchObject({ current: 1000, maxAdvance: 10 });
      expectError(
        await api.post('/v1/batch/spends', { txs: [spend.hex], blockHeight }),
        400,
        'INVALID_ARGUMENT',
        'blockHeight',
      );
    }
    expect(await utxoStatus(cb.txid, 0)).toEqual({ status: 'IMMATURE', spendableAt: 1100 });
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1000 });
    // at tip 1098 the spend is evaluated at 1099 < 1100
    await api.put('/v1/chain/tip/force', { height: 1098 });
    expectError(await api.post('/v1/spends', { tx: spend.hex, blockHeight: 1098 }), 409, 'COINBASE_IMMATURE');
    expectError(await api.post('/v1/spends', { tx: spend.hex }), 409, 'COINBASE_IMMATURE');
    await api.put('/v1/chain/tip/force', { height: 1099 });
    expect(await utxoStatus(cb.txid, 0)).toEqual({ status: 'OK', spendableAt: 1100 });
    expect((await api.post('/v1/spends', { tx: spend.hex })).status).toBe(200);
    await api.put('/v1/chain/tip/force', { height: 1000 });
  });

  test('GET /v1/utxos validation and NOT_FOUND', async () => {
    const parent = rootTx(1);
    await create(parent);
    expect(await utxoStatus(rootTx(1).txid, 0)).toEqual({ status: 'NOT_FOUND' });
    expect(await utxoStatus(parent.txid, 7)).toEqual({ status: 'NOT_FOUND' });
    const ok = await api.get(`/v1/utxos/${parent.txid}/0?utxoHash=${utxoHashOf(parent, 0)}`);
    expect(ok.body).toEqual({ status: 'OK' });
    const wrong = await api.get(`/v1/utxos/${parent.txid}/0?utxoHash=${'0'.repeat(64)}`);
    expect(wrong.body).toEqual({ status: 'NOT_FOUND' });
    expectError(await api.get(`/v1/utxos/${parent.txid}/x`), 400, 'INVALID_ARGUMENT', 'vout');
    expectError(await api.get(`/v1/utxos/${parent.txid}/-1`), 400, 'INVALID_ARGUMENT', 'vout');
    expectError(await api.get(`/v1/utxos/${parent.txid}/99999999999`), 400, 'INVALID_ARGUMENT', 'vout');
    expectError(await api.get(`/v1/utxos/${parent.txid.slice(2)}/0`), 400, 'INVALID_ARGUMENT', 'txid');
    expectError(await api.get(`/v1/utxos/${parent.txid}/0?utxoHash=12`), 400, 'INVALID_ARGUMENT', 'utxoHash');
  });
});

describe('POST /v1/mined', () => {
  test('adds a block, raises the tip, is idempotent, unsets', async () => {
    const f = rootTx(1);
    await create(f);
    const mined = await api.post('/v1/mined', { txids: [f.txid], blockId: 7, blockHeight: 1001, subtreeIdx: 3 });
    expect(mined).toMatchObject({ status: 200, body: { blockIds: { [f.txid]: [7] } } });
    expect(
      (await api.post('/v1/mined', { txids: [f.txid], blockId: 7, blockHeight: 1001, subtreeIdx: 3 })).body,
    ).toEqual({ blockIds: { [f.txid]: [7] } });
    const got = await api.get(`/v1/txs/${f.txid}`);
    expect(got.body).toMatchObject({ blockIDs: [7], blockHeights: [1001], subtreeIdxs: [3] });
    expect(got.body.unminedSince).toBeUndefined();
    expect((await api.get('/v1/chain/tip')).body).toEqual({ height: 1001 });

    const unset = await api.post('/v1/mined', {
      txids: [f.txid],
      blockId: 7,
      blockHeight: 1001,
      subtreeIdx: 3,
      unsetMined: true,
    });
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
    expectError(
      await api.post('/v1/mined', { txids: [missing], ...base, blockId: -1 }),
      400,
      'INVALID_ARGUMENT',
      'blockId',
    );
    expectError(
      await api.post('/v1/mined', { txids: [missing], ...base, subtreeIdx: 0.5 }),
      400,
      'INVALID_ARGUMENT',
      'subtreeIdx',
    );
    expectError(await api.post('/v1/mined', { txids: [], ...base }), 400, 'INVALID_ARGUMENT', 'txids');
    expectError(await api.post('/v1/mined', { txids: ['ab'], ...base }), 400, 'INVALID_ARGUMENT', 'txids[0]');
    expectError(
      await api.post('/v1/mined', { txids: [missing], blockId: 1, subtreeIdx: 0 }),
      400,
      'INVALID_ARGUMENT',
      'blockHeight',
    );
    expectError(
      await api.post('/v1/mined', { txids: [missing], ...base, onLongestChain: 'yes' }),
      400,
      'INVALID_ARGUMENT',
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
    expectError(
      await api.post('/v1/conflicting', { txids: [parent.txid], conflicting: 'true' }),
      400,
      'INVALID_ARGUMENT',
      'conflicting',
    );
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

    expectError(
      await api.post('/v1/freeze', { utxos: [{ ...u1, utxoHash: 'ab' }] }),
      400,
      'INVALID_ARGUMENT',
      'utxos[0].utxoHash',
    );
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
    expectError(
      await api.post('/v1/preserve', { txids: [f.txid], untilHeight: -5 }),
      400,
      'INVALID_ARGUMENT',
      'untilHeight',
    );
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
