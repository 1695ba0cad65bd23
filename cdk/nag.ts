/**
 * cdk-nag (AwsSolutions, cdk-nag v3: CDK's Validations.of(scope).acknowledge) acknowledgments. Every entry says
 * what the template actually grants and why it is accepted, attached to the narrowest construct it concerns; IAM
 * findings name the exact managed policy or resource pattern. Called by the app (cdk/app.ts) after the stacks are
 * built; it reads the stacks, and no stack imports it.
 */
import { Stack, Token, Validations, type CfnElement } from 'aws-cdk-lib';
import { API_ROLES, roleAllows } from '../lib/http/roles';
import { arnPath, ROUTES } from './api';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { SSM_AGENT_ACTIONS } from './aerospike-cluster';
import type { ClusterStack } from './cluster-stack';
import type { UtxoStoreConfig } from './config';
import type { StackPolicyStack } from './stack-policy';
import type { UtxoStoreStack } from './stack';

export interface Acknowledgement {
  id: string;
  reason: string;
}

/** Every acknowledgement made, by construct path (the tests check that each carries a reason). */
export const ACKNOWLEDGEMENTS = new Map<string, Acknowledgement[]>();

function ack(scope: IConstruct, id: string, reason: string): void {
  if (reason.trim().length < 20) throw new Error(`cdk-nag acknowledgement ${id} needs a written reason`);
  Validations.of(scope).acknowledge({ id, reason });
  const list = ACKNOWLEDGEMENTS.get(scope.node.path) ?? [];
  list.push({ id, reason });
  ACKNOWLEDGEMENTS.set(scope.node.path, list);
}

const managed = (name: string): string => `Policy::arn:<AWS::Partition>:iam::aws:policy/${name}`;

/**
 * How cdk-nag writes the stack's partition, region and account in a finding's resource: the pseudo parameter when the
 * stack is environment-agnostic, the literal when the context names it (`-c region=eu-west-1`), so an
 * acknowledgement matches the finding in either case.
 */
function env(stack: Stack): { partition: string; region: string; account: string } {
  const or = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
  return {
    partition: or(stack.partition, 'Partition'),
    region: or(stack.region, 'Region'),
    account: or(stack.account, 'AccountId'),
  };
}

/** `arn:<partition>:<service>:<region>:<account>:<resource>` as cdk-nag writes it for `stack`. */
function nagArn(stack: Stack, service: string, resource: string): string {
  const e = env(stack);
  return `arn:${e.partition}:${service}:${e.region}:${e.account}:${resource}`;
}

const BASIC_EXECUTION =
  'AWS-managed AWSLambdaBasicExecutionRole: logs:CreateLogGroup, logs:CreateLogStream and logs:PutLogEvents on ' +
  'Resource "*" (every log group of the account and region, not only the function\'s own). Accepted: write-only ' +
  'log actions, no read of any log; scoping it would mean a hand-written copy of the policy per function.';

