/**
 * Direct invocation in the template (security review #1): the function names as outputs, lambda:InvokeFunction for
 * each caller role only on the unqualified functions whose every route and field it may call (invoking skips API
 * Gateway's per-route authorization), and one full resource policy per ARN of an API function
 * (AWS::Lambda::ResourcePolicy): the unqualified function allows the configured invokers and denies every other IAM
 * principal, whatever its own policies allow; the gateway alias API Gateway invokes (review N9) allows API Gateway
 * from this API's routes and denies every IAM principal, the invokers and roles included; its version denies them
 * too. The Deny is evaluated here as IAM would for a caller's principal ARN.
 */
import { ROUTES } from '../../cdk/api';
import { ConfigurationError } from '../../cdk/config';
import { leastInvokerRole } from '../../cdk/direct-invoke';
import { INVOKE_ACTIONS } from '../../cdk/function-policy';
import { GATEWAY_ALIAS } from '../../lib/http/gateway-alias';
import { actionsOf, API_FUNCTION_IDS, logicalId, resourcesOf, synth, type Synth } from './helpers';

const VALIDATOR_CALLER = 'arn:aws:iam::111122223333:role/validator-service';
const ADMIN_CALLER = 'arn:aws:iam::444455556666:role/ops-admin';

let s: Synth;
beforeAll(() => {
  s = synth({ validatorInvokers: VALIDATOR_CALLER, adminInvokers: ADMIN_CALLER });
});

/** each API function's least invoker role: create is blockValidation's (its create fields are, lib/http/field-roles) */
const API_FUNCTIONS = {
  create: 'blockValidation',
  spend: 'validator',
  unspend: 'validator',
  getUtxo: 'validator',
  status: 'validator',
  get: 'blockValidation',
  setMined: 'blockValidation',
  admin: 'admin',
} as const;
const RANK = { validator: 0, blockValidation: 1, admin: 2 } as const;

type Statement = Record<string, unknown> & {
  Sid?: string;
  Effect?: string;
  Condition?: Record<string, Record<string, unknown>>;
};

/** Logical ids of the functions a role's identity policies allow to invoke. */
function invocableBy(role: 'Validator' | 'BlockValidation' | 'Admin'): Set<string> {
  const roleId = logicalId(s.template, 'AWS::IAM::Role', `Api${role}Role`);
  const out = new Set<string>();
  for (const p of Object.values(resourcesOf(s.template, 'AWS::IAM::Policy'))) {
    const roles = p.Properties!.Roles as { Ref: string }[];
    if (!roles.some((r) => r.Ref === roleId)) continue;
    const doc = p.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] };
    for (const st of doc.Statement) {
      if (!actionsOf(st).includes('lambda:InvokeFunction')) continue;
      for (const r of [st.Resource].flat()) {
        const text = JSON.stringify(r);
        for (const [fn, prefix] of Object.entries(API_FUNCTION_IDS)) if (text.includes(prefix)) out.add(fn);
      }
    }
  }
  return out;
}

/** The logical ids of an API function, its gateway alias (named `api`) and the alias's version. */
function idsOf(fn: string, template = s.template) {
  const fnId = logicalId(template, 'AWS::Lambda::Function', API_FUNCTION_IDS[fn]);
  const of = (type: string) =>
    Object.entries(resourcesOf(template, type))
      .filter(([, r]) => JSON.stringify(r.Properties!.FunctionName) === JSON.stringify({ Ref: fnId }))
      .map(([id]) => id);
  const aliases = of('AWS::Lambda::Alias');
  const versions = of('AWS::Lambda::Version');
  expect([fn, aliases.length, versions.length]).toEqual([fn, 1, 1]);
  expect(resourcesOf(template, 'AWS::Lambda::Alias')[aliases[0]].Properties!.Name).toBe(GATEWAY_ALIAS);
  return { fn: fnId, alias: aliases[0], version: versions[0] };
}

/** The resource policy statements of an API function's ARN: unqualified, its gateway alias or the alias's version. */
function policyOf(
  fn: string,
  which: 'function' | 'alias' | 'version' = 'function',
  template = s.template,
): Statement[] {
  const ids = idsOf(fn, template);
  const arn = which === 'function' ? { 'Fn::GetAtt': [ids.fn, 'Arn'] } : { Ref: ids[which] };
  const policies = Object.values(resourcesOf(template, 'AWS::Lambda::ResourcePolicy')).filter(
    (p) => JSON.stringify(p.Properties!.ResourceArn) === JSON.stringify(arn),
  );
  expect([fn, which, policies.length]).toEqual([fn, which, 1]);
  return (policies[0].Properties!.PolicyDocument as { Statement: Statement[] }).Statement;
}

