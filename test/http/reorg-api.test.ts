/**
 * The reorg routes through the local server, with success and each documented error: counter-conflicting txs,
 * conflicting children, marking on the longest chain, double-spend resolution, unspend with flagAsLocked and the
 * unmined iteration.
 */
import './quiet-logs';
import { makeTx, rootTx, spendItem, type Fixture } from '../fixtures/txs';
import { expectBadArgument, expectError, useApi } from './harness';

const api = useApi();

const MINED = { minedBlocks: [{ blockId: 9, blockHeight: 900, subtreeIdx: 0 }] };

async function create(f: Fixture, extra: Record<string, unknown> = {}): Promise<Fixture> {
  const reply = await api.post('/v1/txs', { tx: f.hex, ...extra });
  expect(reply.status).toBe(201);
  return f;
}

async function spent(f: Fixture): Promise<Fixture> {
  await create(f);
  expect((await api.post('/v1/spends', { tx: f.hex })).status).toBe(200);
  return f;
}

/** A mined parent, the first spender of its output 0 (spent) and a conflicting double spend of it. */
async function doubleSpend() {
  const parent = await create(rootTx([100_000, 100_000]), MINED);
  const first = await spent(makeTx({ inputs: [{ parent, vout: 0 }], outputs: [1000] }));
  const child = await spent(makeTx({ inputs: [{ parent: first, vout: 0 }], outputs: [100] }));
  const second = await create(
    makeTx({
      inputs: [
        { parent, vout: 0 },
        { parent, vout: 1 },
      ],
      outputs: [1000],
    }),
    { conflicting: true },
  );
  return { parent, first, child, second };
}

const missing = () => rootTx().txid;

describe('GET /v1/txs/{txid}/counter-conflicting and /conflicting-children', () => {
  test('200 with the txids', async () => {
    const { parent, first, second } = await doubleSpend();
    const counter = await api.get(`/v1/txs/${second.txid}/counter-conflicting`);
    expect(counter).toMatchObject({ status: 200, body: { txid: second.txid, counterConflicting: [first.txid] } });
    const children = await api.get(`/v1/txs/${parent.txid}/conflicting-children`);
    expect(children).toMatchObject({ status: 200, body: { txid: parent.txid, conflictingChildren: [second.txid] } });
  });

  test('400 for a bad txid, 404 for a missing tx', async () => {
    for (const view of ['counter-conflicting', 'conflicting-children']) {
      expectError(await api.get(`/v1/txs/xyz/${view}`), 400, 'INVALID_ARGUMENT', 'txid');
      expectError(await api.get(`/v1/txs/${missing()}/${view}`), 404, 'TX_NOT_FOUND');
    }
  });
});

describe('POST /v1/longest-chain', () => {
  test('200: off sets unminedSince, blocks kept; on clears it', async () => {
    const p = await create(rootTx(), MINED);
    expect((await api.post('/v1/longest-chain', { txids: [p.txid], onLongestChain: false })).status).toBe(200);
    expect((await api.get(`/v1/txs/${p.txid}?fields=unminedSince,blockIDs`)).body).toEqual({
      txid: p.txid,
      unminedSince: 1000,
      blockIDs: [9],
    });
    const on = await api.post('/v1/longest-chain', { txids: [p.txid], onLongestChain: true });
    expect(on).toMatchObject({ status: 200, body: { status: 'OK' } });
    expect((await api.get(`/v1/txs/${p.txid}?fields=unminedSince`)).body).toEqual({ txid: p.txid });
  });

  test('400 for bad input, 404 for a missing tx', async () => {
    const p = await create(rootTx(), MINED);
    expectError(await api.post('/v1/longest-chain', { txids: [p.txid] }), 400, 'INVALID_ARGUMENT', 'onLongestChain');
    expectError(await api.post('/v1/longest-chain', { txids: [], onLongestChain: true }), 400, 'INVALID_ARGUMENT');
    expectBadArgument(await api.post('/v1/longest-chain', { txids: [p.txid], onLongestChain: 1 }), 'onLongestChain');
    expectError(
      await api.post('/v1/longest-chain', { txids: [missing()], onLongestChain: false }),
      404,
      'TX_NOT_FOUND',
    );
  });
});

describe('POST /v1/conflicting/resolve', () => {
  test('200: the winner takes the output, the loser and its child become conflicting', async () => {
    const { parent, first, child, second } = await doubleSpend();
    const reply = await api.post('/v1/conflicting/resolve', { txids: [second.txid] });
    expect(reply.status).toBe(200);
    expect(reply.body.losingTxids).toEqual([first.txid]);
    expect([...reply.body.markedConflicting].sort()).toEqual([first.txid, child.txid].sort());
    for (const vout of [0, 1]) {
      expect((await api.get(`/v1/utxos/${parent.txid}/${vout}`)).body).toMatchObject({
        status: 'SPENT',
        spendingTxid: second.txid,
      });
    }
    expect((await api.get(`/v1/txs/${first.txid}?fields=conflicting`)).body.conflicting).toBe(true);
    // the same request again: the same answer
    expect((await api.post('/v1/conflicting/resolve', { txids: [second.txid] })).body).toEqual(reply.body);
  });

  test('400 (bad input, not conflicting), 404 (missing), 409 (frozen output)', async () => {
    expectError(await api.post('/v1/conflicting/resolve', { txids: ['x'] }), 400, 'INVALID_ARGUMENT', 'txids[0]');
    expectError(await api.post('/v1/conflicting/resolve', {}), 400, 'INVALID_ARGUMENT', 'txids');
    expectError(await api.post('/v1/conflicting/resolve', { txids: [missing()] }), 404, 'TX_NOT_FOUND');
    const { first, parent, second } = await doubleSpend();
    expectError(await api.post('/v1/conflicting/resolve', { txids: [first.txid] }), 400, 'INVALID_ARGUMENT');
    const item = spendItem(parent, 1, second.txid, 1);
    expect(
      (await api.post('/v1/freeze', { utxos: [{ txid: parent.txid, vout: 1, utxoHash: item.utxoHash }] })).status,
    ).toBe(200);
    expectError(await api.post('/v1/conflicting/resolve', { txids: [second.txid] }), 409, 'FROZEN');
  });
});

