/**
 * Who may state a create's height (security review N2): a coinbase matures from its creation height, and at tip 1000
 * a validator's `POST /v1/txs {isCoinbase: true, blockHeight: 0}` made an output spendable at once. blockHeight on
 * create is blockValidation's (as minedBlocks): from a validator it is 403 FIELD_NOT_ALLOWED naming it, on the single
 * and the batch route, and nothing is stored. blockValidation (and a direct invoker of create, which holds it) may
 * send it, but a coinbase's height without minedBlocks is also bounded below: at most MAX_TIP_ADVANCE under the tip.
 */
import './powertools-env';

import type { Context } from 'aws-lambda';
import { handler as admin } from '../../functions/admin';
import { handler as create } from '../../functions/create';
import { handler as getUtxo } from '../../functions/get-utxo';
import type { DirectInvocation, DirectResult } from '../../lib/http/direct-invocation';
import { coinbaseTx, utxoHashOf, type Fixture } from '../fixtures/txs';
import { callAs, useCallerRoles, ADMIN, BLOCK_VALIDATION, VALIDATOR, type Handler } from './caller-roles';
import { lambdaContext } from './events';
import { useTestRuntime } from './runtime-env';

type DirectHandler = (event: DirectInvocation, context: Context) => Promise<DirectResult>;

useTestRuntime('fn-create-height');

useCallerRoles(beforeAll);
beforeAll(async () => {
  const tip = await callAs(
    admin as Handler,
    { method: 'PUT', resource: '/v1/chain/tip/force', body: { height: 1000 } },
    ADMIN,
  );
  expect(tip.statusCode).toBe(200);
});

const post = (resource: string, body: unknown, arn: string) =>
  callAs(create as Handler, { method: 'POST', resource, body }, arn);

async function utxo(f: Fixture) {
  const r = await callAs(
    getUtxo as Handler,
    {
      method: 'GET',
      resource: '/v1/utxos/{txid}/{vout}',
      pathParameters: { txid: f.txid, vout: '0' },
      query: { utxoHash: utxoHashOf(f, 0) },
    },
    VALIDATOR,
  );
  return r.json;
}

test('a validator stating a create height: 403 naming blockHeight, single and batch; nothing stored', async () => {
  const cb = coinbaseTx(1);
  const single = await post('/v1/txs', { tx: cb.hex, isCoinbase: true, blockHeight: 0 }, VALIDATOR);
  expect(single.statusCode).toBe(403);
  expect(single.json.error).toMatchObject({
    code: 'FIELD_NOT_ALLOWED',
    details: { field: 'blockHeight', required: 'blockValidation', role: 'validator' },
  });
  // a coinbase is recognised without isCoinbase: the field is refused whatever the flag says
  const batch = await post('/v1/batch/txs', { txs: [{ tx: cb.hex }, { tx: cb.hex, blockHeight: 0 }] }, VALIDATOR);
  expect(batch.statusCode).toBe(403);
  expect(batch.json.error.details).toMatchObject({ field: 'txs[1].blockHeight' });
  expect(await utxo(cb)).toEqual({ status: 'NOT_FOUND' });
  // without it the coinbase matures from the tip
  expect((await post('/v1/txs', { tx: cb.hex, isCoinbase: true }, VALIDATOR)).statusCode).toBe(201);
  expect(await utxo(cb)).toEqual({ status: 'IMMATURE', spendableAt: 1100 });
});

test('blockValidation and a direct invoker: a coinbase height far below the tip is 400; within the window 201', async () => {
  const cb = coinbaseTx(1);
  const low = await post('/v1/txs', { tx: cb.hex, isCoinbase: true, blockHeight: 0 }, BLOCK_VALIDATION);
  expect(low.statusCode).toBe(400);
  expect(low.json.error).toMatchObject({
    code: 'INVALID_ARGUMENT',
    details: { field: 'blockHeight', current: 1000, maxBelow: 10 },
  });
  const direct = await (create as unknown as DirectHandler)(
    { route: 'POST /v1/txs', body: { tx: cb.hex, isCoinbase: true, blockHeight: 0 } },
    lambdaContext(),
  );
  expect(direct.statusCode).toBe(400);
  expect(await utxo(cb)).toEqual({ status: 'NOT_FOUND' });
  expect(
    (await post('/v1/txs', { tx: cb.hex, isCoinbase: true, blockHeight: 1001 }, BLOCK_VALIDATION)).statusCode,
  ).toBe(201);
  expect(await utxo(cb)).toEqual({ status: 'IMMATURE', spendableAt: 1101 });
});
