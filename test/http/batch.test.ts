/**
 * The batch routes (POST /v1/batch/...) through the local server: one result per item, in order, each the status,
 * code and details its single request would have answered; a malformed envelope or more than MAX_BATCH_ITEMS items
 * is a 400 naming the field; a malformed item fails alone and stores nothing.
 */
import './quiet-logs';
import { makeTx, mixedSpends, rootTx, utxoHashOf, type Fixture } from '../fixtures/txs';
import { expectBadArgument, expectError, startApi, type Api } from './harness';

let api: Api;
const MINED = [{ blockId: 9, blockHeight: 900, subtreeIdx: 0 }];

beforeAll(async () => {
  api = await startApi({ MAX_BATCH_ITEMS: '5' });
  expect((await api.put('/v1/chain/tip/force', { height: 1000 })).status).toBe(200);
});

afterAll(async () => {
  await api?.close();
});

async function roots(n: number, outputs = 1): Promise<Fixture[]> {
  const fs = Array.from({ length: n }, () => rootTx(outputs));
  const reply = await api.post('/v1/batch/txs', { txs: fs.map((f) => ({ tx: f.hex, minedBlocks: MINED })) });
  expect(reply.body.results.map((r: { status: number }) => r.status)).toEqual(fs.map(() => 201));
  return fs;
}

const statuses = (reply: { body: { results: { status: number }[] } }) => reply.body.results.map((r) => r.status);

describe('POST /v1/batch/txs', () => {
  test('each tx as POST /v1/txs would answer it, in order', async () => {
    const [a, b] = [rootTx(2), rootTx(1)];
    expect((await api.post('/v1/txs', { tx: b.hex })).status).toBe(201);
    const reply = await api.post('/v1/batch/txs', {
      txs: [{ tx: a.hex }, { tx: b.hex }, { tx: 'xyz' }, { tx: a.hex, locked: 'yes' }, { tx: a.hex }],
    });
    expect(reply.status).toBe(200);
    expect(statuses(reply)).toEqual([201, 409, 400, 400, 409]);
    expect(reply.body.results[0]).toEqual({
      status: 201,
      result: expect.objectContaining({ txid: a.txid, records: 1, external: false }),
    });
    expect(reply.body.results[1].error).toMatchObject({ code: 'TX_EXISTS', details: { txid: b.txid } });
    expect(reply.body.results[2].error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'tx' } });
    expect(reply.body.results[3].error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'locked' } });
    expect(reply.body.results[4].error.code).toBe('TX_EXISTS'); // the second copy in one batch
    expect((await api.get(`/v1/txs/${a.txid}`)).status).toBe(200);
  });

  test('brief: a created tx is answered by its status alone, a failed one in full; brief must be a boolean', async () => {
    const [a, b] = [rootTx(1), rootTx(1)];
    expect((await api.post('/v1/txs', { tx: b.hex })).status).toBe(201);
    const reply = await api.post('/v1/batch/txs', { txs: [{ tx: a.hex }, { tx: b.hex }, { tx: 'xyz' }], brief: true });
    expect(reply.status).toBe(200);
    expect(reply.body.results[0]).toEqual({ status: 201 });
    expect(reply.body.results[1]).toEqual({ status: 409, error: expect.objectContaining({ code: 'TX_EXISTS' }) });
    expect(reply.body.results[2].error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'tx' } });
    expect((await api.get(`/v1/txs/${a.txid}`)).status).toBe(200);
    // brief: false is the full answer; anything but a boolean is the request's 400, nothing stored
    const c = rootTx(1);
    const full = await api.post('/v1/batch/txs', { txs: [{ tx: c.hex }], brief: false });
    expect(full.body.results[0]).toEqual({ status: 201, result: expect.objectContaining({ txid: c.txid }) });
    const d = rootTx(1);
    expectBadArgument(await api.post('/v1/batch/txs', { txs: [{ tx: d.hex }], brief: 'yes' }), 'brief');
    expect((await api.get(`/v1/txs/${d.txid}`)).status).toBe(404);
  });

  test('a malformed envelope or too many items is a 400 naming the field; nothing is stored', async () => {
    const f = rootTx();
    expectError(await api.post('/v1/batch/txs', { txs: [] }), 400, 'INVALID_ARGUMENT', 'txs');
    expectError(await api.post('/v1/batch/txs', { txs: f.hex }), 400, 'INVALID_ARGUMENT', 'txs');
    expectError(await api.post('/v1/batch/txs', {}), 400, 'INVALID_ARGUMENT', 'txs');
    expectError(await api.post('/v1/batch/txs', { txs: [{ tx: f.hex }], x: 1 }), 400, 'INVALID_ARGUMENT', 'x');
    const six = Array.from({ length: 6 }, () => ({ tx: f.hex }));
    const err = expectError(await api.post('/v1/batch/txs', { txs: six }), 400, 'INVALID_ARGUMENT', 'txs');
    expect(err.message).toMatch(/at most 5/);
    expect((await api.get(`/v1/txs/${f.txid}`)).status).toBe(404);
  });
});

