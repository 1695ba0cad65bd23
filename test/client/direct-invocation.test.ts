/**
 * The typed client through the direct-invocation transport, with a fake Lambda client that runs the real handlers
 * (functions/*.ts) on the event the transport sends: the documented event shape (a write batch's frame as bodyBase64),
 * results and typed errors, Lambda's throttle retried, a function error typed and not retried for a non-idempotent
 * operation.
 */
import './quiet-env';
import type { InvokeCommand, InvokeCommandOutput } from '@aws-sdk/client-lambda';
import { handler as admin } from '../../functions/admin';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { handler as getUtxo } from '../../functions/get-utxo';
import { handler as setMined } from '../../functions/set-mined';
import { handler as spend } from '../../functions/spend';
import { handler as status } from '../../functions/status';
import { handler as unspend } from '../../functions/unspend';
import {
  ConflictError,
  encodeBatchFrame,
  InvalidArgumentError,
  lambdaClient,
  NotFoundError,
  ServiceError,
  TxExistsError,
  type DirectInvocationEvent,
  type LambdaInvoker,
} from '@bsv-utxo-store/client';
import type { FunctionName } from '../../lib/http/routes';
import { lambdaContext } from '../functions/events';
import { makeTx, rootTx, utxoHashOf } from '../fixtures/txs';
import { useTestRuntime } from '../functions/runtime-env';

