/**
 * The blob bucket (`.tx` / `.outputs`, docs/records.md), its access-log bucket, and the signal queue with its DLQ
 * (docs/signals.md).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { UtxoStoreConfig } from './config';

/** The aws-cdk-lib feature flag: server access logs delivered under a bucket policy instead of an ACL. */
export const ACCESS_LOGS_BY_POLICY = '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy';

/**
 * The bucket that receives a construct's S3 server access logs: private, TLS only, no ACLs (the log delivery is granted
 * by a bucket policy: logging.s3.amazonaws.com, source bucket and account).
 */
export function accessLogBucket(
  scope: Construct,
  lifecycleRules: s3.LifecycleRule[],
  removalPolicy: RemovalPolicy,
): s3.Bucket {
  // server access logs are delivered under a bucket policy (logging.s3.amazonaws.com with the source bucket and
  // account), not the legacy LogDeliveryWrite ACL, so the log bucket can enforce bucket-owner ownership
  scope.node.setContext(ACCESS_LOGS_BY_POLICY, true);
  return new s3.Bucket(scope, 'AccessLogs', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: false,
    lifecycleRules,
    removalPolicy,
  });
}

/** Days a deleted or overwritten blob stays recoverable as a noncurrent version. */
export const BLOB_NONCURRENT_DAYS = 30;

export interface StorageProps {
  config: UtxoStoreConfig;
  /** the signal consumer's timeout: the queue's visibility timeout is six times it (AWS guidance for Lambda) */
  signalConsumerTimeout: Duration;
}

export class Storage extends Construct {
  readonly blobBucket: s3.Bucket;
  readonly accessLogBucket: s3.Bucket;
  readonly signalQueue: sqs.Queue;
  readonly signalDlq: sqs.Queue;
  /** key prefix of the blobs (no slashes) */
  readonly blobPrefix: string;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);
    const { config } = props;
    const removalPolicy = config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.blobPrefix = config.store.blobPrefix;
    this.accessLogBucket = accessLogBucket(
      this,
      [
        { id: 'expire-access-logs', expiration: Duration.days(config.logRetentionDays) },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy,
    );

    this.blobBucket = new s3.Bucket(this, 'Blobs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // The only copy of externally stored txs: versioned, so an overwrite or a mistaken delete keeps the previous
      // version; cleanup's deletes leave a noncurrent version that expires after blobNoncurrentDays.
      versioned: true,
      serverAccessLogsBucket: this.accessLogBucket,
      serverAccessLogsPrefix: 'blobs-bucket/',
      lifecycleRules: [
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        {
          id: 'expire-noncurrent-versions',
          noncurrentVersionExpiration: Duration.days(BLOB_NONCURRENT_DAYS),
          expiredObjectDeleteMarker: true,
        },
      ],
      removalPolicy,
    });

    this.signalDlq = new sqs.Queue(this, 'SignalDlq', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    this.signalQueue = new sqs.Queue(this, 'SignalQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(props.signalConsumerTimeout.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.signalDlq, maxReceiveCount: config.signalMaxReceiveCount },
      removalPolicy,
    });
  }

  /** ARN pattern of every blob object: `<bucket>/<prefix>/*` */
  blobObjectsArn(): string {
    return this.blobBucket.arnForObjects(`${this.blobPrefix}/*`);
  }

  /**
   * Only the functions that send signals may (security review #10): a Deny of sqs:SendMessage (SendMessageBatch is
   * authorized as SendMessage) to every principal whose aws:PrincipalArn is not one of their roles, so a broad
   * sqs:* grant elsewhere in the account cannot forge a signal.
   */
  restrictSignalSenders(roles: iam.IRole[]): void {
    this.signalQueue.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'OnlyTheSenderFunctions',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['sqs:SendMessage'],
        resources: [this.signalQueue.queueArn],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': roles.map((r) => r.roleArn) } },
      }),
    );
  }
}
