/**
 * The IAM of the deployment proved by evaluation, not by reading strings (docs/security.md, "What the IAM simulation
 * proves"): the templates are synthesised, their real policies extracted (roles' policies, Lambda resource policies,
 * the API's resource policy, VPC endpoint policies, bucket and queue policies) with the intrinsics resolved for
 * account 111111111111, and each request evaluated by @cloud-copilot/iam-simulate as AWS combines them: identity AND
 * endpoint AND resource policy, a Deny anywhere winning. Two tables: what the system needs (each Allowed) and what an
 * attacker tries (each denied), over the dev deployment and a prod-like one (assumers, invokers, provisioned
 * concurrency on an API function and on cleanup, another region, s3:// packages). Last, mutations of a template copy
 * that open an attack or close a need flip the verdict, so the tables can fail.
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { ROUTES, arnPath } from '../../cdk/api';
import { FUNCTION_NAMES } from '../../cdk/config';
import { FUNCTION_TABLE, blobObjectActions } from '../../cdk/functions';
import { INVOKE_ACTIONS } from '../../cdk/function-policy';
import { API_ROLES, roleAllows, type ApiRole } from '../../lib/http/roles';
import { FUNCTION_IDS, logicalId, resourcesOf, synth, type Synth } from './helpers';
import {
  ACCOUNT,
  AWS_OWNED_ACCOUNT,
  bucketPolicy,
  copyOf,
  endpointPolicy,
  envOf,
  evaluate,
  exportsOf,
  identityPolicies,
  lambdaPolicy,
  queuePolicy,
  resolve,
  restApiPolicy,
  roleArn,
  roleOfFunction,
  type Env,
  type Request,
  type Verdict,
} from './iam-sim';

const OTHER_ACCOUNT = '222222222222';
const INVOKER = `arn:aws:iam::${OTHER_ACCOUNT}:role/validator-service`;
const POWER_USER = `arn:aws:iam::${ACCOUNT}:role/PowerUser`;
const LAMBDA_ALL = [
  { name: 'lambda-all', policy: { Statement: [{ Effect: 'Allow', Action: 'lambda:*', Resource: '*' }] } },
];
const API_ALL = [
  { name: 'api-all', policy: { Statement: [{ Effect: 'Allow', Action: 'execute-api:*', Resource: '*' }] } },
];
/** The Amazon Linux repositories are public: a stand-in for their bucket policy (AWS's, not in any template). */
const PUBLIC_READ = (bucket: string) => ({
  Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket}/*` }],
});

interface Deployment {
  name: string;
  synth: Synth;
  service: Env;
  cluster: Env;
  region: string;
}

function deployment(name: string, context: Record<string, unknown>, region: string): Deployment {
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

const deployments: Deployment[] = [];
beforeAll(() => {
  deployments.push(deployment('dev', {}, 'us-east-1'));
  deployments.push(
    deployment(
      'prod-like',
      {
        stage: 'prod',
        region: 'eu-west-1',
        alarmEmail: 'ops@example.com',
        validatorAssumers: `arn:aws:iam::${ACCOUNT}:role/validator-*`,
        blockValidationAssumers: `arn:aws:iam::${ACCOUNT}:role/block-validation`,
        adminAssumers: `arn:aws:iam::${ACCOUNT}:role/ops-admin`,
        validatorInvokers: INVOKER,
        provisionedConcurrency: 'spend:2,cleanup:1',
        aerospikePackageUrl: 's3://my-artifacts/aerospike/server.tgz',
        exporterPackageUrl: 's3://my-artifacts/aerospike/exporter.rpm',
      },
      'eu-west-1',
    ),
  );
}, 600_000);

/** Each function's logical id, role, and the ARNs a caller can invoke (with provisioned concurrency: alias, version). */
function functionsOf(d: Deployment) {
  const t = d.synth.template;
  return FUNCTION_NAMES.map((fn) => {
    const id = logicalId(t, 'AWS::Lambda::Function', FUNCTION_IDS[fn]);
    const arn = resolve({ 'Fn::GetAtt': [id, 'Arn'] }, d.service) as string;
    const aliases = Object.entries(resourcesOf(t, 'AWS::Lambda::Alias')).filter(
      ([, a]) => JSON.stringify(a.Properties!.FunctionName) === JSON.stringify({ Ref: id }),
    );
    const qualified = aliases.length > 0 ? [`${arn}:live`, `${arn}:1`] : [];
    /** what API Gateway and the rules invoke */
    const target = aliases.length > 0 ? `${arn}:live` : arn;
    return { fn, id, arn, target, invocable: [arn, ...qualified], role: roleOfFunction(d.service, id) };
  });
}

function apiOf(d: Deployment) {
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

interface Row {
  what: string;
  request: Request;
}

function needed(d: Deployment): Row[] {
  const rows: Row[] = [];
  const fns = functionsOf(d);
  const api = apiOf(d);
  // API Gateway invoking each function from each of its routes
  for (const route of ROUTES) {
    const f = fns.find((x) => x.fn === route.fn)!;
    rows.push({
      what: `API Gateway invokes ${route.fn} for ${route.method} ${route.path}`,
      request: {
        principal: 'apigateway.amazonaws.com',
        action: 'lambda:InvokeFunction',
        resource: f.target,
        context: { 'aws:SourceArn': api.routeArn(route.method, route.path), 'aws:SourceAccount': ACCOUNT },
        resourcePolicy: lambdaPolicy(d.service, f.target),
      },
    });
  }
  // each caller role on each of its routes (a session of the role, as callers sign)
  for (const role of API_ROLES)
    for (const route of ROUTES.filter((r) => roleAllows(role, r.role)))
      rows.push({
        what: `${role} calls ${route.method} ${route.path}`,
        request: {
          principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${api.roleIds[role]}/session`,
          action: 'execute-api:Invoke',
          resource: api.routeArn(route.method, route.path),
          identity: identityPolicies(d.service, api.roleIds[role]),
          resourcePolicy: api.policy,
        },
      });
  // each function's role on its blobs and its queue, through the VPC endpoints, under the resource's own policy
  const bucket = logicalId(d.synth.template, 'AWS::S3::Bucket', 'StorageBlobs');
  const blobs = resolve({ 'Fn::GetAtt': [bucket, 'Arn'] }, d.service) as string;
  const queue = logicalId(d.synth.template, 'AWS::SQS::Queue', 'StorageSignalQueue');
  const queueArn = resolve({ 'Fn::GetAtt': [queue, 'Arn'] }, d.service) as string;
  const s3 = endpointPolicy(d.cluster, 's3');
  const sqs = endpointPolicy(d.cluster, 'sqs');
  for (const f of fns) {
    const spec = FUNCTION_TABLE[f.fn];
    const principal = roleArn(d.service, f.role);
    const identity = identityPolicies(d.service, f.role);
    for (const action of blobObjectActions(spec))
      rows.push({
        what: `${f.fn}'s role: ${action} on a blob`,
        request: {
          principal,
          action,
          resource: `${blobs}/blobs/abc.tx`,
          identity,
          endpoint: s3,
          resourcePolicy: bucketPolicy(d.service, bucket),
        },
      });
    if (spec.blobs.length > 0)
      rows.push({
        what: `${f.fn}'s role: s3:ListBucket`,
        request: {
          principal,
          action: 's3:ListBucket',
          resource: blobs,
          identity,
          endpoint: s3,
          resourcePolicy: bucketPolicy(d.service, bucket),
        },
      });
    if (spec.sendsSignals)
      rows.push({
        what: `${f.fn}'s role: sqs:SendMessage`,
        request: {
          principal,
          action: 'sqs:SendMessage',
          resource: queueArn,
          identity,
          endpoint: sqs,
          resourcePolicy: queuePolicy(d.service, queue),
        },
      });
    // the event source mapping reads the queue with the consumer's role (Lambda's pollers: not through the VPC)
    if (spec.consumesSignals)
      for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage'])
        rows.push({
          what: `the signal queue's event source (signals' role): ${action}`,
          request: { principal, action, resource: queueArn, identity, resourcePolicy: queuePolicy(d.service, queue) },
        });
  }
  // the cleanup schedule's rules invoke the cleanup function
  const cleanup = fns.find((f) => f.fn === 'cleanup')!;
  for (const ruleId of Object.keys(resourcesOf(d.synth.template, 'AWS::Events::Rule')).filter((id) =>
    id.startsWith('TriggersCleanupSchedule'),
  ))
    rows.push({
      what: `rule ${ruleId} invokes cleanup`,
      request: {
        principal: 'events.amazonaws.com',
        action: 'lambda:InvokeFunction',
        resource: cleanup.target,
        context: {
          'aws:SourceArn': resolve({ 'Fn::GetAtt': [ruleId, 'Arn'] }, d.service) as string,
          'aws:SourceAccount': ACCOUNT,
        },
        resourcePolicy: lambdaPolicy(d.service, cleanup.target),
      },
    });
  // a node: dnf's anonymous read of the Amazon Linux repository through the S3 gateway endpoint (N1)
  const repo = `al2023-repos-${d.region}-de612dc2`;
  rows.push({
    what: 'a node reads the AL2023 repository anonymously (dnf) through the S3 endpoint',
    request: {
      principal: 'anonymous',
      action: 's3:GetObject',
      resource: `arn:aws:s3:::${repo}/core/mirrors/latest/x86_64/mirror.list`,
      resourceAccount: AWS_OWNED_ACCOUNT,
      endpoint: s3,
      resourcePolicy: PUBLIC_READ(repo),
    },
  });
  const c = d.synth.clusterTemplate;
  const nodeRole = logicalId(c, 'AWS::IAM::Role', 'AerospikeNodeRole');
  const node = roleArn(d.cluster, nodeRole);
  const nodeIdentity = identityPolicies(d.cluster, nodeRole);
  const ssm = endpointPolicy(d.cluster, 'ssm');
  for (const p of Object.keys(resourcesOf(c, 'AWS::SSM::Parameter'))) {
    const name = resolve({ Ref: p }, d.cluster) as string;
    rows.push({
      what: `the node reads its setting ${name}`,
      request: {
        principal: node,
        action: 'ssm:GetParameter',
        resource: `arn:aws:ssm:${d.region}:${ACCOUNT}:parameter${name}`,
        identity: nodeIdentity,
        endpoint: ssm,
      },
    });
  }
  const backup = logicalId(c, 'AWS::S3::Bucket', 'BackupBucket');
  const backupArn = resolve({ 'Fn::GetAtt': [backup, 'Arn'] }, d.cluster) as string;
  for (const action of ['s3:PutObject', 's3:GetObject'])
    rows.push({
      what: `the node's backup: ${action}`,
      request: {
        principal: node,
        action,
        resource: `${backupArn}/aerospike/2026-01-01T00-00-00Z/utxo.asb`,
        identity: nodeIdentity,
        endpoint: s3,
        resourcePolicy: bucketPolicy(d.cluster, backup),
      },
    });
  const logGroup = logicalId(c, 'AWS::Logs::LogGroup', 'AerospikeLogs');
  rows.push({
    what: "the node's agent writes its log group through the Logs endpoint",
    request: {
      principal: node,
      action: 'logs:PutLogEvents',
      resource: `${(resolve({ 'Fn::GetAtt': [logGroup, 'Arn'] }, d.cluster) as string).replace(/:\*$/, '')}:log-stream:n1/aerospike`,
      identity: nodeIdentity,
      endpoint: endpointPolicy(d.cluster, 'logs'),
    },
  });
  return rows;
}

function attacks(d: Deployment): Row[] {
  const rows: Row[] = [];
  const fns = functionsOf(d);
  const api = apiOf(d);
  // a principal of the account allowed lambda:* on * invokes every function, every invoke action, every qualifier
  for (const f of fns)
    for (const resource of f.invocable)
      for (const action of INVOKE_ACTIONS)
        for (const principal of [POWER_USER, `arn:aws:iam::${OTHER_ACCOUNT}:role/attacker`])
          rows.push({
            what: `${principal.split(':')[4]} lambda:* invokes ${resource.split(':').slice(6).join(':')} (${action})`,
            request: {
              principal,
              action,
              resource,
              identity: LAMBDA_ALL,
              resourcePolicy: lambdaPolicy(d.service, resource),
            },
          });
  // the validator role on every route above it
  for (const route of ROUTES.filter((r) => !roleAllows('validator', r.role)))
    rows.push({
      what: `validator calls ${route.method} ${route.path}`,
      request: {
        principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${api.roleIds.validator}/session`,
        action: 'execute-api:Invoke',
        resource: api.routeArn(route.method, route.path),
        identity: identityPolicies(d.service, api.roleIds.validator),
        resourcePolicy: api.policy,
      },
    });
  // principals with execute-api:* of their own, in this account and another
  for (const principal of [POWER_USER, `arn:aws:iam::${OTHER_ACCOUNT}:role/attacker`])
    for (const route of ROUTES.filter((r) => r.role === 'admin').slice(0, 3))
      rows.push({
        what: `${principal.split(':')[4]} execute-api:* calls ${route.method} ${route.path}`,
        request: {
          principal,
          action: 'execute-api:Invoke',
          resource: api.routeArn(route.method, route.path),
          identity: API_ALL,
          resourcePolicy: api.policy,
        },
      });
  // a function's role beyond its own grants: blob actions it lacks, the queue it may not send to, the backups
  const bucket = logicalId(d.synth.template, 'AWS::S3::Bucket', 'StorageBlobs');
  const blobs = resolve({ 'Fn::GetAtt': [bucket, 'Arn'] }, d.service) as string;
  const queue = logicalId(d.synth.template, 'AWS::SQS::Queue', 'StorageSignalQueue');
  const queueArn = resolve({ 'Fn::GetAtt': [queue, 'Arn'] }, d.service) as string;
  const backup = logicalId(d.synth.clusterTemplate, 'AWS::S3::Bucket', 'BackupBucket');
  const backupArn = resolve({ 'Fn::GetAtt': [backup, 'Arn'] }, d.cluster) as string;
  const s3 = endpointPolicy(d.cluster, 's3');
  const all = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:PutObjectTagging', 's3:DeleteObjectVersion'];
  for (const f of fns) {
    const spec = FUNCTION_TABLE[f.fn];
    const principal = roleArn(d.service, f.role);
    const identity = identityPolicies(d.service, f.role);
    const own = blobObjectActions(spec);
    for (const action of all.filter((a) => !own.includes(a)))
      rows.push({
        what: `${f.fn}'s role: ${action} on a blob`,
        request: {
          principal,
          action,
          resource: `${blobs}/blobs/abc.tx`,
          identity,
          endpoint: s3,
          resourcePolicy: bucketPolicy(d.service, bucket),
        },
      });
    if (!spec.sendsSignals)
      rows.push({
        what: `${f.fn}'s role: sqs:SendMessage`,
        request: {
          principal,
          action: 'sqs:SendMessage',
          resource: queueArn,
          identity,
          endpoint: endpointPolicy(d.cluster, 'sqs'),
          resourcePolicy: queuePolicy(d.service, queue),
        },
      });
    rows.push({
      what: `${f.fn}'s role: s3:GetObject on a backup`,
      request: {
        principal,
        action: 's3:GetObject',
        resource: `${backupArn}/aerospike/x/utxo.asb`,
        identity,
        endpoint: s3,
        resourcePolicy: bucketPolicy(d.cluster, backup),
      },
    });
    // its own credentials into another account's bucket (exfiltration through the endpoint)
    rows.push({
      what: `${f.fn}'s role: s3:PutObject into another account's bucket`,
      request: {
        principal,
        action: 's3:PutObject',
        resource: 'arn:aws:s3:::attacker-bucket/x',
        resourceAccount: OTHER_ACCOUNT,
        identity: [{ name: 'broad', policy: { Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: '*' }] } }],
        endpoint: s3,
        resourcePolicy: PUBLIC_WRITE,
      },
    });
  }
  // the node role: write its settings, read the blobs, read an anonymous bucket that is not AWS's
  const c = d.synth.clusterTemplate;
  const nodeRole = logicalId(c, 'AWS::IAM::Role', 'AerospikeNodeRole');
  const node = roleArn(d.cluster, nodeRole);
  const nodeIdentity = identityPolicies(d.cluster, nodeRole);
  const param = resolve({ Ref: Object.keys(resourcesOf(c, 'AWS::SSM::Parameter'))[0] }, d.cluster) as string;
  for (const action of ['ssm:PutParameter', 'ssm:DeleteParameter', 'ssm:LabelParameterVersion'])
    rows.push({
      what: `the node: ${action} on its setting`,
      request: {
        principal: node,
        action,
        resource: `arn:aws:ssm:${d.region}:${ACCOUNT}:parameter${param}`,
        identity: nodeIdentity,
        endpoint: endpointPolicy(d.cluster, 'ssm'),
      },
    });
  rows.push({
    what: 'the node: s3:GetObject on a blob',
    request: {
      principal: node,
      action: 's3:GetObject',
      resource: `${blobs}/blobs/abc.tx`,
      identity: nodeIdentity,
      endpoint: s3,
      resourcePolicy: bucketPolicy(d.service, bucket),
    },
  });
  rows.push({
    what: "code on a node: an anonymous read of a bucket named like AWS's repositories",
    request: {
      principal: 'anonymous',
      action: 's3:GetObject',
      resource: `arn:aws:s3:::al2023-repos-${d.region}-attacker/data`,
      resourceAccount: OTHER_ACCOUNT,
      endpoint: s3,
      resourcePolicy: PUBLIC_READ(`al2023-repos-${d.region}-attacker`),
    },
  });
  return rows;
}

