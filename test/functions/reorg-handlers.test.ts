/**
 * The reorg routes through their API Gateway handlers (functions/*.ts), invoked with real-shaped REST proxy events:
 * each route on the function the route table names (get, set-mined, admin, unspend), and a route sent to another
 * function is refused.
 */
import './powertools-env';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { handler as admin } from '../../functions/admin';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { handler as setMined } from '../../functions/set-mined';
import { handler as spend } from '../../functions/spend';
import { handler as unspend } from '../../functions/unspend';
import { getRuntime, resetRuntime } from '../../lib/runtime';
import { makeTx, rootTx, spendItem, type Fixture } from '../fixtures/txs';
import { apiEvent, captureStdout, lambdaContext, type ApiEventOptions } from './events';
import { useTestRuntime } from './runtime-env';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

useTestRuntime('fn-reorg');

async function call(handler: Handler, options: ApiEventOptions) {
  const { result } = await captureStdout(() => handler(apiEvent(options), lambdaContext()));
  return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
}

async function stored(f: Fixture, extra: Record<string, unknown> = {}): Promise<Fixture> {
  const reply = await call(create, { method: 'POST', resource: '/v1/txs', body: { tx: f.hex, ...extra } });
  expect(reply.statusCode).toBe(201);
  return f;
}

const MINED = { minedBlocks: [{ blockId: 9, blockHeight: 900, subtreeIdx: 0 }] };

test('a double spend resolved through the functions: views, resolution, longest chain, unmined iteration', async () => {
  const parent = await stored(rootTx([100_000, 100_000]), MINED);
  const first = await stored(makeTx({ inputs: [{ parent, vout: 0 }], outputs: [1000] }));
  expect((await call(spend, { method: 'POST', resource: '/v1/spends', body: { tx: first.hex } })).statusCode).toBe(200);
  const second = await stored(makeTx({ inputs: [{ parent, vout: 0 }], outputs: [900] }), { conflicting: true });

  const counter = await call(get, {
    method: 'GET',
    resource: '/v1/txs/{txid}/counter-conflicting',
    pathParameters: { txid: second.txid },
  });
  expect(counter).toMatchObject({ statusCode: 200, json: { txid: second.txid, counterConflicting: [first.txid] } });
  const children = await call(get, {
    method: 'GET',
    resource: '/v1/txs/{txid}/conflicting-children',
    pathParameters: { txid: parent.txid },
  });
  expect(children.json).toEqual({ txid: parent.txid, conflictingChildren: [second.txid] });

  const resolved = await call(admin, {
    method: 'POST',
    resource: '/v1/conflicting/resolve',
    body: { txids: [second.txid] },
  });
  expect(resolved).toMatchObject({
    statusCode: 200,
    json: { losingTxids: [first.txid], markedConflicting: [first.txid] },
  });

  const longest = await call(setMined, {
    method: 'POST',
    resource: '/v1/longest-chain',
    body: { txids: [parent.txid], onLongestChain: false },
  });
  expect(longest).toMatchObject({ statusCode: 200, json: { status: 'OK' } });

  const page = await call(get, { method: 'GET', resource: '/v1/unmined/txs', query: { limit: '100' } });
  expect(page.statusCode).toBe(200);
  const txids = page.json.txs.map((t: { txid: string }) => t.txid);
  expect(txids).toEqual(expect.arrayContaining([parent.txid, first.txid, second.txid]));
  expect(page.json.txs.find((t: { txid: string }) => t.txid === second.txid)).toMatchObject({
    fee: 99_100,
    parentTxids: [parent.txid],
    conflicting: false,
  });
});

test('unspend with flagAsLocked through the unspend function', async () => {
  const parent = await stored(rootTx([100_000]), MINED);
  const tx = makeTx({ inputs: [{ parent, vout: 0 }], outputs: [1000] });
  await stored(tx);
  expect((await call(spend, { method: 'POST', resource: '/v1/spends', body: { tx: tx.hex } })).statusCode).toBe(200);
  const reply = await call(unspend, {
    method: 'POST',
    resource: '/v1/unspends',
    body: { spends: [spendItem(parent, 0, tx)], flagAsLocked: true },
  });
  expect(reply.statusCode).toBe(200);
  const locked = await call(get, {
    method: 'GET',
    resource: '/v1/txs/{txid}',
    pathParameters: { txid: parent.txid },
    query: { fields: 'locked' },
  });
  expect(locked.json).toEqual({ txid: parent.txid, locked: true });
});

test('errors through the handlers: 400, 404; a route sent to another function is refused', async () => {
  const bad = await call(setMined, { method: 'POST', resource: '/v1/longest-chain', body: { txids: ['x'] } });
  expect(bad.statusCode).toBe(400);
  expect(bad.json.error.code).toBe('INVALID_ARGUMENT');
  const missing = await call(admin, {
    method: 'POST',
    resource: '/v1/conflicting/resolve',
    body: { txids: [rootTx().txid] },
  });
  expect(missing.statusCode).toBe(404);
  expect(missing.json.error.code).toBe('TX_NOT_FOUND');
  // the admin function does not serve the get function's route
  const wrong = await call(admin, { method: 'GET', resource: '/v1/unmined/txs' });
  expect(wrong.statusCode).toBe(404);
  expect(wrong.json.error.code).toBe('ROUTE_NOT_FOUND');
});

test('an engine that fails: 503 STORAGE_ERROR on every reorg route', async () => {
  const txid = rootTx().txid;
  await (await getRuntime()).engine.close();
  try {
    const replies = [
      await call(get, { method: 'GET', resource: '/v1/txs/{txid}/counter-conflicting', pathParameters: { txid } }),
      await call(get, { method: 'GET', resource: '/v1/txs/{txid}/conflicting-children', pathParameters: { txid } }),
      await call(setMined, {
        method: 'POST',
        resource: '/v1/longest-chain',
        body: { txids: [txid], onLongestChain: true },
      }),
      await call(admin, { method: 'POST', resource: '/v1/conflicting/resolve', body: { txids: [txid] } }),
      await call(get, { method: 'GET', resource: '/v1/unmined/txs' }),
      await call(unspend, {
        method: 'POST',
        resource: '/v1/unspends',
        body: { spends: [spendItem(rootTx(1), 0, txid)], flagAsLocked: true },
      }),
    ];
    for (const reply of replies) {
      expect({ status: reply.statusCode, code: reply.json.error.code }).toEqual({ status: 503, code: 'STORAGE_ERROR' });
    }
  } finally {
    await resetRuntime();
  }
});
