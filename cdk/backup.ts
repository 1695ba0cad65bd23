/**
 * Backups of the namespace: an encrypted, versioned S3 bucket with lifecycle rules; a State Manager association that
 * runs aerospike-backup on the nodes every backupIntervalHours (only the cluster principal backs up); an SSM
 * Command document that runs aerospike-restore on a node (README, runbook "Restore from backup"). The scripts are
 * rendered by cdk/backup-scripts.ts and exercised by test/cdk/node-scripts.test.ts.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { accessLogBucket } from './storage';
import { renderBackupScript, renderRestoreScript, SUPERSEDED_TAG } from './backup-scripts';

export interface BackupProps {
  clusterName: string;
  /** the tag key and value the nodes carry */
  nodeTag: { key: string; value: string };
  namespace: string;
  intervalHours: number;
  retentionDays: number;
  nodeRole: iam.IRole;
  /** CloudWatch namespace of the BackupCompleted metric (the nodes may put metrics only there) */
  metricsNamespace: string;
  /** complete backups that are never superseded (so never expire) */
  keepNewest: number;
  /** days of Object Lock (governance) retention of every backup version; 0: none */
  objectLockDays: number;
  topic?: sns.ITopic;
}

/** The metric the backup script puts after the marker (dimension cluster_name). */
export const BACKUP_COMPLETED_METRIC = 'BackupCompleted';
/** CloudWatch evaluates an alarm over at most 7 days of hourly periods. */
const MAX_ALARM_HOURS = 168;

/**
 * Commands that write `script` to a fresh root-only file (mktemp under a 0700 directory, never a fixed /tmp path
 * another local user could plant or swap) and run it with `args`.
 */
export function runPrivately(name: string, script: string, args: string): string[] {
  return [
    `umask 077; d=$(mktemp -d /root/${name}.XXXXXX); trap 'rm -rf "$d"' EXIT; cat > "$d/${name}" <<'SCRIPT'\n${script}SCRIPT\nbash "$d/${name}" ${args}`.trimEnd(),
  ];
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
  readonly ageAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: BackupProps) {
    super(scope, id);
    this.accessLogBucket = accessLogBucket(
      this,
      [{ id: 'expire-access-logs', expiration: Duration.days(90) }],
      RemovalPolicy.RETAIN,
    );
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
      // Only superseded backups expire (the backup script tags every directory older than the newest keepNewest
      // complete ones): if backups stop, the newest complete ones stay until someone acts on the BackupAge alarm.
      lifecycleRules: [
        {
          id: 'expire-superseded-backups',
          prefix: `${BACKUP_PREFIX}/`,
          tagFilters: { [SUPERSEDED_TAG]: 'true' },
          expiration: Duration.days(props.retentionDays),
        },
        {
          id: 'expire-noncurrent-backup-versions',
          prefix: `${BACKUP_PREFIX}/`,
          noncurrentVersionExpiration: Duration.days(props.retentionDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
      // optional write-once retention: not even the node role (or anyone without s3:BypassGovernanceRetention) can
      // delete or overwrite a backup version before it ends
      ...(props.objectLockDays > 0
        ? {
            objectLockEnabled: true,
            objectLockDefaultRetention: s3.ObjectLockRetention.governance(Duration.days(props.objectLockDays)),
          }
        : {}),
    });
    // asbackup writes (multipart) and lists; asrestore lists and reads (aerospike.com/docs/database/tools/
    // backup-and-restore, "Required S3 permissions")
    props.nodeRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'BackupObjects',
        actions: [
          's3:PutObject',
          's3:GetObject',
          's3:AbortMultipartUpload',
          's3:ListMultipartUploadParts',
          's3:PutObjectTagging',
        ],
        resources: [this.bucket.arnForObjects(`${BACKUP_PREFIX}/*`)],
      }),
    );
    props.nodeRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'BackupBucket',
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${BACKUP_PREFIX}/`, `${BACKUP_PREFIX}/*`] } },
      }),
    );
    props.nodeRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'BackupBucketLocation',
        actions: ['s3:GetBucketLocation'],
        resources: [this.bucket.bucketArn],
      }),
    );

    const script = { bucket: this.bucket.bucketName, prefix: BACKUP_PREFIX, namespace: props.namespace };
    this.backupScript = renderBackupScript({
      ...script,
      metric: { namespace: props.metricsNamespace, clusterName: props.clusterName },
      keepNewest: props.keepNewest,
    });
    this.restoreScript = renderRestoreScript(script);

    this.association = new ssm.CfnAssociation(this, 'Schedule', {
      name: 'AWS-RunShellScript',
      associationName: `${props.clusterName}-backup`,
      scheduleExpression: `rate(${props.intervalHours} ${props.intervalHours === 1 ? 'hour' : 'hours'})`,
      targets: [{ key: `tag:${props.nodeTag.key}`, values: [props.nodeTag.value] }],
      parameters: {
        commands: runPrivately('aerospike-backup', this.backupScript, ''),
        executionTimeout: ['14400'],
      },
      // every node runs it; the principal backs up, the others exit at once; any failure fails the association
      maxConcurrency: '100%',
      maxErrors: '0',
    });

    // No BackupCompleted (the backup script's metric) for twice the interval: backups stopped (docs/runbook.md)
    const hours = Math.min(2 * props.intervalHours, MAX_ALARM_HOURS);
    this.ageAlarm = new cloudwatch.Metric({
      namespace: props.metricsNamespace,
      metricName: BACKUP_COMPLETED_METRIC,
      dimensionsMap: { cluster_name: props.clusterName },
      statistic: 'Sum',
      period: Duration.hours(1),
    }).createAlarm(this, 'BackupAge', {
      alarmDescription: `No complete backup of ${props.namespace} for ${hours} hours (docs/runbook.md)`,
      threshold: 1,
      evaluationPeriods: hours,
      datapointsToAlarm: hours,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    if (props.topic) this.ageAlarm.addAlarmAction(new actions.SnsAction(props.topic));

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
              runCommand: runPrivately('aerospike-restore', this.restoreScript, "'{{ backupTime }}'"),
            },
          },
        ],
      },
    });
  }
}
