/**
 * What a caller is trusted with, per request (docs/security.md, "What a validator is trusted with" and "Direct
 * invocation"): the caller's role comes from API Gateway's signer (an assumed-role ARN of one of the roles named by
 * API_CALLER_ROLES), or, for a direct invocation, from the least role allowed to invoke the function. Create fields
 * that a later blockValidation route sets on an existing tx (minedBlocks, locked, conflicting) are 403
 * FIELD_NOT_ALLOWED below that role; every request's log line says how it came in and who signed; an admin route's
 * line is repeated as "admin operation". Inside Lambda the way in is Lambda's invokedFunctionArn: only an invocation of
 * the gateway alias is API Gateway's, so an API Gateway-shaped event sent with Invoke is direct and the signer it
 * names is not believed (security review N9).
 */
import './powertools-env';

import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { handler as admin } from '../../functions/admin';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { handler as getUtxo } from '../../functions/get-utxo';
import { handler as spend } from '../../functions/spend';
import { callerOf, parseCallerRoles } from '../../lib/http/caller';
import type { DirectInvocation, DirectResult } from '../../lib/http/direct-invocation';
import { makeTx, rootTx, utxoHashOf } from '../fixtures/txs';
import { apiEvent, captureStdout, gatewayContext, jsonLines, lambdaContext, type ApiEventOptions } from './events';
import { useTestRuntime } from './runtime-env';
import { ADMIN, BLOCK_VALIDATION, inLambda, restoresCallerEnv, ROLES, signer, VALIDATOR } from './caller-roles';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type DirectHandler = (event: DirectInvocation, context: Context) => Promise<DirectResult>;

useTestRuntime('fn-caller');

restoresCallerEnv(afterEach);

/** A request through API Gateway (the gateway alias), signed by `userArn`; or invoked as `context` says. */
async function call(handler: Handler, options: ApiEventOptions, userArn?: string, context = gatewayContext()) {
  const event = apiEvent(options);
  if (userArn !== undefined) event.requestContext.identity.userArn = userArn;
  const { result, lines } = await captureStdout(() => handler(event, context));
  return { ...result, json: result.body ? JSON.parse(result.body) : undefined, logs: jsonLines(lines) };
}

async function invoke(handler: DirectHandler, event: DirectInvocation) {
  const { result, lines } = await captureStdout(() => handler(event, lambdaContext()));
  return { ...result, logs: jsonLines(lines) };
}

async function stored(txid: string): Promise<number> {
  const reply = await call(get as Handler, { method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid } });
  return reply.statusCode;
}

const MINED = [{ blockId: 1, blockHeight: 900, subtreeIdx: 0 }];

