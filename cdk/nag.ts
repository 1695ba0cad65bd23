/**
 * cdk-nag (AwsSolutions, cdk-nag v3: CDK's Validations.of(scope).acknowledge) acknowledgments. Every entry says why
 * the finding does not apply or is accepted, and is attached to the narrowest construct it concerns; IAM findings
 * name the exact managed policy or resource pattern.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
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

export function applyNagSuppressions(stack: UtxoStoreStack): void {
  const { config } = stack;

  // ---- functions
  ack(
    stack.fns,
    `AwsSolutions-IAM4[${managed('service-role/AWSLambdaBasicExecutionRole')}]`,
    'AWS-maintained minimal policy for a Lambda function to write its own CloudWatch Logs streams; nothing broader.',
  );
  ack(
    stack.fns,
    `AwsSolutions-IAM4[${managed('service-role/AWSLambdaVPCAccessExecutionRole')}]`,
    'AWS-maintained policy Lambda needs to create/delete the ENIs of a VPC function (the functions reach Aerospike ' +
      'in the VPC); its ec2:*NetworkInterface* actions cannot be scoped to resources that do not exist yet.',
  );
  const blobs = stack.storage.blobBucket.node.defaultChild as s3.CfnBucket;
  ack(
    stack.fns,
    `AwsSolutions-IAM5[Resource::<${Stack.of(stack).getLogicalId(blobs)}.Arn>/${config.store.blobPrefix}/*]`,
    `Object actions are limited to the blob key prefix "${config.store.blobPrefix}/"; the keys are per-transaction ` +
      '(<txid>.tx / <txid>.outputs) so the grant must cover the prefix, and each function gets only the actions it uses.',
  );
  ack(
    stack.fns,
    'AwsSolutions-L1',
    'Node.js 22 is pinned on purpose: the bundled aerospike native client ships a prebuilt binding for Node ABI 127 ' +
      '(node-v127-linux-x64) only; a runtime upgrade needs the matching binding first.',
  );
  if (config.xrayTracing)
    ack(
      stack.fns,
      'AwsSolutions-IAM5[Resource::*]',
      'X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions (AWS documents "*").',
    );

  // ---- Aerospike nodes
  ack(
    stack.cluster.role,
    `AwsSolutions-IAM4[${managed('AmazonSSMManagedInstanceCore')}]`,
    'AWS-maintained policy for Session Manager access (the replacement for SSH: no key pair, no port 22).',
  );
  if (!config.aerospike.terminationProtection)
    for (const node of stack.cluster.instances)
      ack(
        node,
        'AwsSolutions-EC29',
        `Stage "${config.stage}" is disposable, so API termination protection is off (it is on by default for prod, ` +
          'or with -c terminationProtection=true); nodes are not in an ASG because each keeps a stable DNS name and ' +
          'its NVMe data, which an ASG replacement would discard.',
      );

  // ---- API
  ack(
    stack.api.api,
    `AwsSolutions-IAM4[${managed('service-role/AmazonAPIGatewayPushToCloudWatchLogs')}]`,
    'AWS-maintained policy of the account-level role API Gateway uses to write execution logs.',
  );
  ack(
    stack.api.api,
    'AwsSolutions-COG4',
    'The API uses IAM (SigV4) authorization on every method (docs/api.md): callers are validators and block ' +
      'assembly services with AWS credentials, not end users of a Cognito user pool.',
  );
  ack(
    stack.api.api,
    'AwsSolutions-APIG3',
    'No WAF web ACL: every method requires SigV4-signed requests (unsigned traffic is rejected before integration) and ' +
      'the stage is throttled; attach a WAFv2 web ACL to the stage if the account policy requires one.',
  );

  // ---- queues
  ack(
    stack.triggers.cleanupDlq,
    'AwsSolutions-SQS3',
    'This queue is itself the dead-letter queue of the cleanup schedule target and of the asynchronous cleanup ' +
      'invocations (configured on the EventBridge target and the function, which cdk-nag does not see as a redrive).',
  );
}