/** The role ARN token of the API role `role` (as it appears in a policy). */
function roleArn(role: 'Validator' | 'BlockValidation' | 'Admin'): string {
  return JSON.stringify({ 'Fn::GetAtt': [logicalId(s.template, 'AWS::IAM::Role', `Api${role}Role`), 'Arn'] });
}

/**
 * Whether the policy's Deny applies to an IAM principal (not an AWS service) whose aws:PrincipalArn is `principal`
 * (a literal ARN, or an API role's ARN token): ArnNotLike over the exempted list, as IAM evaluates it.
 */
function denied(statements: Statement[], principal: string): boolean {
  const deny = statements.filter((st) => st.Effect === 'Deny');
  return deny.some((st) => {
    // N4: every invoke action, not only InvokeFunction (InvokeAsync is a separate action)
    if (!INVOKE_ACTIONS.every((a) => actionsOf(st).includes(a))) return false;
    if (st.Condition?.Bool?.['aws:PrincipalIsAWSService'] !== 'false') return false;
    const exempt = (st.Condition?.ArnNotLike?.['aws:PrincipalArn'] ?? []) as unknown[];
    return !exempt.some((e) => (typeof e === 'string' ? e === principal : JSON.stringify(e) === principal));
  });
}

describe('direct invocation', () => {
  test("each API function's least invoker role is the highest role among its routes and their restricted fields", () => {
    for (const [fn, role] of Object.entries(API_FUNCTIONS))
      expect([fn, leastInvokerRole(fn as never)]).toEqual([fn, role]);
    expect(leastInvokerRole('signals')).toBeUndefined();
    expect(leastInvokerRole('cleanup')).toBeUndefined();
    // a route of a higher role on a function raises the function's role
    expect(leastInvokerRole('spend', [...ROUTES, { method: 'POST', path: '/x', fn: 'spend', role: 'admin' }])).toBe(
      'admin',
    );
  });

  test("the roles' invoke grants name the unqualified functions only, never a qualifier", () => {
    const resources = Object.values(resourcesOf(s.template, 'AWS::IAM::Policy'))
      .flatMap((p) => (p.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement)
      .filter((st) => actionsOf(st).includes('lambda:InvokeFunction'))
      .flatMap((st) => [st.Resource].flat());
    expect(resources.length).toBeGreaterThan(0);
    for (const r of resources) expect(r).toMatchObject({ 'Fn::GetAtt': [expect.any(String), 'Arn'] });
  });

  test("the API's roles may invoke exactly the functions whose every route and field they may call", () => {
    const of = (rank: number) =>
      Object.entries(API_FUNCTIONS)
        .filter(([, role]) => RANK[role] <= rank)
        .map(([fn]) => fn)
        .sort();
    expect([...invocableBy('Validator')].sort()).toEqual(of(0));
    expect([...invocableBy('Validator')].sort()).toEqual(['getUtxo', 'spend', 'status', 'unspend']);
    expect([...invocableBy('BlockValidation')].sort()).toEqual(of(1));
    expect([...invocableBy('Admin')].sort()).toEqual(of(2));
  });

  test('no AWS::Lambda::Permission beside the resource policies: each API function has one full policy', () => {
    const permissions = Object.values(resourcesOf(s.template, 'AWS::Lambda::Permission')).map((p) =>
      JSON.stringify(p.Properties!.FunctionName),
    );
    for (const [fn, prefix] of Object.entries(API_FUNCTION_IDS))
      expect([fn, permissions.filter((p) => p.includes(`"${prefix}`))]).toEqual([fn, []]);
    for (const fn of Object.keys(API_FUNCTIONS)) policyOf(fn);
  });

  test('N9: every API Gateway integration invokes the gateway alias of the function that serves the route', () => {
    const methods = Object.values(resourcesOf(s.template, 'AWS::ApiGateway::Method'));
    expect(methods.length).toBeGreaterThan(ROUTES.length);
    const aliases = new Set(Object.keys(API_FUNCTIONS).map((fn) => idsOf(fn).alias));
    for (const m of methods) {
      const uri = JSON.stringify((m.Properties!.Integration as { Uri: unknown }).Uri);
      const named = [...uri.matchAll(/\{"Ref":"([^"]+)"\}/g)].map((x) => x[1]).filter((id) => !id.startsWith('AWS::'));
      expect([uri, named.length, aliases.has(named[0])]).toEqual([uri, 1, true]);
    }
    for (const route of ROUTES) {
      const alias = idsOf(route.fn).alias;
      const served = methods.filter(
        (m) =>
          m.Properties!.HttpMethod === route.method &&
          JSON.stringify((m.Properties!.Integration as { Uri: unknown }).Uri).includes(`"${alias}"`),
      );
      expect([route.method, route.path, served.length > 0]).toEqual([route.method, route.path, true]);
    }
  });

  test('API Gateway may invoke only the gateway alias, only from its own routes of this API, in this account', () => {
    for (const fn of Object.keys(API_FUNCTIONS)) {
      const api = policyOf(fn, 'alias').filter((st) => st.Sid === 'ApiGateway');
      expect(api).toHaveLength(1);
      expect(api[0]).toMatchObject({ Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } });
      expect(api[0].Condition!.StringEquals).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
      const sources = api[0].Condition!.ArnLike['aws:SourceArn'] as unknown[];
      const routes = ROUTES.filter((r) => r.fn === fn);
      // admin: the whole stage (its catch-all methods); every other function: one ARN per route, by method and path
      expect([fn, sources.length]).toEqual([fn, fn === 'admin' ? 1 : routes.length]);
      if (fn === 'admin') expect(JSON.stringify(sources[0])).toMatch(/\/dev\/\*\/\*"\]\]\}$/);
      expect(JSON.stringify(policyOf(fn, 'alias')).length).toBeLessThan(20_000);
      if (fn !== 'admin')
        for (const r of routes)
          expect(JSON.stringify(sources)).toContain(`/${r.method}${r.path.replace(/\{[^}]+\}/g, '*')}"`);
      // the unqualified function and the version allow no AWS service: API Gateway's way in is the alias
      for (const which of ['function', 'version'] as const)
        expect([fn, which, JSON.stringify(policyOf(fn, which)).includes('apigateway')]).toEqual([fn, which, false]);
    }
  });

  test('N9: the gateway alias and its version deny every IAM principal, the roles and the configured invokers included', () => {
    const everyone = [
      'arn:aws:iam::123456789012:role/PowerUser',
      '*',
      VALIDATOR_CALLER,
      ADMIN_CALLER,
      roleArn('Validator'),
      roleArn('BlockValidation'),
      roleArn('Admin'),
    ];
    for (const fn of Object.keys(API_FUNCTIONS))
      for (const which of ['alias', 'version'] as const) {
        const policy = policyOf(fn, which);
        for (const principal of everyone)
          expect([fn, which, principal, denied(policy, principal)]).toEqual([fn, which, principal, true]);
        // no Allow for an IAM principal: only API Gateway's (a service) on the alias
        const allows = policy.filter((st) => st.Effect === 'Allow');
        expect([fn, which, allows.map((st) => JSON.stringify(st.Principal))]).toEqual([
          fn,
          which,
          which === 'alias' ? ['{"Service":"apigateway.amazonaws.com"}'] : [],
        ]);
      }
  });

  test('every other IAM principal is denied, whatever its own policies allow: only the roles that may invoke and their invokers pass', () => {
    const others = ['arn:aws:iam::123456789012:role/PowerUser', 'arn:aws:iam::123456789012:user/ci', '*'];
    for (const [fn, least] of Object.entries(API_FUNCTIONS)) {
      const policy = policyOf(fn);
      for (const other of others) expect([fn, other, denied(policy, other)]).toEqual([fn, other, true]);
      for (const [role, rank] of [
        ['Validator', 0],
        ['BlockValidation', 1],
        ['Admin', 2],
      ] as const)
        expect([fn, role, denied(policy, roleArn(role))]).toEqual([fn, role, rank < RANK[least]]);
      expect([fn, denied(policy, VALIDATOR_CALLER)]).toEqual([fn, RANK[least] > 0]);
      expect([fn, denied(policy, ADMIN_CALLER)]).toEqual([fn, false]);
      // the configured invokers of the roles that may invoke it are allowed here (they may be of another account)
      const allowed = policy
        .filter((st) => st.Sid === 'ConfiguredInvokers')
        .flatMap((st) => [(st.Principal as { AWS: unknown }).AWS].flat());
      expect([fn, allowed.sort()]).toEqual([
        fn,
        (RANK[least] > 0 ? [ADMIN_CALLER] : [ADMIN_CALLER, VALIDATOR_CALLER]).sort(),
      ]);
    }
  });

  test('N4: the signal consumer and the cleanup function: only their triggers may invoke them', () => {
    const policies = (prefix: string) =>
      Object.values(resourcesOf(s.template, 'AWS::Lambda::ResourcePolicy')).filter((p) =>
        JSON.stringify(p.Properties!.ResourceArn).includes(`"${prefix}`),
      );
    for (const prefix of ['FunctionsSignals', 'FunctionsCleanup']) {
      const [policy] = policies(prefix);
      const statements = (policy.Properties!.PolicyDocument as { Statement: Statement[] }).Statement;
      expect(denied(statements, 'arn:aws:iam::123456789012:role/PowerUser')).toBe(true);
      expect(denied(statements, roleArn('Admin'))).toBe(true);
    }
    // the consumer's own role (the event source mapping's) is not caught
    const signals = (policies('FunctionsSignals')[0].Properties!.PolicyDocument as { Statement: Statement[] })
      .Statement;
    const fn = resourcesOf(s.template, 'AWS::Lambda::Function')[
      logicalId(s.template, 'AWS::Lambda::Function', 'FunctionsSignals')
    ];
    expect(denied(signals, JSON.stringify(fn.Properties!.Role))).toBe(false);
    // EventBridge only from the cleanup rules, and no AWS::Lambda::Permission beside the policy
    const cleanup = (policies('FunctionsCleanup')[0].Properties!.PolicyDocument as { Statement: Statement[] })
      .Statement;
    const rules = Object.keys(resourcesOf(s.template, 'AWS::Events::Rule')).filter((id) =>
      id.startsWith('TriggersCleanupSchedule'),
    );
    expect(cleanup.find((st) => st.Sid === 'EventBridgeRules')).toMatchObject({
      Principal: { Service: 'events.amazonaws.com' },
      Condition: { ArnLike: { 'aws:SourceArn': rules.map((r) => ({ 'Fn::GetAtt': [r, 'Arn'] })) } },
    });
    s.template.resourceCountIs('AWS::Lambda::Permission', 0);
  });

  test('with provisioned concurrency the gateway alias carries it; the function, alias and version keep their policies', () => {
    const t = synth({ provisionedConcurrency: 'spend:2' }).template;
    const ids = idsOf('spend', t);
    expect(resourcesOf(t, 'AWS::Lambda::Alias')[ids.alias].Properties!.ProvisionedConcurrencyConfig).toEqual({
      ProvisionedConcurrentExecutions: 2,
    });
    // one alias per function: no `live` beside the gateway alias
    expect(Object.values(resourcesOf(t, 'AWS::Lambda::Alias')).map((a) => a.Properties!.Name)).not.toContain('live');
    for (const which of ['function', 'alias', 'version'] as const)
      expect(denied(policyOf('spend', which, t), 'arn:aws:iam::123456789012:role/PowerUser')).toBe(true);
    expect(denied(policyOf('spend', 'function', t), VALIDATOR_CALLER)).toBe(true); // not configured in this synth
    expect(denied(policyOf('spend', 'alias', t), roleArn('Validator'))).toBe(true);
    // a replaced version is deleted: a kept one would keep no policy of ours
    for (const v of Object.values(resourcesOf(t, 'AWS::Lambda::Version'))) expect(v.DeletionPolicy).toBe('Delete');
  });

  test('every API function knows the three roles by name (API_CALLER_ROLES, lib/http/caller.ts)', () => {
    for (const prefix of Object.values(API_FUNCTION_IDS)) {
      const fn = resourcesOf(s.template, 'AWS::Lambda::Function')[
        logicalId(s.template, 'AWS::Lambda::Function', prefix)
      ];
      const env = JSON.stringify(
        (fn.Properties!.Environment as { Variables: Record<string, unknown> }).Variables.API_CALLER_ROLES,
      );
      for (const role of ['Validator', 'BlockValidation', 'Admin'])
        expect(env).toContain(logicalId(s.template, 'AWS::IAM::Role', `Api${role}Role`));
      expect(env).toMatch(/validator=.*blockValidation=.*admin=/);
    }
  });

  test('the function names are stack outputs', () => {
    const outputs = s.template.toJSON().Outputs as Record<string, { Description?: string }>;
    for (const fn of Object.keys(API_FUNCTIONS)) {
      const name = `${fn.charAt(0).toUpperCase()}${fn.slice(1)}FunctionName`;
      expect(outputs[name]?.Description).toMatch(/direct invocation/);
    }
    expect(outputs.SignalsFunctionName).toBeUndefined();
  });

  test('a principal that is not an IAM role or user ARN stops synthesis naming the key and the value; a bare account id too', () => {
    expect(() => synth({ blockValidationInvokers: 'arn:aws:s3:::bucket' })).toThrow(ConfigurationError);
    expect(() => synth({ blockValidationInvokers: 'arn:aws:s3:::bucket' })).toThrow(/blockValidationInvokers/);
    expect(() => synth({ adminInvokers: '444455556666' })).toThrow(
      /"adminInvokers".*"444455556666" is a bare account id/,
    );
  });
});
