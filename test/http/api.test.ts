/**
 * Every route of docs/api.md through the local server, with success and each documented error: health and the chain
 * tip, create and get, spends, unspends and UTXOs (the mined, admin and output rules: api-admin.test.ts).
 */
import './quiet-logs';
import {
  GOLDEN_CREATED,
  GOLDEN_EF_HEX,
  GOLDEN_EXTENDED_SIZE,
  GOLDEN_FEE,
  GOLDEN_SIZE,
  GOLDEN_TXID,
  GOLDEN_UTXO_HASHES,
} from '../fixtures/golden-tx';
import { coinbaseTx, makeTx, rootTx, spendItem, utxoHashOf } from '../fixtures/txs';
import { expectBadArgument, expectError, useApi } from './harness';

const api = useApi();

const { create, utxoStatus } = api;

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
    expect(created.body).toEqual({ ...GOLDEN_CREATED, external: false, records: 1 });

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
    expectBadArgument(
      await api.post('/v1/spends', { tx: makeTx({ inputs: [{ parent, vout: 0 }] }).hex, spends: [item] }),
      'spends',
    );
    expectBadArgument(await api.post('/v1/spends', { spends: [{ ...item, vout: -1 }] }), 'spends[0].vout');
    expectBadArgument(
      await api.post('/v1/spends', { spends: [{ ...item, spendingTxid: 'xyz' }] }),
      'spends[0].spendingTxid',
    );
    expectError(await api.post('/v1/spends', { spends: [] }), 400, 'INVALID_ARGUMENT', 'spends');
    expectBadArgument(await api.post('/v1/unspends', { spends: [{ ...item, vin: 1.5 }] }), 'spends[0].vin');
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
      const single = expectBadArgument(await api.post('/v1/spends', { tx: spend.hex, blockHeight }), 'blockHeight');
      expect(single.details).toMatchObject({ current: 1000, maxAdvance: 10 });
      expectBadArgument(await api.post('/v1/batch/spends', { txs: [spend.hex], blockHeight }), 'blockHeight');
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
