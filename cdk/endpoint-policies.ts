/**
 * What the VPC endpoints let through (docs/security.md, "Exfiltration through the VPC"): without a policy an endpoint
 * serves any principal and any resource, so code on a function or a node could use credentials of another account to
 * copy data into that account's bucket or queue. Each endpoint allows only this account's principals, and where the
 * service has resources in accounts (S3, SQS, Logs) only this account's resources; the nodes' package manager and SSM
 * agent also read a few AWS-owned buckets of the region.
 */
import { Aws, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as cr from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import type { UtxoStoreConfig } from './config';

const THIS_ACCOUNT = { 'aws:PrincipalAccount': Aws.ACCOUNT_ID };

/**
 * The AWS-owned buckets the nodes read through the S3 gateway endpoint, by exact name (a pattern such as
 * `al2023-repos-<region>-*` would also admit a bucket anyone may create under that prefix: code on a node could carry
 * data out in the keys it asks for, which that bucket's owner reads in its access logs). Read anonymously (dnf sends no signature), so their
 * statement carries no principal condition: a request there has no aws:PrincipalAccount.
 * - the Amazon Linux 2023 repositories dnf reads (the AMI's mirror list `al2023-repos-$awsregion-de612dc2`), and the
 *   kernel live-patching bucket beside them (Amazon Linux 2023 User Guide, "Kernel Live Patching"; AWS's VPC
 *   endpoint policy examples, data-perimeter-policy-examples, "AllowRequestsToAWSOwnedResources");
 * - the SSM agent's buckets (AWS Systems Manager User Guide, "SSM Agent communications with AWS managed S3 buckets").
 * The CloudWatch agent comes from the Amazon Linux repositories (`dnf install amazon-cloudwatch-agent`), not from its
 * own download bucket.
 */
export function awsOwnedBuckets(region: string = Aws.REGION): string[] {
  const r = region;
  return [
    `al2023-repos-${r}-de612dc2`,
    `al2023-${r}`,
    `aws-ssm-${r}`,
    `aws-windows-downloads-${r}`,
    `amazon-ssm-${r}`,
    `amazon-ssm-packages-${r}`,
    `${r}-birdwatcher-prod`,
    `aws-ssm-distributor-file-${r}`,
    `aws-ssm-document-attachments-${r}`,
    `patch-baseline-snapshot-${r}`,
  ];
}

/** A statement for any principal; the conditions narrow it to this account. */
function anyPrincipal(
  sid: string,
  actions: string[],
  resources: string[],
  conditions: Record<string, unknown>,
): iam.PolicyStatement {
  return new iam.PolicyStatement({ sid, principals: [new iam.AnyPrincipal()], actions, resources, conditions });
}

export function s3EndpointStatements(config: UtxoStoreConfig): iam.PolicyStatement[] {
  const staged = [config.aerospike.packageUrl, config.aerospike.exporterPackageUrl]
    .filter((u) => u.startsWith('s3://'))
    .map((u) => `arn:${Aws.PARTITION}:s3:::${u.slice('s3://'.length)}`);
  return [
    anyPrincipal('ThisAccountsBuckets', ['s3:*'], ['*'], {
      StringEquals: { ...THIS_ACCOUNT, 'aws:ResourceAccount': Aws.ACCOUNT_ID },
    }),
    // any principal, anonymous included: only reads, only of these AWS-owned buckets
    new iam.PolicyStatement({
      sid: 'AwsOwnedBuckets',
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:GetObject'],
      resources: awsOwnedBuckets().map((b) => `arn:${Aws.PARTITION}:s3:::${b}/*`),
    }),
    // staged packages may sit in another account's bucket: read by the node role (a signed request of this account)
    ...(staged.length > 0
      ? [anyPrincipal('StagedPackages', ['s3:GetObject'], staged, { StringEquals: THIS_ACCOUNT })]
      : []),
  ];
}

/** Services whose resources belong to an account: the endpoint also requires this account's resources. */
const ACCOUNT_RESOURCES = new Set(['Sqs', 'Logs']);

export function interfaceEndpointStatements(name: string): iam.PolicyStatement[] {
  return [
    anyPrincipal('ThisAccount', ['*'], ['*'], {
      StringEquals: ACCOUNT_RESOURCES.has(name)
        ? { ...THIS_ACCOUNT, 'aws:ResourceAccount': Aws.ACCOUNT_ID }
        : THIS_ACCOUNT,
    }),
  ];
}

/** The id of the region's S3 managed prefix list, looked up at deployment (ec2:DescribeManagedPrefixLists). */
export function s3PrefixListId(scope: Construct): string {
  const lookup = new cr.AwsCustomResource(scope, 'S3PrefixList', {
    onUpdate: {
      service: 'EC2',
      action: 'describeManagedPrefixLists',
      parameters: { Filters: [{ Name: 'prefix-list-name', Values: [`com.amazonaws.${Stack.of(scope).region}.s3`] }] },
      physicalResourceId: cr.PhysicalResourceId.of(`s3-prefix-list-${Stack.of(scope).region}`),
      outputPaths: ['PrefixLists.0.PrefixListId'],
    },
    policy: cr.AwsCustomResourcePolicy.fromSdkCalls({ resources: cr.AwsCustomResourcePolicy.ANY_RESOURCE }),
    installLatestAwsSdk: false,
  });
  return lookup.getResponseField('PrefixLists.0.PrefixListId');
}