export function applyNagSuppressions(app: {
  config: UtxoStoreConfig;
  cluster: ClusterStack;
  policy: StackPolicyStack;
  service: UtxoStoreStack;
}): void {
  const { config, cluster, policy, service } = app;

  // ---- functions (service stack)
  ack(service.fns, `AwsSolutions-IAM4[${managed('service-role/AWSLambdaBasicExecutionRole')}]`, BASIC_EXECUTION);
  ack(
    service.fns,
    `AwsSolutions-IAM4[${managed('service-role/AWSLambdaVPCAccessExecutionRole')}]`,
    'AWS-managed AWSLambdaVPCAccessExecutionRole: ec2:CreateNetworkInterface, DescribeNetworkInterfaces, ' +
      'DescribeSubnets, DeleteNetworkInterface, AssignPrivateIpAddresses, UnassignPrivateIpAddresses (and the same log write actions ' +
      'as the basic role) on Resource "*". Lambda needs them to manage the ENIs of a VPC function (the functions ' +
      'reach Aerospike in the VPC); the ENIs do not exist before the function, so the actions cannot be scoped.',
  );
  const blobs = service.storage.blobBucket.node.defaultChild as s3.CfnBucket;
  ack(
    service.fns,
    `AwsSolutions-IAM5[Resource::<${Stack.of(service).getLogicalId(blobs)}.Arn>/${config.store.blobPrefix}/*]`,
    `Object actions on every key under the blob prefix "${config.store.blobPrefix}/" of the blob bucket; the keys ` +
      'are per transaction (<txid>.tx / <txid>.outputs) so the grant must cover the prefix; each function gets only ' +
      'the object actions it uses (cdk/functions.ts FUNCTION_TABLE).',
  );
  ack(
    service.fns,
    'AwsSolutions-L1',
    'Node.js 22 is pinned on purpose: the bundled aerospike native client ships a prebuilt binding for Node ABI 127 ' +
      '(node-v127-linux-x64) only; a runtime upgrade needs the matching binding first.',
  );
  if (config.xrayTracing)
    ack(
      service.fns,
      'AwsSolutions-IAM5[Resource::*]',
      'xray:PutTraceSegments and xray:PutTelemetryRecords on Resource "*": X-Ray does not support resource-level ' +
        'permissions for them.',
    );

  // ---- API (service stack)
  ack(
    service.api.api,
    `AwsSolutions-IAM4[${managed('service-role/AmazonAPIGatewayPushToCloudWatchLogs')}]`,
    'AWS-managed AmazonAPIGatewayPushToCloudWatchLogs on the account-level role API Gateway uses for execution ' +
      'logs: logs:CreateLogGroup/CreateLogStream/DescribeLogGroups/DescribeLogStreams/PutLogEvents/GetLogEvents/' +
      'FilterLogEvents on Resource "*"; API Gateway requires this one role for every API of the account and region.',
  );
  ack(
    service.api.api,
    'AwsSolutions-COG4',
    'Every method uses IAM (SigV4) authorization, restricted per route to the validator, blockValidation and admin ' +
      'roles (cdk/api.ts): callers are node services with AWS credentials, not users of a Cognito user pool.',
  );
  ack(
    service.api.api,
    'AwsSolutions-APIG3',
    'No WAF web ACL: every method requires SigV4-signed requests of one of the three API roles (unsigned or other ' +
      'callers are rejected before integration) and the stage is throttled; attach a WAFv2 web ACL to the stage if ' +
      'the account policy requires one.',
  );

  // the roles' path-parameter routes: `{txid}` is `*` in the execute-api ARN (one segment of a route's own resource)
  const apiId = Stack.of(service).getLogicalId(service.api.api.node.defaultChild as CfnElement);
  for (const role of API_ROLES)
    for (const route of ROUTES.filter((r) => r.path.includes('{') && roleAllows(role, r.role)))
      ack(
        service.api.roles[role],
        `AwsSolutions-IAM5[Resource::${nagArn(service, 'execute-api', `<${apiId}>/${service.api.stageName}/${route.method}${arnPath(route.path)}`)}]`,
        `execute-api:Invoke on ${route.method} ${route.path} of this API and stage: the * stands for the path ` +
          'parameter, and API Gateway sends only requests of this resource (one path segment per parameter) under it.',
      );

  // ---- queues (service stack)
  ack(
    service.triggers.cleanupDlq,
    'AwsSolutions-SQS3',
    'This queue is itself the dead-letter queue of the cleanup schedule target and of the asynchronous cleanup ' +
      'invocations (configured on the EventBridge target and the function, which cdk-nag does not see as a redrive).',
  );

  // ---- Aerospike nodes (cluster stack)
  const nodeRole = cluster.cluster.role;
  ack(
    nodeRole,
    'AwsSolutions-IAM5[Resource::*]',
    `Two statements on Resource "*". SsmAgent: ${SSM_AGENT_ACTIONS.join(', ')}: the SSM agent's own calls for ` +
      'Session Manager (no SSH, no key pair, no port 22), Run Command (the runbook) and the backup association; ' +
      'they act on the calling instance and on documents sent to it, and take no parameter resource; no ' +
      'ssm:GetParameter(s) (the node reads only its NodeSettings parameters). AgentMetrics: cloudwatch:PutMetricData, ' +
      "which has no resource type, only with the condition cloudwatch:namespace = the cluster's metrics namespace.",
  );
  ack(
    nodeRole,
    `AwsSolutions-IAM5[Resource::${nagArn(cluster, 'cloudformation', `stack/${cluster.stackName}/*`)}]`,
    `cloudformation:DescribeStackResource (read-only) on the cluster stack ${cluster.stackName} only: the node reads ` +
      "the SHA-256 pinned in its settings' metadata (cdk/node-pins.ts); the trailing /* is the stack id " +
      'CloudFormation appends, unknown before the stack exists.',
  );
  // ---- the S3 prefix-list lookup (cdk/endpoint-policies.ts, an AwsCustomResource of the cluster stack)
  ack(cluster, `AwsSolutions-IAM4[${managed('service-role/AWSLambdaBasicExecutionRole')}]`, BASIC_EXECUTION);
  ack(
    cluster.network.node.findChild('S3PrefixList'),
    'AwsSolutions-IAM5[Resource::*]',
    'ec2:DescribeManagedPrefixLists on Resource "*": the lookup of the region\'s S3 prefix list id (read-only); the ' +
      'action supports no resource-level permissions.',
  );
  const backup = cluster.backup.bucket.node.defaultChild as s3.CfnBucket;
  ack(
    nodeRole,
    `AwsSolutions-IAM5[Resource::<${Stack.of(cluster).getLogicalId(backup)}.Arn>/aerospike/*]`,
    'Put/Get/AbortMultipartUpload/ListMultipartUploadParts/PutObjectTagging on the backup prefix "aerospike/" of the backup bucket: ' +
      'asbackup writes one directory per run (its name is the UTC time), the backup tags superseded ones for the ' +
      'lifecycle expiry, and asrestore reads one back.',
  );
  if (config.aerospike.amiIds !== undefined)
    for (const node of cluster.cluster.instances)
      ack(
        node,
        'CloudFormation-Validate::W9010',
        'The node AMI is pinned on purpose (aerospikeAmi): a new AMI replaces the node and erases its instance ' +
          'store, so it must never follow a parameter that can change between deployments.',
      );
  if (!config.aerospike.terminationProtection)
    for (const node of cluster.cluster.instances)
      ack(
        node,
        'AwsSolutions-EC29',
        `terminationProtection=false for stage "${config.stage}" (a disposable stage): API termination protection ` +
          'is off on the nodes and on the cluster stack. The nodes are not in an ASG on purpose: each keeps a stable ' +
          'DNS name and its instance-store data, which an ASG replacement would discard.',
      );

  // ---- the stack-policy setter (AwsCustomResource's singleton function)
  ack(policy, `AwsSolutions-IAM4[${managed('service-role/AWSLambdaBasicExecutionRole')}]`, BASIC_EXECUTION);
  ack(
    policy,
    'AwsSolutions-L1',
    "The AwsCustomResource provider function's runtime is chosen by aws-cdk-lib (its bundled handler), not by this app.",
  );
  ack(
    policy,
    `AwsSolutions-IAM5[Resource::${nagArn(policy, 'cloudformation', `stack/${cluster.stackName}/*`)}]`,
    `cloudformation:SetStackPolicy on the cluster stack ${cluster.stackName} only; the trailing /* is the stack id ` +
      'CloudFormation appends, unknown before the stack exists.',
  );
}