describe('create fields above the caller role', () => {
  test.each([
    ['minedBlocks', { minedBlocks: MINED }],
    ['locked', { locked: true }],
    ['conflicting', { conflicting: true }],
  ])('a validator sending %s is 403 FIELD_NOT_ALLOWED naming it; nothing is stored', async (field, extra) => {
    inLambda(ROLES);
    const f = rootTx(1);
    const reply = await call(
      create as Handler,
      { method: 'POST', resource: '/v1/txs', body: { tx: f.hex, ...extra } },
      VALIDATOR,
    );
    expect(reply.statusCode).toBe(403);
    expect(reply.json.error).toMatchObject({
      code: 'FIELD_NOT_ALLOWED',
      details: { field, required: 'blockValidation', role: 'validator' },
    });
    expect(await stored(f.txid)).toBe(404);
    // the same fields false or absent are what a validator sends anyway
    const plain = await call(
      create as Handler,
      { method: 'POST', resource: '/v1/txs', body: { tx: f.hex } },
      VALIDATOR,
    );
    expect(plain.statusCode).toBe(201);
  });

  test('blockValidation (and an admin) may send them', async () => {
    inLambda(ROLES);
    const f = rootTx(1);
    const body = { tx: f.hex, minedBlocks: MINED, locked: true };
    const reply = await call(create as Handler, { method: 'POST', resource: '/v1/txs', body }, BLOCK_VALIDATION);
    expect(reply.statusCode).toBe(201);
    expect(await stored(f.txid)).toBe(200);
  });

  test('a signer that is none of the three roles holds only the route role', async () => {
    inLambda(ROLES);
    for (const arn of [
      'arn:aws:sts::123456789012:assumed-role/SomeOtherRole/x',
      'arn:aws:iam::123456789012:user/ci',
      '',
    ]) {
      const f = rootTx(1);
      const reply = await call(
        create as Handler,
        { method: 'POST', resource: '/v1/txs', body: { tx: f.hex, locked: true } },
        arn,
      );
      expect([arn, reply.statusCode]).toEqual([arn, 403]);
    }
  });

  test('inside Lambda without API_CALLER_ROLES it fails closed: the route role only', async () => {
    inLambda(undefined);
    const f = rootTx(1);
    const reply = await call(
      create as Handler,
      { method: 'POST', resource: '/v1/txs', body: { tx: f.hex, minedBlocks: MINED } },
      BLOCK_VALIDATION,
    );
    expect(reply.statusCode).toBe(403);
  });

  test('the batch route: an item with a restricted field makes the request 403 naming txs[i].field; nothing is stored', async () => {
    inLambda(ROLES);
    const a = rootTx(1);
    const b = rootTx(1);
    const reply = await call(
      create as Handler,
      { method: 'POST', resource: '/v1/batch/txs', body: { txs: [{ tx: a.hex }, { tx: b.hex, conflicting: true }] } },
      VALIDATOR,
    );
    expect(reply.statusCode).toBe(403);
    expect(reply.json.error.details).toMatchObject({ field: 'txs[1].conflicting' });
    expect(await stored(a.txid)).toBe(404);
  });

  test('a direct invocation holds the least role that may invoke the function: create is blockValidation', async () => {
    inLambda(ROLES);
    const f = rootTx(1);
    const reply = await invoke(create as unknown as DirectHandler, {
      route: 'POST /v1/txs',
      body: { tx: f.hex, minedBlocks: MINED },
    });
    expect(reply.statusCode).toBe(201);
  });
});

describe('the invoker path and the caller on every request; admin operations flagged', () => {
  test('through API Gateway: invoker api, the signer ARN and its role; an admin route is an "admin operation"', async () => {
    inLambda(ROLES);
    const adminArn = signer('Stage-ApiAdminRole-CCC');
    const reply = await call(
      admin as Handler,
      { method: 'PUT', resource: '/v1/chain/tip/force', body: { height: 1000 } },
      adminArn,
    );
    expect(reply.statusCode).toBe(200);
    const request = reply.logs.find((l) => l.message === 'request');
    expect(request).toMatchObject({
      invoker: 'api',
      callerArn: adminArn,
      callerRole: 'admin',
      operation: 'forceChainTip',
    });
    expect(reply.logs.find((l) => l.message === 'admin operation')).toMatchObject({
      level: 'WARN',
      invoker: 'api',
      callerArn: adminArn,
    });
  });

  test('through the Lambda Invoke API: invoker direct, no caller ARN (Lambda gives none), the least invoker role', async () => {
    inLambda(ROLES);
    const reply = await invoke(admin as unknown as DirectHandler, {
      route: 'PUT /v1/chain/tip/force',
      body: { height: 1000 },
    });
    expect(reply.statusCode).toBe(200);
    const line = reply.logs.find((l) => l.message === 'admin operation');
    expect(line).toMatchObject({ invoker: 'direct', callerRole: 'admin' });
    expect(line?.callerArn).toBeUndefined();
  });

  test("invoker follows invokedArn, Lambda's own; callerArn is API Gateway's signer", async () => {
    inLambda(ROLES);
    const reply = await call(
      get as Handler,
      { method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: rootTx(1).txid } },
      VALIDATOR,
    );
    const line = reply.logs.find((l) => l.message === 'request');
    expect(line).toMatchObject({
      invoker: 'api',
      callerArn: VALIDATOR,
      invokedArn: gatewayContext().invokedFunctionArn,
    });
    expect(String(line?.invokedArn)).toMatch(/:function:utxo-store-test:api$/);
    expect(line?.claimedCallerArn).toBeUndefined();
  });

  test('a route below admin logs no admin operation', async () => {
    inLambda(ROLES);
    const reply = await call(
      get as Handler,
      { method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: rootTx(1).txid } },
      VALIDATOR,
    );
    expect(reply.logs.find((l) => l.message === 'request')).toMatchObject({ invoker: 'api', callerRole: 'validator' });
    expect(reply.logs.find((l) => l.message === 'admin operation')).toBeUndefined();
  });
});

