/**
 * The IAM of the deployment proved by evaluation, not by reading strings (docs/security.md, "What the IAM simulation
 * proves"), first table: every request the system needs is Allowed.
 * The synthesised policies (roles' policies, Lambda resource policies, the API's resource policy, VPC endpoint
 * policies, bucket and queue policies, intrinsics resolved for account 111111111111: test/cdk/iam-sim.ts) are evaluated
 * by @cloud-copilot/iam-simulate as AWS combines them: identity AND endpoint AND resource policy, a Deny anywhere
 * winning; over the dev deployment and a prod-like one (test/cdk/iam-deployments.ts).
 */
import { ROUTES } from '../../cdk/api';
import { FUNCTION_TABLE, blobObjectActions } from '../../cdk/functions';
import { API_ROLES, roleAllows } from '../../lib/http/roles';
import { logicalId, resourcesOf } from './helpers';
import {
  INVOKER,
  LAMBDA_ALL,
  PUBLIC_READ,
  apiOf,
  useDeployments,
  functionsOf,
  verdicts,
  type Deployment,
  type Row,
} from './iam-deployments';
import {
  ACCOUNT,
  AWS_OWNED_ACCOUNT,
  bucketPolicy,
  endpointPolicy,
  evaluate,
  identityPolicies,
  lambdaPolicy,
  queuePolicy,
  resolve,
  roleArn,
} from './iam-sim';

const deploymentNamed = useDeployments();

function needed(d: Deployment): Row[] {
  const rows: Row[] = [];
  const fns = functionsOf(d);
  const api = apiOf(d);
  // API Gateway invoking each function's gateway alias from each of its routes
  for (const route of ROUTES) {
    const f = fns.find((x) => x.fn === route.fn)!;
    rows.push({
      what: `API Gateway invokes ${route.fn}'s gateway alias for ${route.method} ${route.path}`,
      request: {
        principal: 'apigateway.amazonaws.com',
        action: 'lambda:InvokeFunction',
        resource: f.gateway!,
        context: { 'aws:SourceArn': api.routeArn(route.method, route.path), 'aws:SourceAccount': ACCOUNT },
        resourcePolicy: lambdaPolicy(d.service, f.gateway!),
      },
    });
  }
  // each API role's session and each configured invoker invoking the unqualified functions its role may
  const invokers = d.synth.stack.config.directInvokers;
  for (const f of fns) {
    const least = d.synth.stack.directInvoke.invokerRoles[f.fn];
    if (least === undefined) continue;
    for (const role of API_ROLES.filter((r) => roleAllows(r, least))) {
      rows.push({
        what: `${role}'s session invokes ${f.fn} directly`,
        request: {
          principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${api.roleIds[role]}/session`,
          action: 'lambda:InvokeFunction',
          resource: f.arn,
          identity: identityPolicies(d.service, api.roleIds[role]),
          resourcePolicy: lambdaPolicy(d.service, f.arn),
        },
      });
      for (const invoker of invokers[role])
        rows.push({
          what: `${role}'s configured invoker ${invoker} invokes ${f.fn} directly`,
          request: {
            principal: invoker,
            action: 'lambda:InvokeFunction',
            resource: f.arn,
            identity: LAMBDA_ALL,
            resourcePolicy: lambdaPolicy(d.service, f.arn),
          },
        });
    }
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

describe.each(['dev', 'prod-like'] as const)('%s deployment', (name) => {
  const d = () => deploymentNamed(name);

  test('every needed request is Allowed (identity AND endpoint AND resource policy)', async () => {
    const rows = needed(d());
    expect(rows.length).toBeGreaterThan(80);
    const results = await verdicts(rows);
    expect(results.filter(([, v]) => v !== 'Allowed')).toEqual([]);
  });

  test("the configured invoker and the roles' sessions pass the functions' Deny; the signal consumer's role too", async () => {
    const fns = functionsOf(d());
    const api = apiOf(d());
    const spend = fns.find((f) => f.fn === 'spend')!;
    const validator = `arn:aws:sts::${ACCOUNT}:assumed-role/${api.roleIds.validator}/session`;
    // the unqualified function: direct invocation's ARN (the gateway alias is API Gateway's, the attacks table)
    expect(
      await evaluate({
        principal: validator,
        action: 'lambda:InvokeFunction',
        resource: spend.arn,
        identity: identityPolicies(d().service, api.roleIds.validator),
        resourcePolicy: lambdaPolicy(d().service, spend.arn),
      }),
    ).toBe('Allowed');
    if (name === 'prod-like')
      expect(
        await evaluate({
          principal: INVOKER,
          action: 'lambda:InvokeFunction',
          resource: spend.arn,
          identity: LAMBDA_ALL,
          resourcePolicy: lambdaPolicy(d().service, spend.arn),
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
