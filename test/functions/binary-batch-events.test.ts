/**
 * Binary batch bodies at the functions: an API Gateway event with the frame base64 (isBase64Encoded, as
 * binaryMediaTypes delivers it) and a direct invocation's bodyBase64 answer as the JSON body would; the role checks
 * hold for what the frame carries (a create field or a spend flag above the caller's role is 403 FIELD_NOT_ALLOWED,
 * as JSON, nothing stored or spent); a binary body that arrived as text, or over the binary limit, is refused.
 */
import './powertools-env';

import type { Context } from 'aws-lambda';
import { encodeBatchFrame } from '@bsv-utxo-store/client';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { handler as spend } from '../../functions/spend';
import type { DirectInvocation, DirectResult } from '../../lib/http/direct-invocation';
import { MAX_BINARY_BODY_BYTES } from '../../lib/http/payload-limits';
import { makeTx, rootTx, type Fixture } from '../fixtures/txs';
import { BLOCK_VALIDATION, callAs, useCallerRoles, VALIDATOR, type Handler } from './caller-roles';
import { apiEvent, captureStdout, lambdaContext } from './events';
import { useTestRuntime } from './runtime-env';

type DirectHandler = (event: DirectInvocation, context: Context) => Promise<DirectResult>;

useTestRuntime('fn-binary-batch');
useCallerRoles();

const frameOf = (operation: 'createMany' | 'spendMany', body: object) =>
  Buffer.from(encodeBatchFrame(operation, body as never)!);

const postFrame = (handler: unknown, resource: string, frame: Buffer, arn = VALIDATOR) =>
  callAs(handler as Handler, { method: 'POST', resource, binary: frame }, arn);

async function invoke(handler: unknown, event: DirectInvocation): Promise<DirectResult> {
  const { result } = await captureStdout(() => (handler as DirectHandler)(event, lambdaContext()));
  return result;
}

async function stored(f: Fixture): Promise<boolean> {
  const r = await callAs(
    get as Handler,
    { method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: f.txid } },
    VALIDATOR,
  );
  return r.statusCode === 200;
}

describe('an API Gateway event with a base64 binary body', () => {
  test('creates and spends as the JSON body does', async () => {
    const parent = rootTx(1);
    const created = await postFrame(create, '/v1/batch/txs', frameOf('createMany', { txs: [{ tx: parent.hex }] }));
    expect(created.statusCode).toBe(200);
    expect(created.json.results).toEqual([
      { status: 201, result: expect.objectContaining({ txid: parent.txid, records: 1 }) },
    ]);
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    const spent = await postFrame(spend, '/v1/batch/spends', frameOf('spendMany', { txs: [child.hex], brief: true }));
    expect(spent.json).toEqual({ results: [{ status: 200 }] });
  });

  test('a restricted create field or spend flag from a validator is 403 naming it, as JSON; nothing applied', async () => {
    const f = rootTx(1);
    const body = { txs: [{ tx: rootTx(1).hex }, { tx: f.hex, blockHeight: 1 }] };
    const framed = await postFrame(create, '/v1/batch/txs', frameOf('createMany', body));
    expect(framed.statusCode).toBe(403);
    expect(framed.json.error).toMatchObject({ code: 'FIELD_NOT_ALLOWED', details: { field: 'txs[1].blockHeight' } });
    const json = await callAs(create as Handler, { method: 'POST', resource: '/v1/batch/txs', body }, VALIDATOR);
    expect(framed.json).toEqual(json.json);
    expect(await stored(f)).toBe(false);
    // blockValidation may
    const allowed = await postFrame(create, '/v1/batch/txs', frameOf('createMany', body), BLOCK_VALIDATION);
    expect(allowed.json.results.map((r: { status: number }) => r.status)).toEqual([201, 201]);

    const child = makeTx({ inputs: [{ parent: f, vout: 0 }] });
    const flagged = frameOf('spendMany', { txs: [child.hex], ignoreLocked: true });
    const refused = await postFrame(spend, '/v1/batch/spends', flagged);
    expect(refused.statusCode).toBe(403);
    expect(refused.json.error).toMatchObject({ code: 'FIELD_NOT_ALLOWED', details: { field: 'ignoreLocked' } });
    const unspent = await postFrame(spend, '/v1/batch/spends', frameOf('spendMany', { txs: [child.hex] }));
    expect(unspent.json.results[0].status).toBe(200); // the output was still there to spend
  });

  test('a binary body that reached the function as text is 400 BAD_FRAME; over the binary limit, 413', async () => {
    const frame = frameOf('spendMany', { txs: ['00'] });
    const event = apiEvent({ method: 'POST', resource: '/v1/batch/spends', binary: frame });
    event.body = frame.toString('latin1');
    event.isBase64Encoded = false;
    const { result } = await captureStdout(() => spend(event, lambdaContext()));
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body).error).toMatchObject({ code: 'BAD_FRAME', details: { offset: 0 } });

    const big = frameOf('spendMany', { txs: ['00'.repeat(MAX_BINARY_BODY_BYTES - 21)] });
    expect(big.length).toBe(MAX_BINARY_BODY_BYTES + 1);
    const over = await postFrame(spend, '/v1/batch/spends', big);
    expect(over.statusCode).toBe(413);
    expect(over.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    // the declared length alone is refused before the body is decoded
    const declared = apiEvent({ method: 'POST', resource: '/v1/batch/spends', binary: frame });
    declared.headers['Content-Length'] = String(MAX_BINARY_BODY_BYTES + 1);
    const { result: early } = await captureStdout(() => spend(declared, lambdaContext()));
    expect(early.statusCode).toBe(413);
    // one byte less is read (and answered as a frame)
    const under = await postFrame(spend, '/v1/batch/spends', big.subarray(0, big.length - 1));
    expect(under.json.error).toMatchObject({ code: 'BAD_FRAME' });
  });
});

