/**
 * The API Gateway handlers (functions/*.ts) invoked directly with real-shaped REST proxy events and a fake Lambda
 * context: routing by resource, validation, error envelope, the runtime reused across invocations, structured logs
 * with the request id and EMF metrics.
 */
import './powertools-env';

import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { handler as admin } from '../../functions/admin';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { handler as getUtxo } from '../../functions/get-utxo';
import { handler as setMined } from '../../functions/set-mined';
import { handler as spend } from '../../functions/spend';
import { handler as status } from '../../functions/status';
import { handler as unspend } from '../../functions/unspend';
import { getRuntime, resetRuntime } from '../../lib/runtime';
import { GOLDEN_EF_HEX, GOLDEN_FEE, GOLDEN_TXID } from '../fixtures/golden-tx';
import { makeTx, rootTx, spendItem, utxoHashOf } from '../fixtures/txs';
import { apiEvent, captureStdout, jsonLines, lambdaContext, type ApiEventOptions } from './events';
import { useTestRuntime } from './runtime-env';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

useTestRuntime('fn-api');

async function call(handler: Handler, options: ApiEventOptions, context = lambdaContext()) {
  const { result } = await captureStdout(() => handler(apiEvent(options), context));
  return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
}

describe('API handlers', () => {
  test('create: 201 with the result; content type and request id headers', async () => {
    const context = lambdaContext();
    const reply = await call(create, { method: 'POST', resource: '/v1/txs', body: { tx: GOLDEN_EF_HEX } }, context);
    expect(reply.statusCode).toBe(201);
    expect(reply.json).toMatchObject({ txid: GOLDEN_TXID, fee: GOLDEN_FEE, records: 1 });
    expect(reply.headers).toMatchObject({ 'content-type': 'application/json', 'x-request-id': context.awsRequestId });
    const again = await call(create, { method: 'POST', resource: '/v1/txs', body: { tx: GOLDEN_EF_HEX } });
    expect(again.statusCode).toBe(409);
    expect(again.json.error.code).toBe('TX_EXISTS');
  });

  test('create: a base64-encoded body is decoded', async () => {
    const f = rootTx(1);
    const reply = await call(create, { method: 'POST', resource: '/v1/txs', body: { tx: f.hex }, base64: true });
    expect(reply.statusCode).toBe(201);
    expect(reply.json.txid).toBe(f.txid);
  });

  test('validation errors: envelope with the field, nothing stored', async () => {
    const f = rootTx(1);
    const bad = await call(create, { method: 'POST', resource: '/v1/txs', body: { tx: f.hex, locked: 'no' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json).toEqual({
      error: {
        code: 'INVALID_ARGUMENT',
        message: 'locked: expected true or false',
        details: { field: 'locked', in: 'body', issues: [{ field: 'locked', message: 'expected true or false' }] },
      },
    });
    const malformed = await call(create, { method: 'POST', resource: '/v1/txs', rawBody: '{"tx": ' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json.error.details.field).toBe('body');
    const lookup = await call(get, { method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: f.txid } });
    expect(lookup.statusCode).toBe(404);
    expect(lookup.json.error).toMatchObject({ code: 'TX_NOT_FOUND', details: { txid: f.txid } });
  });

  test('a query parameter named __proto__ (own key of the JSON event) is an unknown parameter, not ignored', async () => {
    const event = apiEvent({ method: 'GET', resource: '/v1/unmined', query: { cutoff: '5' } });
    event.queryStringParameters = JSON.parse('{"cutoff": "5", "__proto__": "x"}');
    event.multiValueQueryStringParameters = JSON.parse('{"cutoff": ["5"], "__proto__": ["x"]}');
    const { result } = await captureStdout(() => admin(event, lambdaContext()));
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body).error.details.field).toBe('__proto__');
  });

  test('batch routes through their functions: create, spend, get, get-utxo', async () => {
    const [a, b] = [rootTx(2), rootTx(1)];
    const made = await call(create, {
      method: 'POST',
      resource: '/v1/batch/txs',
      body: { txs: [{ tx: a.hex }, { tx: b.hex }, { tx: 'x' }] },
    });
    expect(made.statusCode).toBe(200);
    expect(made.json.results.map((r: { status: number }) => r.status)).toEqual([201, 201, 400]);
    const child = makeTx({
      inputs: [
        { parent: a, vout: 0 },
        { parent: b, vout: 0 },
      ],
    });
    const spent = await call(spend, {
      method: 'POST',
      resource: '/v1/batch/spends',
      body: { txs: [child.hex, child.hex] },
    });
    expect(spent.json.results).toEqual([
      {
        status: 200,
        result: {
          spends: [
            { txid: a.txid, vout: 0, status: 'OK' },
            { txid: b.txid, vout: 0, status: 'OK' },
          ],
        },
      },
      {
        status: 200,
        result: {
          spends: [
            { txid: a.txid, vout: 0, status: 'OK' },
            { txid: b.txid, vout: 0, status: 'OK' },
          ],
        },
      },
    ]);
    const got = await call(get, {
      method: 'POST',
      resource: '/v1/batch/get',
      body: { txids: [a.txid], fields: ['fee'] },
    });
    expect(got.json).toEqual({ results: [{ status: 200, result: { txid: a.txid, fee: 0 } }] });
    const outs = await call(get, {
      method: 'POST',
      resource: '/v1/batch/outputs',
      body: { outpoints: [{ txid: a.txid, vout: 1 }] },
    });
    expect(outs.json.results[0].result).toMatchObject({ satoshis: 1001, lockingScript: '51' });
    const utxos = await call(getUtxo, {
      method: 'POST',
      resource: '/v1/batch/utxos',
      body: { utxos: [{ txid: a.txid, vout: 0 }] },
    });
    expect(utxos.json.results[0].result).toEqual({ status: 'SPENT', spendingTxid: child.txid, vin: 0 });
    // a batch route is served by its function only
    const wrong = await call(spend, { method: 'POST', resource: '/v1/batch/txs', body: { txs: [{ tx: a.hex }] } });
    expect(wrong.statusCode).not.toBe(200);
  });

  test('spend, get-utxo, unspend, set-mined, get: one flow through the functions', async () => {
    const parent = rootTx(2);
    expect((await call(create, { method: 'POST', resource: '/v1/txs', body: { tx: parent.hex } })).statusCode).toBe(
      201,
    );
    const child = makeTx({ inputs: [{ parent, vout: 1 }] });
    const spent = await call(spend, { method: 'POST', resource: '/v1/spends', body: { tx: child.hex } });
    expect(spent).toMatchObject({ statusCode: 200 });
    expect(spent.json).toEqual({ spends: [{ txid: parent.txid, vout: 1, status: 'OK' }] });

    const utxo = await call(getUtxo, {
      method: 'GET',
      resource: '/v1/utxos/{txid}/{vout}',
      pathParameters: { txid: parent.txid, vout: '1' },
      query: { utxoHash: utxoHashOf(parent, 1) },
    });
    expect(utxo.json).toEqual({ status: 'SPENT', spendingTxid: child.txid, vin: 0 });

    const rival = makeTx({ inputs: [{ parent, vout: 1 }], outputs: [10] });
    const conflict = await call(spend, { method: 'POST', resource: '/v1/spends', body: { tx: rival.hex } });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json.error).toMatchObject({ code: 'SPENT', details: { spendingTxid: child.txid } });

    const undone = await call(unspend, {
      method: 'POST',
      resource: '/v1/unspends',
      body: { spends: [spendItem(parent, 1, child)] },
    });
    expect(undone.statusCode).toBe(200);

    const mined = await call(setMined, {
      method: 'POST',
      resource: '/v1/mined',
      body: { txids: [parent.txid], blockId: 3, blockHeight: 10, subtreeIdx: 1 },
    });
    expect(mined.json).toEqual({ blockIds: { [parent.txid]: [3] } });
    const got = await call(get, {
      method: 'GET',
      resource: '/v1/txs/{txid}',
      pathParameters: { txid: parent.txid },
      query: { fields: 'blockIDs,utxos' },
    });
    expect(got.json).toMatchObject({ txid: parent.txid, blockIDs: [3] });
    expect(got.json.utxos[1]).toEqual({ utxoHash: utxoHashOf(parent, 1), status: 'UNSPENT' });
  });

  test('admin routes are chosen by the event resource and method', async () => {
    // GET /v1/health and GET /v1/chain/tip are the status function's (the validators' reads, apart from the admin's)
    const health = await call(status, { method: 'GET', resource: '/v1/health' });
    expect(health).toMatchObject({ statusCode: 200 });
    expect(health.json.status).toBe('ok');

    expect((await call(admin, { method: 'PUT', resource: '/v1/chain/tip', body: { height: 15 } })).json).toEqual({
      height: 15,
    });
    expect(
      (await call(admin, { method: 'PUT', resource: '/v1/chain/tip', body: { height: 50 } })).json.error.code,
    ).toBe('INVALID_ARGUMENT');
    expect((await call(admin, { method: 'PUT', resource: '/v1/chain/tip/force', body: { height: 50 } })).json).toEqual({
      height: 50,
    });
    expect((await call(status, { method: 'GET', resource: '/v1/chain/tip' })).json).toEqual({ height: 50 });
    expect((await call(admin, { method: 'GET', resource: '/v1/chain/tip' })).json.error).toMatchObject({
      code: 'ROUTE_NOT_FOUND',
      details: { function: 'status' },
    });

    const f = rootTx(1);
    await call(create, { method: 'POST', resource: '/v1/txs', body: { tx: f.hex } });
    const unmined = await call(admin, {
      method: 'GET',
      resource: '/v1/unmined',
      query: { cutoff: '50', limit: '1000' },
    });
    expect(unmined.statusCode).toBe(200);
    expect(unmined.json.txids).toContain(f.txid);
    const twice = await call(admin, { method: 'GET', resource: '/v1/unmined', query: { cutoff: ['1', '2'] } });
    expect(twice.statusCode).toBe(400);
    expect(twice.json.error.details.field).toBe('cutoff');

    const locked = await call(admin, {
      method: 'POST',
      resource: '/v1/locked',
      body: { txids: [f.txid], locked: true },
    });
    expect(locked.json).toEqual({ status: 'OK' });

    const del = await call(admin, { method: 'DELETE', resource: '/v1/txs/{txid}', pathParameters: { txid: f.txid } });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');

    const cleanup = await call(admin, { method: 'POST', resource: '/v1/cleanup' }, lambdaContext(20_000));
    expect(cleanup.statusCode).toBe(200);
    expect(cleanup.json).toMatchObject({ tip: 50, deleted: 0, errors: 0, more: false });
  });

  test('a route of another function is 404 in this one; a route reached through the greedy proxy resource is not run (404)', async () => {
    const wrong = await call(spend, { method: 'GET', resource: '/v1/health' });
    expect(wrong.statusCode).toBe(404);
    expect(wrong.json.error.code).toBe('ROUTE_NOT_FOUND');
    const method = await call(admin, { method: 'PATCH', resource: '/v1/chain/tip' });
    expect(method.statusCode).toBe(405);
    expect(method.headers?.allow).toBe('GET, PUT');

    const event = apiEvent({ method: 'GET', resource: '/v1/health' });
    event.resource = '/{proxy+}';
    event.pathParameters = { proxy: 'v1/health' };
    event.path = '/v1/health/';
    const { result } = await captureStdout(() => admin(event, lambdaContext()));
    // authorized for the proxy's ARN, not the route's: never run (the per-route IAM roles would be bypassed)
    expect(result.statusCode).toBe(404);
    expect(JSON.parse(result.body).error.code).toBe('ROUTE_NOT_FOUND');

    // the API's catch-all (cdk/api.ts: ANY on / and /{proxy+}) brings unknown routes here: 404 in the envelope
    for (const [resource, path, method] of [
      ['/{proxy+}', '/v1/bogus', 'POST'],
      ['/{proxy+}', '/v2/txs', 'GET'],
      ['/', '/', 'GET'],
    ]) {
      const unknown = apiEvent({ method: method as 'GET', resource });
      unknown.path = path;
      unknown.pathParameters = resource === '/' ? null : { proxy: path.slice(1) };
      const reply = (await captureStdout(() => admin(unknown, lambdaContext()))).result;
      expect([path, reply.statusCode, JSON.parse(reply.body).error.code]).toEqual([path, 404, 'ROUTE_NOT_FOUND']);
    }

    // the per-resource ANY (cdk/api.ts) brings a known path with another method here: 405 allowing the methods of
    // every function on that path; a resource that only leads to routes (/v1, /v1/chain) is 404
    const txid = 'ab'.repeat(32);
    for (const [resource, pathParameters, method, status, allow] of [
      ['/v1/txs', undefined, 'GET', 405, 'POST'],
      ['/v1/spends', undefined, 'DELETE', 405, 'POST'],
      ['/v1/txs/{txid}', { txid }, 'POST', 405, 'GET, DELETE'],
      ['/v1/utxos/{txid}/{vout}', { txid, vout: '0' }, 'DELETE', 405, 'GET'],
      ['/v1/chain', undefined, 'GET', 404, undefined],
      ['/v1', undefined, 'POST', 404, undefined],
    ] as const) {
      const event = apiEvent({ method: method as 'GET', resource, pathParameters });
      const reply = (await captureStdout(() => admin(event, lambdaContext()))).result;
      const body = JSON.parse(reply.body);
      expect([event.path, reply.statusCode, body.error.code, reply.headers?.allow]).toEqual([
        event.path,
        status,
        status === 405 ? 'METHOD_NOT_ALLOWED' : 'ROUTE_NOT_FOUND',
        allow,
      ]);
    }
  });

  test('the runtime is built once and reused across invocations', async () => {
    const first = await getRuntime();
    await call(admin, { method: 'GET', resource: '/v1/health' });
    await call(get, { method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: GOLDEN_TXID } });
    expect(await getRuntime()).toBe(first);
  });

  test('structured JSON logs carry the Lambda request id; EMF metrics per operation and errors by code', async () => {
    const context = lambdaContext();
    const { lines } = await captureStdout(() =>
      get(apiEvent({ method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: rootTx(1).txid } }), context),
    );
    const records = jsonLines(lines);
    const requestLog = records.find((r) => r.message === 'request');
    expect(requestLog).toMatchObject({
      level: 'INFO',
      service: expect.any(String),
      function_request_id: context.awsRequestId,
      function_name: context.functionName,
      operation: 'getTx',
      statusCode: 404,
      errorCode: 'TX_NOT_FOUND',
    });

    const emf = records.filter((r) => r._aws !== undefined);
    const main = emf.find((r) => r.Requests !== undefined);
    expect(main).toMatchObject({ operation: 'getTx', Requests: 1, Errors: 1 });
    expect(typeof main?.Latency).toBe('number');
    const byCode = emf.find((r) => r.ErrorsByCode !== undefined);
    expect(byCode).toMatchObject({ operation: 'getTx', code: 'TX_NOT_FOUND', ErrorsByCode: 1 });
    const directives = (main?._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] })
      .CloudWatchMetrics[0];
    expect(directives.Namespace).toBe('BsvUtxoStore');
    expect(directives.Dimensions[0]).toEqual(expect.arrayContaining(['service', 'operation']));
  });

  test('requests served at once by one process (the local server) publish each its own metrics under its own operation, and log their own request id', async () => {
    const txs = Array.from({ length: 6 }, () => rootTx(1));
    const contexts = txs.map(() => [
      lambdaContext(30_000, 'utxo-store-create'),
      lambdaContext(30_000, 'utxo-store-read'),
    ]);
    const { lines } = await captureStdout(() =>
      Promise.all(
        txs.flatMap((f, i) => [
          create(apiEvent({ method: 'POST', resource: '/v1/txs', body: { tx: f.hex } }), contexts[i][0]),
          get(
            apiEvent({ method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: rootTx(1).txid } }),
            contexts[i][1],
          ),
        ]),
      ),
    );
    // each request's log line names its own invocation (the logger's injected context is the last request's)
    const requestLines = jsonLines(lines).filter((r) => r.message === 'request');
    const named = (operation: string) =>
      requestLines.filter((r) => r.operation === operation).map((r) => [r.function_request_id, r.function_name]);
    const ids = (k: number) => contexts.map((c) => [c[k].awsRequestId, c[k].functionName]);
    expect(new Set(named('createTx').map(String))).toEqual(new Set(ids(0).map(String)));
    expect(new Set(named('getTx').map(String))).toEqual(new Set(ids(1).map(String)));
    const main = jsonLines(lines).filter((r) => r._aws !== undefined && r.Requests !== undefined);
    // one record per request, each with its own single count and its own operation's outcome
    expect(main).toHaveLength(12);
    for (const r of main) expect(r).toMatchObject({ Requests: 1, Latency: expect.any(Number) });
    expect(main.filter((r) => r.operation === 'createTx').map((r) => r.Successes)).toEqual(Array(6).fill(1));
    expect(main.filter((r) => r.operation === 'getTx').map((r) => r.Errors)).toEqual(Array(6).fill(1));
    expect(lines.join('\n')).not.toMatch(/has already been added|No application metrics/);
  });
});

describe('a failed initialisation is not cached', () => {
  test('a bad setting is 500 CONFIG_ERROR; the next invocation after the fix succeeds', async () => {
    await resetRuntime();
    process.env.UTXO_BATCH_SIZE = 'lots';
    const failed = await call(status, { method: 'GET', resource: '/v1/health' });
    expect(failed.statusCode).toBe(500);
    expect(failed.json.error).toMatchObject({
      code: 'CONFIG_ERROR',
      message: expect.stringMatching(/UTXO_BATCH_SIZE/),
    });
    delete process.env.UTXO_BATCH_SIZE;
    const ok = await call(status, { method: 'GET', resource: '/v1/health' });
    expect(ok.statusCode).toBe(200);
  });
});
