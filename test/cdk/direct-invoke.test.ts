/**
 * Direct invocation in the template: the function names as outputs, lambda:InvokeFunction for each caller role only
 * on the functions whose every route it may call (invoking skips API Gateway's per-route authorization), and the
 * principals configured per role in the functions' resource policies.
 */
import { ROUTES } from '../../cdk/api';
import { ConfigurationError } from '../../cdk/config';
import { leastInvokerRole } from '../../cdk/direct-invoke';
import { actionsOf, API_FUNCTION_IDS, logicalId, resourcesOf, synth, type Synth } from './helpers';

const VALIDATOR_CALLER = 'arn:aws:iam::111122223333:role/validator-service';
const ADMIN_ACCOUNT = '444455556666';

let s: Synth;
beforeAll(() => {
  s = synth({ validatorInvokers: VALIDATOR_CALLER, adminInvokers: ADMIN_ACCOUNT });
});

const API_FUNCTIONS = {
  create: 'validator',
  spend: 'validator',
  unspend: 'validator',
  getUtxo: 'validator',
  get: 'blockValidation',
  setMined: 'blockValidation',
  admin: 'admin',
} as const;

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

describe('direct invocation', () => {
  test("each API function's least invoker role is the highest role among its routes", () => {
    for (const [fn, role] of Object.entries(API_FUNCTIONS))
      expect([fn, leastInvokerRole(fn as never)]).toEqual([fn, role]);
    expect(leastInvokerRole('signals')).toBeUndefined();
    expect(leastInvokerRole('cleanup')).toBeUndefined();
    // a route of a higher role on a function raises the function's role
    expect(leastInvokerRole('create', [...ROUTES, { method: 'POST', path: '/x', fn: 'create', role: 'admin' }])).toBe(
      'admin',
    );
  });

  test("the API's roles may invoke exactly the functions whose every route they may call", () => {
    expect([...invocableBy('Validator')].sort()).toEqual(['create', 'getUtxo', 'spend', 'unspend']);
    expect([...invocableBy('BlockValidation')].sort()).toEqual([
      'create',
      'get',
      'getUtxo',
      'setMined',
      'spend',
      'unspend',
    ]);
    expect([...invocableBy('Admin')].sort()).toEqual(Object.keys(API_FUNCTIONS).sort());
  });

  test('configured principals are granted through resource policies, by role', () => {
    const permissions = Object.values(resourcesOf(s.template, 'AWS::Lambda::Permission')).map((p) => ({
      principal: JSON.stringify(p.Properties!.Principal),
      fn: JSON.stringify(p.Properties!.FunctionName),
      action: p.Properties!.Action,
    }));
    const granted = (principal: string) =>
      Object.entries(API_FUNCTION_IDS)
        .filter(([, prefix]) =>
          permissions.some(
            (p) => p.principal.includes(principal) && p.fn.includes(prefix) && p.action === 'lambda:InvokeFunction',
          ),
        )
        .map(([fn]) => fn)
        .sort();
    expect(granted(VALIDATOR_CALLER)).toEqual(['create', 'getUtxo', 'spend', 'unspend']);
    expect(granted(ADMIN_ACCOUNT)).toEqual(Object.keys(API_FUNCTIONS).sort());
  });

  test('the function names are stack outputs', () => {
    const outputs = s.template.toJSON().Outputs as Record<string, { Description?: string }>;
    for (const fn of Object.keys(API_FUNCTIONS)) {
      const name = `${fn.charAt(0).toUpperCase()}${fn.slice(1)}FunctionName`;
      expect(outputs[name]?.Description).toMatch(/direct invocation/);
    }
    expect(outputs.SignalsFunctionName).toBeUndefined();
  });

  test('a principal that is not an IAM role/user ARN or account id stops synthesis naming the key', () => {
    expect(() => synth({ blockValidationInvokers: 'arn:aws:s3:::bucket' })).toThrow(ConfigurationError);
    expect(() => synth({ blockValidationInvokers: 'arn:aws:s3:::bucket' })).toThrow(/blockValidationInvokers/);
  });
});
