/**
 * What a caller is trusted with, per request (docs/security.md, "What a validator is trusted with" and "Direct
 * invocation"): the caller's role comes from API Gateway's signer (an assumed-role ARN of one of the roles named by
 * API_CALLER_ROLES), or, for a direct invocation, from the least role allowed to invoke the function. Create fields
 * that a later blockValidation route sets on an existing tx (minedBlocks, locked, conflicting) are 403
 * FIELD_NOT_ALLOWED below that role; every request's log line says how it came in and who signed; an admin route's
 * line is repeated as "admin operation".
 */
import './powertools-env';

import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { handler as admin } from '../../functions/admin';
import { handler as create } from '../../functions/create';
import { handler as get } from '../../functions/get';
import { callerOf, parseCallerRoles } from '../../lib/http/caller';
import type { DirectInvocation, DirectResult } from '../../lib/http/direct-invocation';
import { rootTx } from '../fixtures/txs';
import { apiEvent, captureStdout, jsonLines, lambdaContext, type ApiEventOptions } from './events';
import { useTestRuntime } from './runtime-env';
import { BLOCK_VALIDATION, inLambda, restoresCallerEnv, ROLES, signer, VALIDATOR } from './caller-roles';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type DirectHandler = (event: DirectInvocation, context: Context) => Promise<DirectResult>;

useTestRuntime('fn-caller');

restoresCallerEnv(afterEach);

async function call(handler: Handler, options: ApiEventOptions, userArn?: string) {
  const event = apiEvent(options);
  if (userArn !== undefined) event.requestContext.identity.userArn = userArn;
  const { result, lines } = await captureStdout(() => handler(event, lambdaContext()));
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

  test("invoker and callerArn are logged as claimed by the event; invokedArn is Lambda's own", async () => {
    inLambda(ROLES);
    const reply = await call(
      get as Handler,
      { method: 'GET', resource: '/v1/txs/{txid}', pathParameters: { txid: rootTx(1).txid } },
      VALIDATOR,
    );
    expect(reply.logs.find((l) => l.message === 'request')).toMatchObject({
      invoker: 'api',
      callerArn: VALIDATOR,
      claimedByEvent: ['invoker', 'callerArn'],
      invokedArn: lambdaContext().invokedFunctionArn,
    });
  });

  test('an API Gateway-shaped event without the request context API Gateway always sets is not believed (review N9)', async () => {
    inLambda(ROLES);
    const adminArn = signer('Stage-ApiAdminRole-CCC');
    for (const drop of ['requestId', 'apiId', 'stage', 'requestTimeEpoch', 'identity.sourceIp'] as const) {
      const f = rootTx(1);
      // a hand-made event sent with Invoke, naming the admin role as its signer
      const event = apiEvent({ method: 'POST', resource: '/v1/txs', body: { tx: f.hex, locked: true } });
      event.requestContext.identity.userArn = adminArn;
      const context = event.requestContext as unknown as Record<string, Record<string, unknown>>;
      if (drop === 'identity.sourceIp') context.identity.sourceIp = '';
      else delete (context as Record<string, unknown>)[drop];
      const { result, lines } = await captureStdout(() => (create as Handler)(event, lambdaContext()));
      // the signer it names is ignored: the route's own role, so locked is refused
      expect([drop, result.statusCode]).toEqual([drop, 403]);
      const line = jsonLines(lines).find((l) => l.message === 'request');
      expect(line).toMatchObject({ invoker: 'direct', callerRole: 'validator', incompleteGatewayEvent: true });
      expect(line?.callerArn).toBeUndefined();
    }
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

describe('callerOf', () => {
  const event = (userArn: string | null) => {
    const e = apiEvent({ method: 'GET', resource: '/v1/health' });
    e.requestContext.identity.userArn = userArn;
    return e;
  };
  const env = { AWS_LAMBDA_FUNCTION_NAME: 'f', API_CALLER_ROLES: ROLES };

  test('the role its ARN names, never below the route role; outside Lambda without roles: local, every role', () => {
    const base = { direct: false, routeRole: 'validator' as const, directRole: 'validator' as const, env };
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

  test('a malformed API_CALLER_ROLES is an error naming it', () => {
    expect(() => parseCallerRoles('root=Admin')).toThrow(/API_CALLER_ROLES/);
    expect(parseCallerRoles(ROLES)?.get('Stage-ApiAdminRole-CCC')).toBe('admin');
  });
});
