/**
 * The deployments the IAM simulation evaluates (test/cdk/iam-simulation-*.test.ts, docs/security.md "What the IAM
 * simulation proves"): the dev deployment and a prod-like one (assumers, invokers, provisioned concurrency on an API
 * function and on cleanup, another region, s3:// packages), synthesised with their policies as IAM evaluates them
 * (test/cdk/iam-sim.ts), and what the tables need of them: each function's ARNs and role, the API's route ARNs and
 * caller roles, the principals and policies the requests use.
 */
import { arnPath } from '../../cdk/api';
import { FUNCTION_NAMES } from '../../cdk/config';
import { GATEWAY_ALIAS } from '../../lib/http/gateway-alias';
import { API_ROLES, type ApiRole } from '../../lib/http/roles';
import { FUNCTION_IDS, logicalId, resourcesOf, synth, type Synth } from './helpers';
import {
  ACCOUNT,
  envOf,
  evaluate,
  exportsOf,
  resolve,
  restApiPolicy,
  roleOfFunction,
  type Env,
  type Request,
  type Verdict,
} from './iam-sim';

export const OTHER_ACCOUNT = '222222222222';
export const INVOKER = `arn:aws:iam::${OTHER_ACCOUNT}:role/validator-service`;
/** the prod-like deployment's configured direct invokers, one per role (another account's, and this account's) */
export const INVOKERS: Record<ApiRole, string> = {
  validator: INVOKER,
  blockValidation: `arn:aws:iam::${OTHER_ACCOUNT}:role/block-validation-service`,
  admin: `arn:aws:iam::${ACCOUNT}:role/ops-invoker`,
};
export const POWER_USER = `arn:aws:iam::${ACCOUNT}:role/PowerUser`;
export const LAMBDA_ALL = [
  { name: 'lambda-all', policy: { Statement: [{ Effect: 'Allow', Action: 'lambda:*', Resource: '*' }] } },
];
export const API_ALL = [
  { name: 'api-all', policy: { Statement: [{ Effect: 'Allow', Action: 'execute-api:*', Resource: '*' }] } },
];
/** The Amazon Linux repositories are public: a stand-in for their bucket policy (AWS's, not in any template). */
export const PUBLIC_READ = (bucket: string) => ({
  Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket}/*` }],
});

export const PUBLIC_WRITE = {
  Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:PutObject', Resource: 'arn:aws:s3:::attacker-bucket/*' }],
};

export interface Deployment {
  name: string;
  synth: Synth;
  service: Env;
  cluster: Env;
  region: string;
}

export type DeploymentName = 'dev' | 'prod-like';

/** Synthesises one of the two deployments (slow: once per test file and deployment, in a beforeAll). */
export function deployment(name: DeploymentName): Deployment {
  return name === 'dev'
    ? synthesised('dev', {}, 'us-east-1')
    : synthesised(
        'prod-like',
        {
          stage: 'prod',
          region: 'eu-west-1',
          alarmEmail: 'ops@example.com',
          validatorAssumers: `arn:aws:iam::${ACCOUNT}:role/validator-*`,
          blockValidationAssumers: `arn:aws:iam::${ACCOUNT}:role/block-validation`,
          adminAssumers: `arn:aws:iam::${ACCOUNT}:role/ops-admin`,
          validatorInvokers: INVOKERS.validator,
          blockValidationInvokers: INVOKERS.blockValidation,
          adminInvokers: INVOKERS.admin,
          provisionedConcurrency: 'spend:2,cleanup:1',
          aerospikePackageUrl: 's3://my-artifacts/aerospike/server.tgz',
          exporterPackageUrl: 's3://my-artifacts/aerospike/exporter.rpm',
        },
        'eu-west-1',
      );
}

function synthesised(name: string, context: Record<string, unknown>, region: string): Deployment {
  const s = synth(context);
  const clusterJson = s.clusterTemplate.toJSON();
  return {
    name,
    synth: s,
    region,
    cluster: envOf(clusterJson, region),
    service: envOf(s.template.toJSON(), region, exportsOf(clusterJson)),
  };
}

/**
 * The named deployments, synthesized once per test file before its tests (synth is slow); the getter finds one by
 * name once they are built.
 */
export function useDeployments(names: DeploymentName[] = ['dev', 'prod-like']): (name: DeploymentName) => Deployment {
  const built: Deployment[] = [];
  beforeAll(() => {
    built.push(...names.map(deployment));
  }, 600_000);
  return (name) => {
    const d = built.find((x) => x.name === name);
    if (!d) throw new Error(`deployment ${name} not synthesized in this file`);
    return d;
  };
}

/**
 * Each function's logical id, role, and the ARNs a caller can name: the function, its alias (an API function's
 * gateway alias `api`; `live` for a trigger's provisioned concurrency) and the alias's version.
 */
export function functionsOf(d: Deployment) {
  const t = d.synth.template;
  return FUNCTION_NAMES.map((fn) => {
    const id = logicalId(t, 'AWS::Lambda::Function', FUNCTION_IDS[fn]);
    const arn = resolve({ 'Fn::GetAtt': [id, 'Arn'] }, d.service) as string;
    const aliases = Object.values(resourcesOf(t, 'AWS::Lambda::Alias'))
      .filter((a) => JSON.stringify(a.Properties!.FunctionName) === JSON.stringify({ Ref: id }))
      .map((a) => `${arn}:${String(a.Properties!.Name)}`);
    if (aliases.length > 1) throw new Error(`${fn} has ${aliases.length} aliases`);
    const qualified = aliases.length > 0 ? [aliases[0], `${arn}:1`] : [];
    /** API Gateway invokes an API function's gateway alias; the direct invokers, the unqualified function */
    const gateway = aliases.find((a) => a.endsWith(`:${GATEWAY_ALIAS}`));
    /** what API Gateway or the triggers invoke */
    const target = aliases[0] ?? arn;
    return { fn, id, arn, target, gateway, invocable: [arn, ...qualified], role: roleOfFunction(d.service, id) };
  });
}

export function apiOf(d: Deployment) {
  const id = logicalId(d.synth.template, 'AWS::ApiGateway::RestApi', 'Api');
  const apiId = resolve({ Ref: id }, d.service) as string;
  const stage = d.synth.stack.api.stageName;
  const routeArn = (method: string, path: string) =>
    `arn:aws:execute-api:${d.region}:${ACCOUNT}:${apiId}/${stage}/${method}${arnPath(path).replace(/\*/g, 'abc')}`;
  const roleIds = Object.fromEntries(
    API_ROLES.map((r) => [
      r,
      logicalId(d.synth.template, 'AWS::IAM::Role', `Api${r.charAt(0).toUpperCase()}${r.slice(1)}Role`),
    ]),
  ) as Record<ApiRole, string>;
  return { id, routeArn, roleIds, policy: restApiPolicy(d.service, id) };
}

export interface Row {
  what: string;
  request: Request;
}

export async function verdicts(rows: Row[]): Promise<[string, Verdict][]> {
  const out: [string, Verdict][] = [];
  for (const r of rows) out.push([r.what, await evaluate(r.request)]);
  return out;
}
