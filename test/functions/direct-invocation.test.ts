/**
 * Direct invocation of the API functions (the Lambda Invoke API, no API Gateway): an event {route, body,
 * pathParameters?, queryStringParameters?} answers {statusCode, headers, body} as the HTTP route would, with the body
 * parsed. Also: answers over Lambda's 6 MB response limit are 413 RESPONSE_TOO_LARGE on both ways in.
 */
import './powertools-env';

import { handler as admin } from '../../functions/admin';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { handler as spend } from '../../functions/spend';
import type { DirectInvocation, DirectResult } from '../../lib/http/direct-invocation';
import { LAMBDA_PAYLOAD_BYTES } from '../../lib/http/payload-limits';
import { getRuntime } from '../../lib/runtime';
import { makeTx, rootTx } from '../fixtures/txs';
import { apiEvent, captureStdout, lambdaContext } from './events';
import { useTestRuntime } from './runtime-env';

type DirectHandler = (event: DirectInvocation, context: ReturnType<typeof lambdaContext>) => Promise<DirectResult>;

// the early cap on a get's tx bytes (MAX_GET_TX_BYTES, 3 MiB) above the 3.2 MB tx below, so that its answer reaches
// the serializer's 6 MB check, the backstop for what no estimate covers (get-outputs-cap.test.ts tests the cap)
useTestRuntime('fn-direct', 'embedded::memory:', { MAX_GET_TX_BYTES: '4000000' });

async function invoke(handler: DirectHandler, event: unknown): Promise<DirectResult> {
  const { result } = await captureStdout(() => handler(event as DirectInvocation, lambdaContext()));
  return result;
}

function errorOf(result: DirectResult): { code: string; message: string; details?: Record<string, unknown> } {
  return (result.body as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
}

/** The reply's error, once its status is as expected. */
function errorWith(result: DirectResult, status: number): ReturnType<typeof errorOf> {
  expect(result.statusCode).toBe(status);
  return errorOf(result);
}

describe('direct invocation', () => {
  test('a route with a JSON body answers the HTTP status and the parsed body', async () => {
    const f = rootTx(2);
    const created = await invoke(create, { route: 'POST /v1/txs', body: { tx: f.hex } });
    expect(created.statusCode).toBe(201);
    expect(created.body).toMatchObject({ txid: f.txid, records: 1 });
    expect(created.headers['content-type']).toBe('application/json');

    expect(errorWith(await invoke(create, { route: 'POST /v1/txs', body: { tx: f.hex } }), 409).code).toBe('TX_EXISTS');
  });

  test('a templated route takes pathParameters and queryStringParameters; a concrete path is matched', async () => {
    const f = rootTx(1);
    await invoke(create, { route: 'POST /v1/txs', body: { tx: f.hex } });
    const byTemplate = await invoke(get, {
      route: 'GET /v1/txs/{txid}',
      pathParameters: { txid: f.txid },
      queryStringParameters: { fields: 'fee,locked' },
    });
    expect(byTemplate.statusCode).toBe(200);
    expect(byTemplate.body).toEqual({ txid: f.txid, fee: 0, locked: false });

    const byPath = await invoke(get, { route: `GET /v1/txs/${f.txid}` });
    expect(byPath.statusCode).toBe(200);
    expect(byPath.body).toMatchObject({ txid: f.txid });
  });

  test('a spend and a 204 answer without a body', async () => {
    const parent = rootTx(1);
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    await invoke(create, { route: 'POST /v1/txs', body: { tx: parent.hex } });
    const spent = await invoke(spend, { route: 'POST /v1/spends', body: { tx: child.hex } });
    expect(spent.statusCode).toBe(200);

    const deleted = await invoke(admin, { route: 'DELETE /v1/txs/{txid}', pathParameters: { txid: parent.txid } });
    expect(deleted).toEqual({ statusCode: 204, headers: expect.any(Object) });
    expect(
      errorWith(await invoke(get, { route: 'GET /v1/txs/{txid}', pathParameters: { txid: parent.txid } }), 404).code,
    ).toBe('TX_NOT_FOUND');
  });

  test('a bad body is 400 naming the field, as over HTTP', async () => {
    expect(errorWith(await invoke(create, { route: 'POST /v1/txs', body: { tx: 'zz' } }), 400)).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'tx' },
    });
    expect(errorWith(await invoke(create, { route: 'POST /v1/txs' }), 400).details).toMatchObject({ field: 'body' });
  });

  test('a malformed event is 400 naming its field', async () => {
    for (const [event, field] of [
      [{ route: 'SPEND /v1/spends' }, 'route'],
      [{ route: 'POST' }, 'route'],
      [{ route: 'GET /v1/txs/{txid}', pathParameters: { txid: 7 } }, 'pathParameters.txid'],
      [{ route: 'GET /v1/txs/{txid}', pathParameters: ['x'] }, 'pathParameters'],
      [{ route: 'POST /v1/txs', queryStringParameters: 'a=b' }, 'queryStringParameters'],
      [{ route: 'POST /v1/txs', payload: {} }, 'payload'],
    ] as const) {
      expect(errorWith(await invoke(create, event), 400)).toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field, in: 'event' },
      });
    }
  });

  test('a route of another function is 404 naming the function that serves it; an unknown route is 404', async () => {
    expect(errorWith(await invoke(create, { route: 'POST /v1/spends', body: { tx: '00' } }), 404)).toMatchObject({
      code: 'ROUTE_NOT_FOUND',
      details: { function: 'spend' },
    });
    expect(errorWith(await invoke(create, { route: 'POST /v1/nothing' }), 404).code).toBe('ROUTE_NOT_FOUND');
  });
});

describe("Lambda's 6 MB response limit", () => {
  test('an answer over it is 413 RESPONSE_TOO_LARGE over API Gateway and direct invocation, never a 5xx', async () => {
    // a 3.2 MB tx: its hex alone is 6.4 MB (stored through the store: no request could carry it)
    // one OP_PUSHDATA4 of 3.2 MB: parsed as one chunk (3.2 million one-byte opcodes once overflowed the parser's stack)
    const pushdata4 = Buffer.alloc(5);
    pushdata4.writeUInt8(0x4e, 0);
    pushdata4.writeUInt32LE(3_200_000, 1);
    const big = rootTx([{ satoshis: 1, script: pushdata4.toString('hex') + 'ab'.repeat(3_200_000) }]);
    const { store } = await getRuntime();
    await store.create(big.hex);

    const direct = await invoke(get, {
      route: 'GET /v1/txs/{txid}',
      pathParameters: { txid: big.txid },
      queryStringParameters: { fields: 'tx' },
    });
    expect(direct.statusCode).toBe(413);
    expect(errorOf(direct)).toMatchObject({ code: 'RESPONSE_TOO_LARGE', details: { limit: LAMBDA_PAYLOAD_BYTES } });
    expect(errorOf(direct).details?.bytes).toBeGreaterThan(LAMBDA_PAYLOAD_BYTES);

    const event = apiEvent({
      method: 'GET',
      resource: '/v1/txs/{txid}',
      pathParameters: { txid: big.txid },
      query: { fields: 'tx' },
    });
    const { result } = await captureStdout(() => get(event, lambdaContext()));
    expect(result.statusCode).toBe(413);
    expect(JSON.parse(result.body).error.code).toBe('RESPONSE_TOO_LARGE');

    // the same tx without its hex is small and answers 200
    const small = await invoke(get, { route: `GET /v1/txs/${big.txid}`, queryStringParameters: { fields: 'fee' } });
    expect(small.statusCode).toBe(200);
  });
});