describe('an API Gateway-shaped event is believed only under the gateway alias (review N9)', () => {
  // a validator-level direct invoker of spend writes a complete API Gateway event naming a blockValidation signer,
  // to send ignoreLocked, blockValidation's flag
  const FORGED = [
    ['the unqualified function', lambdaContext()],
    ['$LATEST', lambdaContext(30_000, undefined, '$LATEST')],
    ['a version', lambdaContext(30_000, undefined, '7')],
    ['another alias', lambdaContext(30_000, undefined, 'live')],
    ['a function named like the alias, unqualified', lambdaContext(30_000, 'api')],
  ] as const;

  async function lockedParent() {
    const parent = rootTx(1);
    const body = { tx: parent.hex, locked: true };
    expect(
      (await call(create as Handler, { method: 'POST', resource: '/v1/txs', body }, BLOCK_VALIDATION)).statusCode,
    ).toBe(201);
    return parent;
  }

  async function utxoStatus(parent: ReturnType<typeof rootTx>): Promise<string> {
    const reply = await call(
      getUtxo as Handler,
      {
        method: 'GET',
        resource: '/v1/utxos/{txid}/{vout}',
        pathParameters: { txid: parent.txid, vout: '0' },
        query: { utxoHash: utxoHashOf(parent, 0) },
      },
      VALIDATOR,
    );
    return reply.json.status;
  }

  test.each(FORGED)(
    'invoked as %s: direct, the named signer not believed, ignoreLocked refused 403',
    async (_, context) => {
      inLambda(ROLES);
      const parent = await lockedParent();
      const child = makeTx({ inputs: [{ parent, vout: 0 }] });
      const spendEvent = { method: 'POST', resource: '/v1/spends', body: { tx: child.hex, ignoreLocked: true } };
      const reply = await call(spend as Handler, spendEvent, BLOCK_VALIDATION, context);
      expect([reply.statusCode, reply.json.error]).toEqual([
        403,
        expect.objectContaining({
          code: 'FIELD_NOT_ALLOWED',
          details: { field: 'ignoreLocked', required: 'blockValidation', role: 'validator' },
        }),
      ]);
      const line = reply.logs.find((l) => l.message === 'request');
      expect(line).toMatchObject({
        invoker: 'direct',
        claimedCallerArn: BLOCK_VALIDATION,
        callerRole: 'validator',
        invokedArn: context.invokedFunctionArn,
      });
      expect(line?.callerArn).toBeUndefined();
      expect(await utxoStatus(parent)).toBe('LOCKED');
    },
  );

  test("the same event invoked through the gateway alias is API Gateway's: the signer believed, spent", async () => {
    inLambda(ROLES);
    const parent = await lockedParent();
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    const spendEvent = { method: 'POST', resource: '/v1/spends', body: { tx: child.hex, ignoreLocked: true } };
    const reply = await call(spend as Handler, spendEvent, BLOCK_VALIDATION, gatewayContext());
    expect(reply.statusCode).toBe(200);
    expect(reply.logs.find((l) => l.message === 'request')).toMatchObject({
      invoker: 'api',
      callerArn: BLOCK_VALIDATION,
      callerRole: 'blockValidation',
    });
    expect(await utxoStatus(parent)).toBe('SPENT');
  });

  test('an admin operation sent with Invoke naming an admin signer: logged direct, with the claim', async () => {
    inLambda(ROLES);
    const reply = await call(
      admin as Handler,
      { method: 'PUT', resource: '/v1/chain/tip/force', body: { height: 1000 } },
      ADMIN,
      lambdaContext(),
    );
    // the admin function's direct invokers hold admin anyway; the audit line says it was not API Gateway's
    expect(reply.statusCode).toBe(200);
    const line = reply.logs.find((l) => l.message === 'admin operation');
    expect(line).toMatchObject({ invoker: 'direct', claimedCallerArn: ADMIN, callerRole: 'admin' });
    expect(line?.callerArn).toBeUndefined();
  });
});

