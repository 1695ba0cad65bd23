/**
 * One synthesis per test file: the stack is built from context (as `-c key=value` would give it) with bundling
 * skipped (`aws:cdk:bundling-stacks: []`), which keeps the template identical and the tests fast; the bundle itself
 * is checked by bundling.test.ts.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../cdk/app';
import type { ClusterStack } from '../../cdk/cluster-stack';
import type { StackPolicyStack } from '../../cdk/stack-policy';
import type { UtxoStoreStack } from '../../cdk/stack';

export interface Synth {
  app: App;
  /** the service stack (functions, API, storage, triggers, dashboard) */
  stack: UtxoStoreStack;
  template: Template;
  /** the cluster stack (network, Aerospike, backups, cluster alarms) */
  cluster: ClusterStack;
  clusterTemplate: Template;
  policy: StackPolicyStack;
  policyTemplate: Template;
}

/**
 * The deployment for `context`, synthesised once in the calling test file's beforeAll (a synthesis takes seconds:
 * once per file, not per test); its fields are there from the first test on.
 */
export function synthBeforeAll(context: Record<string, unknown> = {}): Synth {
  const s = {} as Synth;
  beforeAll(() => {
    Object.assign(s, synth(context));
  });
  return s;
}

export function synth(context: Record<string, unknown> = {}): Synth {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const { service, cluster, policy } = buildApp(app);
  return {
    app,
    stack: service,
    template: Template.fromStack(service),
    cluster,
    clusterTemplate: Template.fromStack(cluster),
    policy,
    policyTemplate: Template.fromStack(policy),
  };
}

/** The logical-id prefix of each API function (the functions API Gateway or a direct caller invokes). */
export const API_FUNCTION_IDS: Record<string, string> = {
  create: 'FunctionsCreate',
  get: 'FunctionsGetA',
  spend: 'FunctionsSpend',
  unspend: 'FunctionsUnspend',
  setMined: 'FunctionsSetMined',
  getUtxo: 'FunctionsGetUtxo',
  status: 'FunctionsStatus',
  admin: 'FunctionsAdmin',
};

/** The logical id of an API function's gateway alias (lib/http/gateway-alias.ts): the alias of that function. */
export function gatewayAliasId(template: Template, fn: string): string {
  const fnId = logicalId(template, 'AWS::Lambda::Function', API_FUNCTION_IDS[fn]);
  const ids = Object.entries(resourcesOf(template, 'AWS::Lambda::Alias'))
    .filter(([, a]) => JSON.stringify(a.Properties!.FunctionName) === JSON.stringify({ Ref: fnId }))
    .map(([id]) => id);
  if (ids.length !== 1) throw new Error(`${fn}: ${ids.length} aliases, expected its gateway alias`);
  return ids[0];
}

/** The logical-id prefix of every function of the app. */
export const FUNCTION_IDS: Record<string, string> = {
  ...API_FUNCTION_IDS,
  signals: 'FunctionsSignals',
  cleanup: 'FunctionsCleanup',
};

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; [k: string]: unknown }>;

export function resourcesOf(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** Lambda functions of the app (the template has no others: no custom-resource providers). */
export function appFunctions(template: Template): Resources {
  return resourcesOf(template, 'AWS::Lambda::Function');
}

/** The logical id of the single resource of `type` whose logical id starts with `prefix`. */
export function logicalId(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(resourcesOf(template, type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`expected one ${type} ${prefix}*, found ${ids.join(', ') || 'none'}`);
  return ids[0];
}

/** Policy statements of the IAM role of the function whose logical id starts with `fnPrefix`. */
export function statementsOf(template: Template, fnPrefix: string): Record<string, unknown>[] {
  const fnId = logicalId(template, 'AWS::Lambda::Function', fnPrefix);
  const fn = appFunctions(template)[fnId];
  const roleRef = (fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  const policies = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).filter((p) =>
    (p.Properties!.Roles as { Ref: string }[]).some((r) => r.Ref === roleRef),
  );
  return policies.flatMap((p) => (p.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement);
}

export function actionsOf(statement: Record<string, unknown>): string[] {
  const a = statement.Action;
  return Array.isArray(a) ? (a as string[]) : [a as string];
}
