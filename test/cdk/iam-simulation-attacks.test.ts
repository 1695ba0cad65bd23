/**
 * The IAM of the deployment proved by evaluation, not by reading strings (docs/security.md, "What the IAM simulation
 * proves"), second table: every request an attacker tries is denied.
 * The synthesised policies (roles' policies, Lambda resource policies, the API's resource policy, VPC endpoint
 * policies, bucket and queue policies, intrinsics resolved for account 111111111111: test/cdk/iam-sim.ts) are evaluated
 * by @cloud-copilot/iam-simulate as AWS combines them: identity AND endpoint AND resource policy, a Deny anywhere
 * winning; over the dev deployment and a prod-like one (test/cdk/iam-deployments.ts).
 */
import { ROUTES } from '../../cdk/api';
import { FUNCTION_TABLE, blobObjectActions } from '../../cdk/functions';
import { INVOKE_ACTIONS } from '../../cdk/function-policy';
import { roleAllows } from '../../lib/http/roles';
import { logicalId, resourcesOf } from './helpers';
import {
  API_ALL,
  LAMBDA_ALL,
  OTHER_ACCOUNT,
  POWER_USER,
  PUBLIC_READ,
  PUBLIC_WRITE,
  apiOf,
  useDeployments,
  functionsOf,
  verdicts,
  type Deployment,
  type Row,
} from './iam-deployments';
import {
  ACCOUNT,
  bucketPolicy,
  endpointPolicy,
  identityPolicies,
  lambdaPolicy,
  queuePolicy,
  resolve,
  roleArn,
} from './iam-sim';

const deploymentNamed = useDeployments();

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
  // review N9: the gateway alias (and its version) is API Gateway's alone. Every configured invoker (with lambda:* of
  // its own) and every API role's session (its own grants and lambda:* besides) is denied it, whatever it may invoke
  // directly; API Gateway may not invoke the unqualified function
  const invokers = Object.values(d.synth.stack.config.directInvokers).flat();
  const sessions = Object.values(api.roleIds).map((roleId) => ({
    principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${roleId}/session`,
    identity: [...identityPolicies(d.service, roleId), ...LAMBDA_ALL],
  }));
  for (const f of fns.filter((x) => x.gateway !== undefined))
    for (const resource of f.invocable.filter((arn) => arn !== f.arn)) {
      for (const { principal, identity } of [
        ...invokers.map((p) => ({ principal: p, identity: LAMBDA_ALL })),
        ...sessions,
      ])
        for (const action of INVOKE_ACTIONS)
          rows.push({
            what: `${principal.split(':').slice(4).join(':')} invokes the gateway alias or its version ${resource.split(':').slice(6).join(':')} (${action})`,
            request: { principal, action, resource, identity, resourcePolicy: lambdaPolicy(d.service, resource) },
          });
    }
  for (const f of fns.filter((x) => x.gateway !== undefined)) {
    const route = ROUTES.find((r) => r.fn === f.fn)!;
    rows.push({
      what: `API Gateway invokes the unqualified ${f.fn} for ${route.method} ${route.path}`,
      request: {
        principal: 'apigateway.amazonaws.com',
        action: 'lambda:InvokeFunction',
        resource: f.arn,
        context: { 'aws:SourceArn': api.routeArn(route.method, route.path), 'aws:SourceAccount': ACCOUNT },
        resourcePolicy: lambdaPolicy(d.service, f.arn),
      },
    });
  }
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

describe.each(['dev', 'prod-like'] as const)('%s deployment', (name) => {
  const d = () => deploymentNamed(name);

  test('every attack is denied', async () => {
    const rows = attacks(d());
    expect(rows.length).toBeGreaterThan(80);
    const results = await verdicts(rows);
    expect(results.filter(([, v]) => v === 'Allowed')).toEqual([]);
    // the invokes are denied explicitly: by the functions' Deny, whatever the caller's own policy allows
    expect(results.filter(([what, v]) => what.includes('lambda:* invokes') && v !== 'ExplicitlyDenied')).toEqual([]);
    // review N9: the invokers and the roles are denied the gateway alias explicitly, by its own policy
    const alias = results.filter(([what]) => what.includes('invokes the gateway alias'));
    expect(alias.length).toBeGreaterThanOrEqual(8 * 2 * 3 * INVOKE_ACTIONS.length);
    expect(alias.filter(([, v]) => v !== 'ExplicitlyDenied')).toEqual([]);
  });
});