describe('callerOf', () => {
  const event = (userArn: string | null) => {
    const e = apiEvent({ method: 'GET', resource: '/v1/health' });
    e.requestContext.identity.userArn = userArn;
    return e;
  };
  const env = { AWS_LAMBDA_FUNCTION_NAME: 'f', API_CALLER_ROLES: ROLES };

  const GATEWAY = 'arn:aws:lambda:eu-west-1:123456789012:function:bsv-utxo-store-spend:api';

  test('the role its ARN names, never below the route role; outside Lambda without roles: local, every role', () => {
    const base = {
      direct: false,
      routeRole: 'validator' as const,
      directRole: 'validator' as const,
      invokedArn: GATEWAY,
      env,
    };
    expect(callerOf({ ...base, event: event(BLOCK_VALIDATION) }).role).toBe('blockValidation');
    expect(callerOf({ ...base, event: event(VALIDATOR), routeRole: 'blockValidation' }).role).toBe('blockValidation');
    expect(callerOf({ ...base, event: event(null) }).role).toBe('validator');
    // a role name that merely contains a configured one is not it
    expect(callerOf({ ...base, event: event(signer('Stage-ApiAdminRole-CCC-evil')) }).role).toBe('validator');
    expect(callerOf({ ...base, env: {}, event: event(null) })).toEqual({ path: 'local', role: 'admin' });
    expect(
      callerOf({
        ...base,
        direct: true,
        directRole: 'blockValidation',
        event: event(signer('Stage-ApiAdminRole-CCC')),
      }),
    ).toEqual({
      path: 'direct',
      role: 'blockValidation',
    });
  });

  test('inside Lambda only an invocation of the gateway alias is api; outside Lambda the qualifier is not read', () => {
    const base = { direct: false, routeRole: 'validator' as const, directRole: 'validator' as const, env };
    const named = event(ADMIN);
    expect(callerOf({ ...base, event: named, invokedArn: GATEWAY })).toEqual({
      path: 'api',
      arn: ADMIN,
      role: 'admin',
    });
    for (const invokedArn of [
      undefined,
      GATEWAY.replace(/:api$/, ''),
      GATEWAY.replace(/:api$/, ':$LATEST'),
      GATEWAY.replace(/:api$/, ':apis'),
      'arn:aws:lambda:eu-west-1:123456789012:function:api',
      `${GATEWAY}:x`,
    ])
      expect([invokedArn, callerOf({ ...base, event: named, invokedArn })]).toEqual([
        invokedArn,
        { path: 'direct', claimedArn: ADMIN, role: 'validator' },
      ]);
    // outside Lambda (the local server, tests): as before, whatever the context says
    expect(callerOf({ ...base, env: {}, event: named })).toEqual({ path: 'local', arn: ADMIN, role: 'admin' });
  });

  test('a malformed API_CALLER_ROLES is an error naming it', () => {
    expect(() => parseCallerRoles('root=Admin')).toThrow(/API_CALLER_ROLES/);
    expect(parseCallerRoles(ROLES)?.get('Stage-ApiAdminRole-CCC')).toBe('admin');
  });
});
