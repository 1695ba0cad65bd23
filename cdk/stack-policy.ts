/**
 * The cluster stack's CloudFormation stack policy and the small stack that sets it. CDK has no stack-policy support
 * (aws/aws-cdk#1697, open), so the policy is applied by an AwsCustomResource calling cloudformation:SetStackPolicy on
 * the cluster stack, from a stack deployed after it (the pattern discussed in that issue). A stack policy, once set,
 * applies to every later update of the cluster stack, whoever deploys it (CloudFormation User Guide, "Prevent
 * updates to stack resources").
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';

/** Resource types whose update, replacement or deletion would lose data or the nodes' identity. */
export const PROTECTED_TYPES = {
  /** any update: a replacement erases the instance store, and so can a modification (stop/start) */
  anyUpdate: ['AWS::EC2::Instance'],
  /** replacement or deletion */
  replaceOrDelete: ['AWS::S3::Bucket', 'AWS::Route53::HostedZone', 'AWS::EC2::VPC', 'AWS::EC2::Subnet'],
};

/** The policy document: everything may be updated except the protected resources. */
export function clusterStackPolicy(): Record<string, unknown> {
  return {
    Statement: [
      {
        Effect: 'Deny',
        Principal: '*',
        Action: 'Update:*',
        Resource: '*',
        Condition: { StringEquals: { ResourceType: PROTECTED_TYPES.anyUpdate } },
      },
      {
        Effect: 'Deny',
        Principal: '*',
        Action: ['Update:Replace', 'Update:Delete'],
        Resource: '*',
        Condition: { StringEquals: { ResourceType: PROTECTED_TYPES.replaceOrDelete } },
      },
      { Effect: 'Allow', Principal: '*', Action: 'Update:*', Resource: '*' },
    ],
  };
}

export interface StackPolicyStackProps extends StackProps {
  /** the stack to protect (deployed before this one) */
  target: Stack;
  logRetentionDays: number;
}

export class StackPolicyStack extends Stack {
  readonly setter: cr.AwsCustomResource;

  constructor(scope: Construct, id: string, props: StackPolicyStackProps) {
    super(scope, id, props);
    this.addStackDependency(props.target);
    const call: cr.AwsSdkCall = {
      service: 'CloudFormation',
      action: 'setStackPolicy',
      parameters: { StackName: props.target.stackName, StackPolicyBody: JSON.stringify(clusterStackPolicy()) },
      physicalResourceId: cr.PhysicalResourceId.of(`${props.target.stackName}-stack-policy`),
    };
    this.setter = new cr.AwsCustomResource(this, 'SetStackPolicy', {
      onCreate: call,
      onUpdate: call,
      // deleting this stack leaves the policy in place (removing protection is a deliberate operator step)
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({
          actions: ['cloudformation:SetStackPolicy'],
          resources: [
            this.formatArn({
              service: 'cloudformation',
              resource: 'stack',
              resourceName: `${props.target.stackName}/*`,
            }),
          ],
        }),
      ]),
      logGroup: new logs.LogGroup(this, 'SetStackPolicyLogs', {
        retention: props.logRetentionDays as logs.RetentionDays,
      }),
      installLatestAwsSdk: false,
    });
  }
}
