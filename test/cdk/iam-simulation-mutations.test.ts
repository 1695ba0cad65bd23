/**
 * The IAM simulation's tables can fail (docs/security.md, "What the IAM simulation proves"): mutations of a copy of
 * the prod-like deployment's templates (test/cdk/iam-deployments.ts) that open an attack or close a need flip the
 * verdict of @cloud-copilot/iam-simulate. With the same synthesis, cdk-nag passes on the prod-like deployment (N11).
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { ROUTES } from '../../cdk/api';
import {
  API_ALL,
  LAMBDA_ALL,
  POWER_USER,
  PUBLIC_READ,
  apiOf,
  deployment,
  functionsOf,
  type Deployment,
} from './iam-deployments';
import {
  AWS_OWNED_ACCOUNT,
  copyOf,
  endpointPolicy,
  envOf,
  evaluate,
  lambdaPolicy,
  type Env,
  type Request,
} from './iam-sim';

let prodLike: Deployment;
beforeAll(() => {
  prodLike = deployment('prod-like');
}, 600_000);

test('N11: with an explicit region (-c region=eu-west-1, the documented prod command) cdk-nag passes', () => {
  const d = prodLike;
  for (const stack of [d.synth.cluster, d.synth.policy, d.synth.stack]) {
    const report = new AwsSolutionsChecks(d.synth.app).validateScope(stack);
    expect([
      stack.stackName,
      report.violations.map((v) => `${v.ruleName} ${JSON.stringify(v.violatingResources)}`),
    ]).toEqual([stack.stackName, []]);
  }
});

describe('the tables can fail: a mutated template flips the verdict', () => {
  const prod = () => prodLike;

  test("removing a function's Deny lets lambda:* invoke it; InvokeAsync alone left out of the Deny too", async () => {
    const d = prod();
    const spend = functionsOf(d).find((f) => f.fn === 'spend')!;
    const attack: Request = {
      principal: POWER_USER,
      action: 'lambda:InvokeAsync',
      resource: spend.arn,
      identity: LAMBDA_ALL,
      resourcePolicy: lambdaPolicy(d.service, spend.arn),
    };
    expect(await evaluate(attack)).toBe('ExplicitlyDenied');
    const template = copyOf(d.synth.template.toJSON()) as { Resources: Env['resources'] };
    for (const r of Object.values(template.Resources))
      if (r.Type === 'AWS::Lambda::ResourcePolicy')
        for (const st of (r.Properties!.PolicyDocument as { Statement: { Sid?: string; Action: unknown }[] }).Statement)
          if (st.Sid === 'DenyOtherPrincipals') st.Action = 'lambda:InvokeFunction'; // the Deny before N4
    const mutated = envOf(template, d.region);
    expect(await evaluate({ ...attack, resourcePolicy: lambdaPolicy(mutated, spend.arn) })).toBe('Allowed');
  });

  test("a principal condition on the AWS-owned buckets (main before N1) stops dnf's anonymous read", async () => {
    const d = prod();
    const repo = `al2023-repos-${d.region}-de612dc2`;
    const read: Request = {
      principal: 'anonymous',
      action: 's3:GetObject',
      resource: `arn:aws:s3:::${repo}/core/x`,
      resourceAccount: AWS_OWNED_ACCOUNT,
      endpoint: endpointPolicy(d.cluster, 's3'),
      resourcePolicy: PUBLIC_READ(repo),
    };
    expect(await evaluate(read)).toBe('Allowed');
    const template = copyOf(d.synth.clusterTemplate.toJSON()) as { Resources: Env['resources'] };
    for (const r of Object.values(template.Resources))
      if (r.Type === 'AWS::EC2::VPCEndpoint')
        for (const st of (
          (r.Properties!.PolicyDocument ?? { Statement: [] }) as { Statement: Record<string, unknown>[] }
        ).Statement)
          if (st.Sid === 'AwsOwnedBuckets')
            st.Condition = { StringEquals: { 'aws:PrincipalAccount': { Ref: 'AWS::AccountId' } } };
    expect(await evaluate({ ...read, endpoint: endpointPolicy(envOf(template, d.region), 's3') })).toBe(
      'ImplicitlyDenied',
    );
  });

  test("dropping the API's resource policy lets another principal of the account with execute-api:* in", async () => {
    const d = prod();
    const api = apiOf(d);
    const route = ROUTES.find((r) => r.role === 'admin')!;
    const attack: Request = {
      principal: POWER_USER,
      action: 'execute-api:Invoke',
      resource: api.routeArn(route.method, route.path),
      identity: API_ALL,
      resourcePolicy: api.policy,
    };
    expect(await evaluate(attack)).toBe('ExplicitlyDenied');
    expect(await evaluate({ ...attack, resourcePolicy: undefined })).toBe('Allowed');
  });
});
