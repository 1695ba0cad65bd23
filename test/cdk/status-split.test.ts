/**
 * The function split (security review #9) and the signal queue's senders (#10), in the template. The validators'
 * cheap reads (GET /v1/health, GET /v1/chain/tip) run on a status function of their own, with its own reserved
 * concurrency and API Gateway method throttles below the stage's; no validator route is left on the admin function,
 * whose reserved concurrency serves block validation's writes and the admin routes. Only the functions that send
 * signals may send to the signal queue.
 */
import { ROUTES } from '../../cdk/api';
import { FUNCTION_TABLE } from '../../cdk/functions';
import { FUNCTION_NAMES } from '../../cdk/config';
import {
  actionsOf,
  API_FUNCTION_IDS,
  FUNCTION_IDS,
  gatewayAliasId,
  logicalId,
  resourcesOf,
  statementsOf,
  synth,
  synthBeforeAll,
} from './helpers';

const s = synthBeforeAll();

/** The API function an API method integrates (its integration URI names the function's gateway alias). */
function integratedFunction(method: string, path: string): string | undefined {
  const t = s.template;
  const resources = resourcesOf(t, 'AWS::ApiGateway::Resource');
  const pathOf = (id: string): string => {
    const r = resources[id].Properties!;
    const parent = r.ParentId as { Ref?: string };
    return `${parent.Ref && resources[parent.Ref] ? pathOf(parent.Ref) : ''}/${r.PathPart as string}`;
  };
  for (const m of Object.values(resourcesOf(t, 'AWS::ApiGateway::Method'))) {
    const p = m.Properties!;
    const ref = (p.ResourceId as { Ref?: string }).Ref;
    if (p.HttpMethod !== method || !ref || !resources[ref] || pathOf(ref) !== path) continue;
    const uri = JSON.stringify((p.Integration as { Uri: unknown }).Uri);
    return Object.keys(API_FUNCTION_IDS).find((fn) => uri.includes(`"${gatewayAliasId(t, fn)}"`));
  }
  return undefined;
}

describe('the status function: the validators cheap reads apart from the admin function', () => {
  test('GET /v1/health and GET /v1/chain/tip are the status function routes, integrated with it', () => {
    expect(ROUTES.filter((r) => r.fn === 'status').map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v1/chain/tip',
      'GET /v1/health',
    ]);
    expect(integratedFunction('GET', '/v1/health')).toBe('status');
    expect(integratedFunction('GET', '/v1/chain/tip')).toBe('status');
    expect(integratedFunction('PUT', '/v1/chain/tip')).toBe('admin');
  });

  test('no validator route is served by the admin function (a validator fleet cannot use its concurrency)', () => {
    expect(ROUTES.filter((r) => r.fn === 'admin' && r.role === 'validator')).toEqual([]);
  });

  test('each has its own reserved concurrency', () => {
    const fns = resourcesOf(s.template, 'AWS::Lambda::Function');
    const reserved = (prefix: string) =>
      fns[logicalId(s.template, 'AWS::Lambda::Function', prefix)].Properties!.ReservedConcurrentExecutions;
    expect(reserved(FUNCTION_IDS.status)).toBe(10);
    expect(reserved(FUNCTION_IDS.admin)).toBe(10);
    expect(FUNCTION_NAMES).toContain('status');
    expect(FUNCTION_TABLE.status).toMatchObject({
      entry: 'functions/status.ts',
      blobs: ['probe'],
      sendsSignals: false,
    });
  });

  test('its role probes the queue for GET /v1/health, and nothing more on it', () => {
    const queue = { 'Fn::GetAtt': [logicalId(s.template, 'AWS::SQS::Queue', 'StorageSignalQueue'), 'Arn'] };
    expect(
      statementsOf(s.template, 'FunctionsStatus')
        .filter((st) => actionsOf(st).some((a) => a.startsWith('sqs:')))
        .map((st) => [actionsOf(st), st.Resource]),
    ).toEqual([[['sqs:GetQueueAttributes'], queue]]);
  });

  test("the status routes have method throttles of their own, below the stage's", () => {
    const stage = Object.values(resourcesOf(s.template, 'AWS::ApiGateway::Stage'))[0].Properties!;
    const settings = stage.MethodSettings as Record<string, unknown>[];
    for (const path of ['/~1v1~1health', '/~1v1~1chain~1tip'])
      expect(settings).toContainEqual(
        expect.objectContaining({
          ResourcePath: path,
          HttpMethod: 'GET',
          ThrottlingRateLimit: 50,
          ThrottlingBurstLimit: 100,
        }),
      );
    const custom = synth({ statusThrottleRateLimit: '5', statusThrottleBurstLimit: '7' }).template;
    const customStage = Object.values(resourcesOf(custom, 'AWS::ApiGateway::Stage'))[0].Properties!;
    expect(customStage.MethodSettings).toContainEqual(
      expect.objectContaining({ ResourcePath: '/~1v1~1health', ThrottlingRateLimit: 5, ThrottlingBurstLimit: 7 }),
    );
    expect(() => synth({ statusThrottleRateLimit: '5000' })).toThrow(/statusThrottleRateLimit.*apiThrottleRateLimit/);
  });
});

