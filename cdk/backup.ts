/**
 * Backups of the namespace: an encrypted, versioned S3 bucket with lifecycle rules; a State Manager association that
 * runs aerospike-backup on the nodes every backupIntervalHours (only the cluster principal backs up); an SSM
 * Command document that runs aerospike-restore on a node (README, runbook "Restore from backup"). The scripts are
 * rendered by cdk/aerospike-scripts.ts and exercised by test/cdk/node-scripts.test.ts.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { renderBackupScript, renderRestoreScript } from './aerospike-scripts';

export interface BackupProps {
  clusterName: string;
  /** the tag key and value the nodes carry */
  nodeTag: { key: string; value: string };
  namespace: string;
  intervalHours: number;
  retentionDays: number;
  nodeRole: iam.IRole;
}

/** Key prefix of the backups in the bucket. */
export const BACKUP_PREFIX = 'aerospike';

export class Backup extends Construct {
  readonly bucket: s3.Bucket;
  readonly accessLogBucket: s3.Bucket;
  readonly association: ssm.CfnAssociation;
  readonly restoreDocument: ssm.CfnDocument;
  readonly backupScript: string;
  readonly restoreScript: string;

  constructor(scope: Construct, id: string, props: BackupProps) {
    super(scope, id);
    this.accessLogBucket = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // The only copy of the UTXO set outside the nodes: retained on stack deletion, versioned (an overwrite or delete
    // keeps the previous version for retentionDays), encrypted, TLS only.
    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogBucket,
      serverAccessLogsPrefix: 'backup-bucket/',
      lifecycleRules: [
        {
          id: 'expire-backups',
          prefix: `${BACKUP_PREFIX}/`,
          expiration: Duration.days(props.retentionDays),
          noncurrentVersionExpiration: Duration.days(props.retentionDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // asbackup writes (multipart) and lists; asrestore lists and reads (aerospike.com/docs/database/tools/
    // backup-and-restore, "Required S3 permissions")
    props.nodeRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'BackupObjects',
        actions: ['s3:PutObject', 's3:GetObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: [this.bucket.arnForObjects(`${BACKUP_PREFIX}/*`)],
      }),
    );
    props.nodeRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'BackupBucket',
        actions: ['s3:ListBucket', 's3:GetBucketLocation'],
        resources: [this.bucket.bucketArn],
      }),
    );

    const script = { bucket: this.bucket.bucketName, prefix: BACKUP_PREFIX, namespace: props.namespace };
    this.backupScript = renderBackupScript(script);
    this.restoreScript = renderRestoreScript(script);

    this.association = new ssm.CfnAssociation(this, 'Schedule', {
      name: 'AWS-RunShellScript',
      associationName: `${props.clusterName}-backup`,
      scheduleExpression: `rate(${props.intervalHours} ${props.intervalHours === 1 ? 'hour' : 'hours'})`,
      targets: [{ key: `tag:${props.nodeTag.key}`, values: [props.nodeTag.value] }],
      parameters: {
        commands: [`cat > /tmp/aerospike-backup <<'SCRIPT'\n${this.backupScript}SCRIPT`, 'bash /tmp/aerospike-backup'],
        executionTimeout: ['14400'],
      },
      // every node runs it; the principal backs up, the others exit at once
      maxConcurrency: '100%',
      maxErrors: '100%',
    });

    this.restoreDocument = new ssm.CfnDocument(this, 'Restore', {
      documentType: 'Command',
      name: `${props.clusterName}-restore`,
      updateMethod: 'NewVersion',
      content: {
        schemaVersion: '2.2',
        description: `Restore one complete backup of ${props.namespace} from s3://<backup bucket>/${BACKUP_PREFIX}/`,
        parameters: {
          backupTime: {
            type: 'String',
            description: 'the backup directory name (UTC time), e.g. 2026-01-31T03-00-00Z',
            allowedPattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}Z$',
          },
        },
        mainSteps: [
          {
            action: 'aws:runShellScript',
            name: 'restore',
            inputs: {
              timeoutSeconds: '28800',
              runCommand: [
                `cat > /tmp/aerospike-restore <<'SCRIPT'\n${this.restoreScript}SCRIPT`,
                "bash /tmp/aerospike-restore '{{ backupTime }}'",
              ],
            },
          },
        ],
      },
    });
  }
}