describe('POST /v1/batch/spends', () => {
  test('a malformed tx fails alone with exactly the error POST /v1/spends answers for it', async () => {
    const bad = [123, 'abc', '', null, 'zz'];
    const reply = await api.post('/v1/batch/spends', { txs: bad });
    expect(reply.status).toBe(200);
    for (const [i, tx] of bad.entries()) {
      const single = await api.post('/v1/spends', { tx });
      expect(single.status).toBe(400);
      expect(reply.body.results[i]).toEqual({ status: 400, error: single.body.error });
    }
  });

  test('each tx all or nothing; the same output twice: the earlier wins; per-item errors with details.spends', async () => {
    const [p, q, r] = await roots(3);
    const { first, second, ghost, ok } = mixedSpends(p, q, r);
    const reply = await api.post('/v1/batch/spends', { txs: [first.hex, second.hex, ghost.hex, 'zz', ok.hex] });
    expect(reply.status).toBe(200);
    expect(statuses(reply)).toEqual([200, 409, 404, 400, 200]);
    expect(reply.body.results[0]).toEqual({
      status: 200,
      result: { spends: [{ txid: p.txid, vout: 0, status: 'OK' }] },
    });
    expect(reply.body.results[1].error).toMatchObject({
      code: 'SPENT',
      details: {
        spends: [
          { txid: q.txid, vout: 0, status: 'ROLLED_BACK' },
          { txid: p.txid, vout: 0, status: 'ERROR', code: 'SPENT', spendingTxid: first.txid },
        ],
      },
    });
    expect(reply.body.results[2].error.code).toBe('TX_NOT_FOUND');
    expect(reply.body.results[3].error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'tx' } });
    expect((await api.get(`/v1/utxos/${q.txid}/0`)).body).toEqual({ status: 'OK' });
    // the single request answers the same
    const single = await api.post('/v1/spends', { tx: second.hex });
    expect(single.status).toBe(409);
    expect(single.body.error.code).toBe('SPENT');
  });

  test('brief: a tx whose inputs were all spent is answered by its status alone; a failed tx lists each input', async () => {
    const [p, q] = await roots(2);
    const ok = makeTx({ inputs: [{ parent: p, vout: 0 }] });
    const loser = makeTx({
      inputs: [
        { parent: q, vout: 0 },
        { parent: p, vout: 0 },
      ],
    });
    const reply = await api.post('/v1/batch/spends', { txs: [ok.hex, loser.hex], brief: true });
    expect(reply.status).toBe(200);
    expect(reply.body.results[0]).toEqual({ status: 200 });
    expect(reply.body.results[1].error).toMatchObject({
      code: 'SPENT',
      details: {
        spends: [
          { txid: q.txid, status: 'ROLLED_BACK' },
          { txid: p.txid, status: 'ERROR' },
        ],
      },
    });
    expect((await api.get(`/v1/utxos/${p.txid}/0`)).body).toMatchObject({ status: 'SPENT', spendingTxid: ok.txid });
    expectBadArgument(await api.post('/v1/batch/spends', { txs: [loser.hex], brief: 1 }), 'brief');
  });

  test('batch options apply to every tx; envelope errors name the field', async () => {
    const [p] = await roots(1);
    const tx = makeTx({ inputs: [{ parent: p, vout: 0 }] });
    await api.post('/v1/locked', { txids: [p.txid], locked: true });
    expect(statuses(await api.post('/v1/batch/spends', { txs: [tx.hex] }))).toEqual([409]);
    expect(statuses(await api.post('/v1/batch/spends', { txs: [tx.hex], ignoreLocked: true }))).toEqual([200]);
    expectBadArgument(await api.post('/v1/batch/spends', { txs: [tx.hex], ignoreLocked: 1 }), 'ignoreLocked');
    expectError(await api.post('/v1/batch/spends', { txs: [] }), 400, 'INVALID_ARGUMENT', 'txs');
    const six = Array.from({ length: 6 }, () => tx.hex);
    expectError(await api.post('/v1/batch/spends', { txs: six }), 400, 'INVALID_ARGUMENT', 'txs');
  });
});