describe('POST /v1/unspends with flagAsLocked', () => {
  test('200: the parent stays locked until unlocked', async () => {
    const parent = await create(rootTx([100_000]), MINED);
    const tx = await spent(makeTx({ inputs: [{ parent, vout: 0 }], outputs: [1000] }));
    const reply = await api.post('/v1/unspends', { spends: [spendItem(parent, 0, tx.txid, 0)], flagAsLocked: true });
    expect(reply.status).toBe(200);
    expect((await api.get(`/v1/utxos/${parent.txid}/0`)).body).toEqual({ status: 'LOCKED' });
    expect((await api.post('/v1/locked', { txids: [parent.txid], locked: false })).status).toBe(200);
    expect((await api.get(`/v1/utxos/${parent.txid}/0`)).body).toEqual({ status: 'OK' });
  });

  test('400 for a bad flag, 404 for a missing parent', async () => {
    const parent = rootTx([100_000]);
    const item = spendItem(parent, 0, missing(), 0);
    expectBadArgument(await api.post('/v1/unspends', { spends: [item], flagAsLocked: 'y' }), 'flagAsLocked');
    expectError(await api.post('/v1/unspends', { spends: [item], flagAsLocked: true }), 404, 'TX_NOT_FOUND');
  });
});

describe('GET /v1/unmined/txs', () => {
  test('200: pages of unmined txs with fee, size, parents and flags; a retried cursor repeats its page', async () => {
    const parent = await create(rootTx([100_000]), MINED);
    const tx = await create(makeTx({ inputs: [{ parent, vout: 0 }], outputs: [1000] }), { locked: true });
    const seen: { txid: string }[] = [];
    let reply = await api.get('/v1/unmined/txs?limit=1');
    for (;;) {
      expect(reply.status).toBe(200);
      seen.push(...reply.body.txs);
      if (!reply.body.cursor) break;
      const url = `/v1/unmined/txs?limit=1&cursor=${reply.body.cursor}`;
      const again = await api.get(url);
      reply = await api.get(url);
      expect(reply.body).toEqual(again.body);
    }
    expect(seen.find((t) => t.txid === tx.txid)).toEqual({
      txid: tx.txid,
      fee: 99_000,
      sizeInBytes: expect.any(Number),
      parentTxids: [parent.txid],
      createdAt: expect.any(Number),
      locked: true,
      conflicting: false,
    });
    expect(seen.find((t) => t.txid === parent.txid)).toBeUndefined();
  });

  test('400 for a bad limit or cursor', async () => {
    expectError(await api.get('/v1/unmined/txs?limit=0'), 400, 'INVALID_ARGUMENT', 'limit');
    expectError(await api.get('/v1/unmined/txs?cursor=abc'), 400, 'INVALID_ARGUMENT', 'cursor');
    expectError(await api.get(`/v1/unmined/txs?cursor=${'0'.repeat(32)}-0`), 400, 'INVALID_ARGUMENT', 'cursor');
  });
});

describe('POST /v1/spends/verify', () => {
  test('200: a stored tx whose spend did not stand, and its child, are marked conflicting; bad input 400', async () => {
    const { parent, first, child } = await doubleSpend();
    // stored as if its spend of parent:0 had been acknowledged on the other side of a split brain
    const lost = await create(makeTx({ inputs: [{ parent, vout: 0 }], outputs: [999] }));
    const lostChild = await spent(makeTx({ inputs: [{ parent: lost, vout: 0 }], outputs: [99] }));
    const reply = await api.post('/v1/spends/verify', { txids: [first.txid, child.txid, lost.txid] });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      checked: 3,
      lost: [
        { txid: parent.txid, vout: 0, spendingTxid: lost.txid, vin: 0, recorded: first.txid, state: 'spent-by-other' },
      ],
      markedConflicting: [lost.txid, lostChild.txid],
    });
    const view = await api.get(`/v1/txs/${lostChild.txid}?fields=conflicting`);
    expect(view.body.conflicting).toBe(true);
    expect((await api.post('/v1/spends/verify', { txids: [lost.txid], repair: false })).body.lost).toEqual([]);
    expectError(await api.post('/v1/spends/verify', { txids: ['x'] }), 400, 'INVALID_ARGUMENT', 'txids[0]');
    expectBadArgument(await api.post('/v1/spends/verify', { txids: [first.txid], repair: 1 }), 'repair');
  });
});