describe('the signal queue accepts messages only from the functions that send signals', () => {
  test('a Deny of sqs:SendMessage to every principal but the sender functions roles', () => {
    const t = s.template;
    const queue = logicalId(t, 'AWS::SQS::Queue', 'StorageSignalQueue');
    const policy = Object.values(resourcesOf(t, 'AWS::SQS::QueuePolicy')).find((p) =>
      JSON.stringify(p.Properties!.Queues).includes(queue),
    )!;
    const statements = (policy.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    const deny = statements.find((st) => st.Sid === 'OnlyTheSenderFunctions')!;
    expect(deny).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Action: 'sqs:SendMessage' });
    const exempt = JSON.stringify(
      (deny.Condition as { ArnNotEquals: Record<string, unknown> }).ArnNotEquals['aws:PrincipalArn'],
    );
    const fns = resourcesOf(t, 'AWS::Lambda::Function');
    for (const name of FUNCTION_NAMES) {
      const fn = fns[logicalId(t, 'AWS::Lambda::Function', FUNCTION_IDS[name])];
      const role = (fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect([name, exempt.includes(`"${role}"`)]).toEqual([name, FUNCTION_TABLE[name].sendsSignals]);
    }
  });
});

describe('audit', () => {
  test("the access log names the signer's ARN and account and API Gateway's error message (security review #11)", () => {
    const stage = Object.values(resourcesOf(s.template, 'AWS::ApiGateway::Stage'))[0].Properties!;
    const raw = (stage.AccessLogSetting as { Format: string }).Format;
    // API Gateway renders $context.error.messageString as a JSON string literal (quoted, escaped)
    const rendered = (message: string) => raw.replace('$context.error.messageString', JSON.stringify(message));
    const format = JSON.parse(rendered('denied')) as Record<string, string>;
    expect(format).toMatchObject({
      userArn: '$context.identity.userArn',
      accountId: '$context.identity.accountId',
      caller: '$context.identity.caller',
      errorMessage: 'denied',
      resourcePath: '$context.resourcePath',
      status: '$context.status',
    });
  });

  test('N6: an error message cannot add fields to the access log line (messageString, not the raw message)', () => {
    const raw = (
      Object.values(resourcesOf(s.template, 'AWS::ApiGateway::Stage'))[0].Properties!.AccessLogSetting as {
        Format: string;
      }
    ).Format;
    expect(raw).not.toMatch(/\$context\.error\.message(?!String)/);
    // a SigV4 error echoing a signed header the attacker wrote
    const hostile = 'bad signature x-h: ","userArn":"arn:aws:iam::111111111111:role/admin","x":"';
    const line = JSON.parse(raw.replace('$context.error.messageString', JSON.stringify(hostile))) as Record<
      string,
      string
    >;
    expect(line.errorMessage).toBe(hostile);
    expect(line.userArn).toBe('$context.identity.userArn');
    expect(Object.keys(line)).not.toContain('x');
  });
});
