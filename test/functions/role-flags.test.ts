/**
 * Flags that use a blockValidation route's power are blockValidation's (security review N3): ignoreLocked (spend a
 * locked output: POST /v1/locked's power), ignoreConflicting (POST /v1/conflicting's) and flagAsLocked (lock the
 * parents of an unspend: POST /v1/locked's). From a validator, on the single and the batch route, and from any direct
 * invoker (which holds the function's least invoker role, validator for spend and unspend), each is 403
 * FIELD_NOT_ALLOWED naming it, and nothing changes; blockValidation through API Gateway still succeeds. And an
 * unspend locks only the parents whose given outputs hold the given spender: a made-up spender locks nothing.
 */
import './powertools-env';

import type { Context } from 'aws-lambda';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { handler as getUtxo } from '../../functions/get-utxo';
import { handler as spend } from '../../functions/spend';
import { handler as unspend } from '../../functions/unspend';
import type { DirectInvocation, DirectResult } from '../../lib/http/direct-invocation';
import { makeTx, rootTx, spendItem, utxoHashOf, type Fixture } from '../fixtures/txs';
import { callAs, useCallerRoles, BLOCK_VALIDATION, VALIDATOR, type Handler } from './caller-roles';
import { captureStdout, lambdaContext } from './events';
import { useTestRuntime } from './runtime-env';

type DirectHandler = (event: DirectInvocation, context: Context) => Promise<DirectResult>;

useTestRuntime('fn-role-flags');

useCallerRoles();

async function invoke(handler: unknown, event: DirectInvocation) {
  const { result } = await captureStdout(() => (handler as DirectHandler)(event, lambdaContext()));
  return result;
}

const post = (handler: Handler, resource: string, body: unknown, arn = VALIDATOR) =>
  callAs(handler, { method: 'POST', resource, body }, arn);

/** A root created by blockValidation with the given create flags. */
async function parentWith(flags: { locked?: boolean; conflicting?: boolean } = {}): Promise<Fixture> {
  const f = rootTx(2);
  expect((await post(create as Handler, '/v1/txs', { tx: f.hex, ...flags }, BLOCK_VALIDATION)).statusCode).toBe(201);
  return f;
}

async function status(parent: Fixture, vout = 0): Promise<string> {
  const r = await callAs(
    getUtxo as Handler,
    {
      method: 'GET',
      resource: '/v1/utxos/{txid}/{vout}',
      pathParameters: { txid: parent.txid, vout: String(vout) },
      query: { utxoHash: utxoHashOf(parent, vout) },
    },
    VALIDATOR,
  );
  return r.json.status;
}

async function locked(parent: Fixture): Promise<boolean> {
  const r = await callAs(
    get as Handler,
    { method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: parent.txid }, query: { fields: 'locked' } },
    VALIDATOR,
  );
  return r.json.locked;
}

const refused = (field: string) => ({
  code: 'FIELD_NOT_ALLOWED',
  details: { field, required: 'blockValidation', role: 'validator' },
});

describe.each([
  ['ignoreLocked', { locked: true }],
  ['ignoreConflicting', { conflicting: true }],
] as const)('spend with %s', (flag, parentFlags) => {
  test('from a validator: 403 naming it on POST /v1/spends and POST /v1/batch/spends; nothing spent', async () => {
    const parent = await parentWith(parentFlags);
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    const single = await post(spend as Handler, '/v1/spends', { tx: child.hex, [flag]: true });
    expect([single.statusCode, single.json.error]).toEqual([403, expect.objectContaining(refused(flag))]);
    const batch = await post(spend as Handler, '/v1/batch/spends', { txs: [child.hex], [flag]: true });
    expect([batch.statusCode, batch.json.error]).toEqual([403, expect.objectContaining(refused(flag))]);
    expect(await status(parent)).not.toBe('SPENT');
    // false is what a validator sends anyway: allowed (and the spend then fails on the parent's state)
    const plain = await post(spend as Handler, '/v1/spends', { tx: child.hex, [flag]: false });
    expect(plain.statusCode).toBe(409);
  });

  test('from a direct invoker (it holds validator, the least role that may invoke spend): 403; nothing spent', async () => {
    const parent = await parentWith(parentFlags);
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    for (const event of [
      { route: 'POST /v1/spends', body: { tx: child.hex, [flag]: true } },
      { route: 'POST /v1/batch/spends', body: { txs: [child.hex], [flag]: true } },
    ]) {
      const reply = await invoke(spend, event);
      expect([event.route, reply.statusCode, reply.body]).toEqual([
        event.route,
        403,
        { error: expect.objectContaining(refused(flag)) },
      ]);
    }
    expect(await status(parent)).not.toBe('SPENT');
  });

  test('from blockValidation through API Gateway: spent, single and batch', async () => {
    const parent = await parentWith(parentFlags);
    const a = makeTx({ inputs: [{ parent, vout: 0 }] });
    const b = makeTx({ inputs: [{ parent, vout: 1 }] });
    const both = { ignoreLocked: true, ignoreConflicting: true };
    expect((await post(spend as Handler, '/v1/spends', { tx: a.hex, ...both }, BLOCK_VALIDATION)).statusCode).toBe(200);
    const batch = await post(spend as Handler, '/v1/batch/spends', { txs: [b.hex], ...both }, BLOCK_VALIDATION);
    expect([batch.statusCode, batch.json.results[0].status]).toEqual([200, 200]);
  });
});

describe('unspend with flagAsLocked', () => {
  async function spent() {
    const parent = await parentWith();
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    expect((await post(spend as Handler, '/v1/spends', { tx: child.hex })).statusCode).toBe(200);
    return { parent, child };
  }

  test('from a validator and from a direct invoker: 403 naming it; still spent, not locked', async () => {
    const { parent, child } = await spent();
    const body = { spends: [spendItem(parent, 0, child)], flagAsLocked: true };
    const viaApi = await post(unspend as Handler, '/v1/unspends', body);
    expect([viaApi.statusCode, viaApi.json.error]).toEqual([403, expect.objectContaining(refused('flagAsLocked'))]);
    const direct = await invoke(unspend, { route: 'POST /v1/unspends', body });
    expect([direct.statusCode, direct.body]).toEqual([
      403,
      { error: expect.objectContaining(refused('flagAsLocked')) },
    ]);
    expect(await status(parent)).toBe('SPENT');
    expect(await locked(parent)).toBe(false);
  });

  test('from blockValidation: unspent and locked', async () => {
    const { parent, child } = await spent();
    const body = { spends: [spendItem(parent, 0, child)], flagAsLocked: true };
    expect((await post(unspend as Handler, '/v1/unspends', body, BLOCK_VALIDATION)).statusCode).toBe(200);
    expect(await locked(parent)).toBe(true);
    expect(await status(parent)).toBe('LOCKED');
  });

  test('a made-up spender (the review) locks nothing, even from blockValidation; the real spend stays', async () => {
    const { parent } = await spent();
    const untouched = await parentWith();
    const madeUp = 'ab'.repeat(32);
    const body = {
      spends: [spendItem(parent, 0, madeUp), spendItem(untouched, 0, madeUp)],
      flagAsLocked: true,
    };
    expect((await post(unspend as Handler, '/v1/unspends', body, BLOCK_VALIDATION)).statusCode).toBe(200);
    expect(await locked(parent)).toBe(false);
    expect(await locked(untouched)).toBe(false);
    expect(await status(parent)).toBe('SPENT');
    expect(await status(untouched)).toBe('OK');
  });
});
