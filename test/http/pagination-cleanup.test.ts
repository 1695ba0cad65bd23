/**
 * Multi-record transactions with a small UTXO_BATCH_SIZE, and a full delete-at-height cycle through
 * POST /v1/cleanup (the first timeline of docs/cleanup.md: R = 288, child mined at 1001, kept at 1288, deleted at 1289).
 */
import './quiet-logs';
import { makeTx, rootTx, spendItem, utxoHashOf } from '../fixtures/txs';
import { expectError, startApi, type Api } from './harness';

let api: Api;

beforeAll(async () => {
  api = await startApi({ UTXO_BATCH_SIZE: '2' });
});

afterAll(async () => {
  await api?.close();
});

async function tip(height: number) {
  expect((await api.put('/v1/chain/tip/force', { height })).status).toBe(200);
}

describe('pagination (UTXO_BATCH_SIZE=2)', () => {
  test('a 5-output tx has 3 records; utxos, spends and lookups span them', async () => {
    await tip(100);
    const parent = rootTx(5);
    const created = await api.post('/v1/txs', { tx: parent.hex });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ txid: parent.txid, records: 3, external: true });

    const full = await api.get(`/v1/txs/${parent.txid}?fields=utxos,tx,totalExtraRecs,totalUtxos`);
    expect(full.body.totalExtraRecs).toBe(2);
    expect(full.body.totalUtxos).toBe(5);
    expect(full.body.tx).toBe(parent.hex);
    expect(full.body.utxos.map((u: { utxoHash: string }) => u.utxoHash)).toEqual(
      [0, 1, 2, 3, 4].map((v) => utxoHashOf(parent, v)),
    );

    // one spending tx across all three records
    const spender = makeTx({
      inputs: [
        { parent, vout: 4 },
        { parent, vout: 2 },
        { parent, vout: 0 },
      ],
    });
    expect((await api.post('/v1/spends', { tx: spender.hex })).body.spends).toHaveLength(3);
    for (const [vout, vin] of [
      [4, 0],
      [2, 1],
      [0, 2],
    ]) {
      expect((await api.get(`/v1/utxos/${parent.txid}/${vout}`)).body).toEqual({
        status: 'SPENT',
        spendingTxid: spender.txid,
        vin,
      });
    }
    expect((await api.get(`/v1/utxos/${parent.txid}/3`)).body).toEqual({ status: 'OK' });
    expect((await api.get(`/v1/utxos/${parent.txid}/5`)).body).toEqual({ status: 'NOT_FOUND' });

    // a failing input in a pagination record rolls back inputs in the other records
    const rival = makeTx({
      inputs: [
        { parent, vout: 3 },
        { parent, vout: 1 },
        { parent, vout: 4 },
      ],
    });
    const error = expectError(await api.post('/v1/spends', { tx: rival.hex }), 409, 'SPENT');
    expect(error.details?.spendingTxid).toBe(spender.txid);
    expect((await api.get(`/v1/utxos/${parent.txid}/3`)).body).toEqual({ status: 'OK' });
    expect((await api.get(`/v1/utxos/${parent.txid}/1`)).body).toEqual({ status: 'OK' });

    // freeze and lock reach pagination records
    const u3 = { txid: parent.txid, vout: 3, utxoHash: utxoHashOf(parent, 3) };
    expect((await api.post('/v1/freeze', { utxos: [u3] })).status).toBe(200);
    expect((await api.get(`/v1/utxos/${parent.txid}/3`)).body).toEqual({ status: 'FROZEN' });
    expect((await api.post('/v1/unfreeze', { utxos: [u3] })).status).toBe(200);
    expect((await api.post('/v1/locked', { txids: [parent.txid], locked: true })).status).toBe(200);
    expectError(await api.post('/v1/spends', { spends: [spendItem(parent, 3, rootTx(1).txid)] }), 409, 'LOCKED');
    expect((await api.post('/v1/locked', { txids: [parent.txid], locked: false })).status).toBe(200);

    // delete removes every record
    expect((await api.del(`/v1/txs/${parent.txid}`)).status).toBe(204);
    expectError(await api.get(`/v1/txs/${parent.txid}`), 404, 'TX_NOT_FOUND');
    expect((await api.get(`/v1/utxos/${parent.txid}/3`)).body).toEqual({ status: 'NOT_FOUND' });
  });
});

describe('POST /v1/cleanup', () => {
  test('a full DAH cycle: kept while the child is unstable, then deleted', async () => {
    const parent = rootTx(1);
    await tip(899);
    expect((await api.post('/v1/txs', { tx: parent.hex })).status).toBe(201);
    const mined = { blockId: 90, blockHeight: 900, subtreeIdx: 0 };
    expect((await api.post('/v1/mined', { txids: [parent.txid], ...mined })).status).toBe(200);
    await tip(999);
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    expect((await api.post('/v1/txs', { tx: child.hex })).status).toBe(201);
    // evaluated at tip + 1 = 1000: DAH = 1000 + 288
    expect((await api.post('/v1/spends', { tx: child.hex })).status).toBe(200);
    expect((await api.get(`/v1/txs/${parent.txid}?fields=deleteAtHeight`)).body.deleteAtHeight).toBe(1288);

    await tip(1000);
    expect(
      (await api.post('/v1/mined', { txids: [child.txid], blockId: 101, blockHeight: 1001, subtreeIdx: 0 })).status,
    ).toBe(200);

    // not yet a candidate
    await tip(1287);
    expect((await api.post('/v1/cleanup')).body).toMatchObject({ tip: 1287, deleted: 0, errors: 0 });
    // a candidate, but the child (mined at 1001) is not buried under R = 288 blocks yet
    await tip(1288);
    const kept = await api.post('/v1/cleanup', {});
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ tip: 1288, deleted: 0, kept: { child_unstable: 1 }, errors: 0, more: false });
    expect((await api.get(`/v1/txs/${parent.txid}`)).status).toBe(200);

    await tip(1289);
    const deleted = await api.post('/v1/cleanup', { maxSeconds: 10 });
    expect(deleted.body).toMatchObject({ tip: 1289, deleted: 1, errors: 0 });
    expect(typeof deleted.body.durationMs).toBe('number');
    expectError(await api.get(`/v1/txs/${parent.txid}`), 404, 'TX_NOT_FOUND');
    expect((await api.get(`/v1/txs/${child.txid}`)).status).toBe(200);

    // the child's spend stays valid after its parent is gone (idempotent re-spend)
    expect((await api.post('/v1/spends', { tx: child.hex })).status).toBe(200);
  });

  test('validation: maxSeconds positive and at most 900; no unknown fields', async () => {
    expectError(await api.post('/v1/cleanup', { maxSeconds: 0 }), 400, 'INVALID_ARGUMENT', 'maxSeconds');
    expectError(await api.post('/v1/cleanup', { maxSeconds: -1 }), 400, 'INVALID_ARGUMENT', 'maxSeconds');
    expectError(await api.post('/v1/cleanup', { maxSeconds: 901 }), 400, 'INVALID_ARGUMENT', 'maxSeconds');
    expectError(await api.post('/v1/cleanup', { maxSeconds: 'x' }), 400, 'INVALID_ARGUMENT', 'maxSeconds');
    expectError(await api.post('/v1/cleanup', { force: true }), 400, 'INVALID_ARGUMENT', 'force');
    expectError(await api.raw('POST', '/v1/cleanup', '{'), 400, 'INVALID_ARGUMENT', 'body');
  });
});