describe('POST /v1/batch/get, /v1/batch/outputs, /v1/batch/utxos', () => {
  test('get: each txid as GET /v1/txs/{txid}', async () => {
    const [a] = await roots(1, 2);
    const missing = rootTx();
    const reply = await api.post('/v1/batch/get', { txids: [a.txid, missing.txid, 'bad'], fields: ['fee', 'utxos'] });
    expect(statuses(reply)).toEqual([200, 404, 400]);
    expect(reply.body.results[0].result).toEqual((await api.get(`/v1/txs/${a.txid}?fields=fee,utxos`)).body);
    expect(reply.body.results[2].error.details.field).toBe('txid');
    expectBadArgument(await api.post('/v1/batch/get', { txids: [a.txid], fields: ['nope'] }), 'fields[0]');
    expectError(await api.post('/v1/batch/get', { txids: Array(6).fill(a.txid) }), 400, 'INVALID_ARGUMENT', 'txids');
  });

  test('outputs: satoshis and locking script per outpoint', async () => {
    const [a] = await roots(1, 2);
    const reply = await api.post('/v1/batch/outputs', {
      outpoints: [
        { txid: a.txid, vout: 1 },
        { txid: a.txid, vout: 2 },
        { txid: rootTx().txid, vout: 0 },
        { txid: a.txid },
      ],
    });
    expect(statuses(reply)).toEqual([200, 404, 404, 400]);
    expect(reply.body.results[0].result).toEqual({ txid: a.txid, vout: 1, satoshis: 1001, lockingScript: '51' });
    expect(reply.body.results[1].error.code).toBe('UTXO_NOT_FOUND');
    expect(reply.body.results[3].error.details.field).toBe('vout');
    expectError(await api.post('/v1/batch/outputs', { outpoints: 'x' }), 400, 'INVALID_ARGUMENT', 'outpoints');
  });

  test('utxos: each output as GET /v1/utxos/{txid}/{vout}', async () => {
    const [a] = await roots(1, 2);
    await api.post('/v1/spends', { tx: makeTx({ inputs: [{ parent: a, vout: 1 }] }).hex });
    const reply = await api.post('/v1/batch/utxos', {
      utxos: [
        { txid: a.txid, vout: 0, utxoHash: utxoHashOf(a, 0) },
        { txid: a.txid, vout: 1 },
        { txid: a.txid, vout: 0, utxoHash: 'zz' },
      ],
    });
    expect(statuses(reply)).toEqual([200, 200, 400]);
    expect(reply.body.results[0].result).toEqual({ status: 'OK' });
    expect(reply.body.results[1].result).toEqual((await api.get(`/v1/utxos/${a.txid}/1`)).body);
    expect(reply.body.results[2].error.details.field).toBe('utxoHash');
    expectError(await api.post('/v1/batch/utxos', { utxos: [] }), 400, 'INVALID_ARGUMENT', 'utxos');
  });
});