type AnyHandler = (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;
const HANDLERS: Record<FunctionName, AnyHandler> = {
  create,
  get,
  spend,
  unspend,
  'set-mined': setMined,
  'get-utxo': getUtxo,
  status,
  admin,
} as unknown as Record<FunctionName, AnyHandler>;
const NAMES = Object.fromEntries(Object.keys(HANDLERS).map((fn) => [fn, `utxo-store-${fn}`])) as Record<
  FunctionName,
  string
>;

/** A Lambda client invoking the handlers in process, as the Invoke API would (RequestResponse). */
class FakeLambda implements LambdaInvoker {
  readonly invocations: { functionName: string; event: DirectInvocationEvent }[] = [];
  /** answers to give instead of invoking, in order (throttles, function errors) */
  readonly scripted: (() => InvokeCommandOutput)[] = [];

  async send(command: InvokeCommand): Promise<InvokeCommandOutput> {
    const { FunctionName: functionName, Payload, InvocationType } = command.input;
    expect(InvocationType).toBe('RequestResponse');
    const event = JSON.parse(Buffer.from(Payload as Uint8Array).toString('utf8')) as DirectInvocationEvent;
    this.invocations.push({ functionName: functionName as string, event });
    const scripted = this.scripted.shift();
    if (scripted) return scripted();
    const fn = (Object.keys(NAMES) as FunctionName[]).find((k) => NAMES[k] === functionName);
    if (!fn)
      throw Object.assign(new Error('Function not found'), {
        name: 'ResourceNotFoundException',
        $metadata: { httpStatusCode: 404 },
      });
    const result = await HANDLERS[fn](event, lambdaContext(30_000, functionName as string));
    return { StatusCode: 200, Payload: Buffer.from(JSON.stringify(result)) as never, $metadata: {} };
  }
}

let lambda: FakeLambda;

useTestRuntime('client-direct');

beforeEach(() => {
  lambda = new FakeLambda();
});

const client = () => lambdaClient({ functionNames: NAMES, client: lambda, retry: { baseMs: 1 }, batching: false });

describe('client by direct invocation', () => {
  test('sends the documented event to the function of each route and reads {statusCode, body}', async () => {
    const c = client();
    const parent = rootTx(2);
    expect(await c.createTx(parent.hex, { locked: false })).toMatchObject({ txid: parent.txid, records: 1 });
    expect(await c.getTx(parent.txid, ['fee'])).toEqual({ txid: parent.txid, fee: 0 });
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    expect(await c.spend(child.hex)).toEqual({ spends: [{ txid: parent.txid, vout: 0, status: 'OK' }] });
    expect(await c.getUtxo(parent.txid, 1, utxoHashOf(parent, 1))).toEqual({ status: 'OK' });
    await c.deleteTx(child.txid).catch(() => undefined);
    expect(await c.getChainTip()).toEqual(expect.any(Number));

    expect(lambda.invocations.slice(0, 4)).toEqual([
      { functionName: 'utxo-store-create', event: { route: 'POST /v1/txs', body: { tx: parent.hex, locked: false } } },
      {
        functionName: 'utxo-store-get',
        event: {
          route: 'GET /v1/txs/{txid}',
          pathParameters: { txid: parent.txid },
          queryStringParameters: { fields: 'fee' },
        },
      },
      { functionName: 'utxo-store-spend', event: { route: 'POST /v1/spends', body: { tx: child.hex } } },
      {
        functionName: 'utxo-store-get-utxo',
        event: {
          route: 'GET /v1/utxos/{txid}/{vout}',
          pathParameters: { txid: parent.txid, vout: '1' },
          queryStringParameters: { utxoHash: utxoHashOf(parent, 1) },
        },
      },
    ]);
    expect(lambda.invocations[4]).toEqual({
      functionName: 'utxo-store-admin',
      event: { route: 'DELETE /v1/txs/{txid}', pathParameters: { txid: child.txid } },
    });
  });

  test('the write batches go as bodyBase64 frames (binaryBatches: false as body), with the same results', async () => {
    const binary = lambdaClient({ functionNames: NAMES, client: lambda, batching: false });
    const json = lambdaClient({ functionNames: NAMES, client: lambda, batching: false, binaryBatches: false });
    const [a, b] = [rootTx(1), rootTx(1)];
    expect(await binary.createMany([{ tx: a.hex, locked: false }])).toMatchObject([
      { ok: true, value: { txid: a.txid } },
    ]);
    expect(await json.createMany([{ tx: b.hex, locked: false }])).toMatchObject([
      { ok: true, value: { txid: b.txid } },
    ]);
    const [ca, cb] = [a, b].map((parent) => makeTx({ inputs: [{ parent, vout: 0 }] }));
    const spentA = await binary.spendMany([ca.hex], { brief: true });
    expect(await json.spendMany([cb.hex], { brief: true })).toEqual(spentA);
    expect(spentA).toEqual([{ ok: true, value: undefined }]);

    const events = lambda.invocations.map((i) => i.event);
    expect(events.map((e) => [e.route, e.body === undefined, typeof e.bodyBase64])).toEqual([
      ['POST /v1/batch/txs', true, 'string'],
      ['POST /v1/batch/txs', false, 'undefined'],
      ['POST /v1/batch/spends', true, 'string'],
      ['POST /v1/batch/spends', false, 'undefined'],
    ]);
    const frame = encodeBatchFrame('spendMany', { txs: [ca.hex], brief: true })!;
    expect(events[2].bodyBase64).toBe(Buffer.from(frame).toString('base64'));
    expect(events[3].body).toEqual({ txs: [cb.hex], brief: true });
  });

  test('typed errors come back from the handlers', async () => {
    const c = client();
    const parent = rootTx(1);
    await c.createTx(parent.hex);
    await expect(c.createTx(parent.hex)).rejects.toBeInstanceOf(TxExistsError);
    const first = makeTx({ inputs: [{ parent, vout: 0 }] });
    await c.spend(first.hex);
    const err = await c.spend(makeTx({ inputs: [{ parent, vout: 0 }] }).hex).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ code: 'SPENT', status: 409, txid: parent.txid, vout: 0, spendingTxid: first.txid });
    const bad = await c.setLocked(['nope'], true).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidArgumentError);
    expect((bad as InvalidArgumentError).field).toBe('txids[0]');
    await expect(c.getTx(rootTx(1).txid)).rejects.toBeInstanceOf(NotFoundError);
  });

  test('an answer whose body is a JSON string (the API Gateway shape) is read the same way', async () => {
    lambda.scripted.push(() => ({
      StatusCode: 200,
      Payload: Buffer.from(JSON.stringify({ statusCode: 200, body: '{"height":5}' })) as never,
      $metadata: {},
    }));
    expect(await client().getChainTip()).toBe(5);
  });

  test('a route sent to the wrong function is ROUTE_NOT_FOUND, naming the right one', async () => {
    const c = lambdaClient({ functionNames: { ...NAMES, get: NAMES.admin }, client: lambda, retry: { attempts: 1 } });
    const err = await c.getTx(rootTx(1).txid).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'ROUTE_NOT_FOUND', status: 404, details: { function: 'get' } });
  });

  test("Lambda's throttle is retried; a function error is typed and not retried for a non-idempotent call", async () => {
    const c = client();
    const parent = rootTx(1);
    const throttle = () => {
      throw Object.assign(new Error('Rate exceeded'), {
        name: 'TooManyRequestsException',
        $metadata: { httpStatusCode: 429 },
      });
    };
    lambda.scripted.push(throttle, throttle);
    expect(await c.createTx(parent.hex)).toMatchObject({ txid: parent.txid });
    expect(lambda.invocations).toHaveLength(3);

    lambda.invocations.length = 0;
    lambda.scripted.push(() => ({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: Buffer.from(JSON.stringify({ errorType: 'Error', errorMessage: 'boom' })) as never,
      $metadata: {},
    }));
    const err = await c
      .freeze([{ txid: parent.txid, vout: 0, utxoHash: utxoHashOf(parent, 0) }])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ code: 'FUNCTION_ERROR', status: 500 });
    expect(lambda.invocations).toHaveLength(1);
  });
});