describe('a direct invocation with bodyBase64', () => {
  test('answers as with body; the direct invoker holds the least invoker role', async () => {
    const f = rootTx(1);
    // create's direct invoker is blockValidation: a create field is accepted
    const created = await invoke(create, {
      route: 'POST /v1/batch/txs',
      bodyBase64: frameOf('createMany', { txs: [{ tx: f.hex, blockHeight: 3 }] }).toString('base64'),
    });
    expect(created.statusCode).toBe(200);
    expect((created.body as { results: { status: number }[] }).results[0].status).toBe(201);
    // spend's is validator: ignoreLocked is refused, as with body
    const child = makeTx({ inputs: [{ parent: f, vout: 0 }] });
    const refused = await invoke(spend, {
      route: 'POST /v1/batch/spends',
      bodyBase64: frameOf('spendMany', { txs: [child.hex], ignoreLocked: true }).toString('base64'),
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'FIELD_NOT_ALLOWED', details: { field: 'ignoreLocked' } } });
    const spent = await invoke(spend, {
      route: 'POST /v1/batch/spends',
      bodyBase64: frameOf('spendMany', { txs: [child.hex] }).toString('base64'),
    });
    expect(spent.body).toEqual({
      results: [{ status: 200, result: { spends: [expect.objectContaining({ vout: 0 })] } }],
    });
  });

  test('a malformed bodyBase64 is 400 naming it in the event; a bad frame in it is 400 BAD_FRAME', async () => {
    const frame = frameOf('spendMany', { txs: ['00'] }).toString('base64');
    for (const event of [
      { route: 'POST /v1/batch/spends', bodyBase64: frame, body: { txs: ['00'] } },
      { route: 'POST /v1/batch/spends', bodyBase64: `${frame}!` },
      { route: 'POST /v1/batch/spends', bodyBase64: frame.slice(1) },
      { route: 'POST /v1/batch/spends', bodyBase64: 7 },
    ]) {
      const r = await invoke(spend, event as DirectInvocation);
      expect(r.statusCode).toBe(400);
      expect(r.body).toMatchObject({
        error: { code: 'INVALID_ARGUMENT', details: { field: 'bodyBase64', in: 'event' } },
      });
    }
    const bad = await invoke(spend, {
      route: 'POST /v1/batch/spends',
      bodyBase64: Buffer.from('UTXA').toString('base64'),
    });
    expect(bad.body).toMatchObject({ error: { code: 'BAD_FRAME', details: { offset: 0 } } });
  });
});