const PUBLIC_WRITE = {
  Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:PutObject', Resource: 'arn:aws:s3:::attacker-bucket/*' }],
};

async function verdicts(rows: Row[]): Promise<[string, Verdict][]> {
  const out: [string, Verdict][] = [];
  for (const r of rows) out.push([r.what, await evaluate(r.request)]);
  return out;
}

describe.each(['dev', 'prod-like'])('%s deployment', (name) => {
  const d = () => deployments.find((x) => x.name === name)!;

  test('every needed request is Allowed (identity AND endpoint AND resource policy)', async () => {
    const rows = needed(d());
    expect(rows.length).toBeGreaterThan(80);
    const results = await verdicts(rows);
    expect(results.filter(([, v]) => v !== 'Allowed')).toEqual([]);
  });

  test('every attack is denied', async () => {
    const rows = attacks(d());
    expect(rows.length).toBeGreaterThan(80);
    const results = await verdicts(rows);
    expect(results.filter(([, v]) => v === 'Allowed')).toEqual([]);
    // the invokes are denied explicitly: by the functions' Deny, whatever the caller's own policy allows
    expect(results.filter(([what, v]) => what.includes('lambda:* invokes') && v !== 'ExplicitlyDenied')).toEqual([]);
  });

  test("the configured invoker and the roles' sessions pass the functions' Deny; the signal consumer's role too", async () => {
    const fns = functionsOf(d());
    const api = apiOf(d());
    const spend = fns.find((f) => f.fn === 'spend')!;
    const validator = `arn:aws:sts::${ACCOUNT}:assumed-role/${api.roleIds.validator}/session`;
    expect(
      await evaluate({
        principal: validator,
        action: 'lambda:InvokeFunction',
        resource: spend.target,
        identity: identityPolicies(d().service, api.roleIds.validator),
        resourcePolicy: lambdaPolicy(d().service, spend.target),
      }),
    ).toBe('Allowed');
    if (name === 'prod-like')
      expect(
        await evaluate({
          principal: INVOKER,
          action: 'lambda:InvokeFunction',
          resource: spend.target,
          identity: LAMBDA_ALL,
          resourcePolicy: lambdaPolicy(d().service, spend.target),
        }),
      ).toBe('Allowed');
    // however Lambda presents the event source mapping's invocation (as the service or as the role), no Deny
    const signals = fns.find((f) => f.fn === 'signals')!;
    for (const principal of ['lambda.amazonaws.com', roleArn(d().service, signals.role)])
      expect(
        await evaluate({
          principal,
          action: 'lambda:InvokeFunction',
          resource: signals.target,
          identity: LAMBDA_ALL,
          resourcePolicy: lambdaPolicy(d().service, signals.target),
        }),
      ).not.toBe('ExplicitlyDenied');
  });
});

test('N11: with an explicit region (-c region=eu-west-1, the documented prod command) cdk-nag passes', () => {
  const d = deployments.find((x) => x.name === 'prod-like')!;
  for (const stack of [d.synth.cluster, d.synth.policy, d.synth.stack]) {
    const report = new AwsSolutionsChecks(d.synth.app).validateScope(stack);
    expect([
      stack.stackName,
      report.violations.map((v) => `${v.ruleName} ${JSON.stringify(v.violatingResources)}`),
    ]).toEqual([stack.stackName, []]);
  }
});

describe('the tables can fail: a mutated template flips the verdict', () => {
  const prod = () => deployments.find((x) => x.name === 'prod-like')!;

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
