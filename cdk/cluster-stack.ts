/**
 * The data stack: network, the Aerospike cluster, its backups and its alarms (and the alarm topic the service stack
 * uses too). Its own stack so that a routine deployment of the functions and the API never updates it, with
 * termination protection and a stack policy refusing any update of the nodes (cdk/stack-policy.ts). The service
 * stack (cdk/stack.ts) imports the VPC, subnets and security group from it; nothing here depends on the service.
 */
import { CfnOutput, CfnParameter, Fn, Stack, Tags, Token, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { AerospikeCluster, CLUSTER_TAG } from './aerospike-cluster';
import { AuditAlarm } from './audit';
import { Backup } from './backup';
import { ClusterAlarms } from './cluster-alarms';
import type { UtxoStoreConfig } from './config';
import { Network, nodesNeedInternet } from './network';

export interface ClusterStackProps extends StackProps {
  config: UtxoStoreConfig;
}

export function clusterName(config: UtxoStoreConfig): string {
  return `bsv-utxo-store-${config.stage}`;
}

export function aerospikeMetricsNamespace(config: UtxoStoreConfig): string {
  return `${config.powertoolsMetricsNamespace}/Aerospike`;
}

export class ClusterStack extends Stack {
  readonly config: UtxoStoreConfig;
  readonly network: Network;
  readonly cluster: AerospikeCluster;
  readonly backup: Backup;
  readonly alarms: ClusterAlarms;
  readonly settingsWritten: AuditAlarm;
  readonly topic?: sns.Topic;
  readonly clusterName: string;

  constructor(scope: Construct, id: string, props: ClusterStackProps) {
    super(scope, id, { ...props, terminationProtection: props.config.aerospike.terminationProtection });
    const { config } = props;
    this.config = config;
    const a = config.aerospike;
    this.clusterName = clusterName(config);
    Tags.of(this).add('project', 'bsv-utxo-store');
    Tags.of(this).add('stage', config.stage);

    // Unpinned settings come from stack parameters, which CloudFormation keeps across updates: the first deployment
    // names them (`cdk deploy --parameters <stack>:AerospikeAmiId=ami-...`), later ones reuse them unless changed.
    const parameter = (id: string, description: string, type: string, allowedPattern?: string): string =>
      new CfnParameter(this, id, { type, description, allowedPattern }).valueAsString;
    const SHA = '^[0-9a-f]{64}$';
    const ami =
      a.amiIds ??
      parameter(
        'AerospikeAmiId',
        'Amazon Linux 2023 x86_64 AMI of the Aerospike nodes (pin it: a new AMI replaces every node)',
        'AWS::EC2::Image::Id',
      );
    const packageSha256 =
      a.packageSha256 ?? parameter('AerospikePackageSha256', `SHA-256 of ${a.packageUrl}`, 'String', SHA);
    const exporterSha256 =
      a.exporterPackageSha256 ??
      parameter('ExporterPackageSha256', `SHA-256 of ${a.exporterPackageUrl}`, 'String', SHA);

    const parameterPrefix = `/bsv-utxo-store/${config.stage}/aerospike`;
    this.network = new Network(this, 'Network', { config });
    this.cluster = new AerospikeCluster(this, 'Aerospike', {
      vpc: this.network.vpc,
      subnets: this.network.clusterSubnets,
      clientSecurityGroup: this.network.functionsSecurityGroup,
      endpointsSecurityGroup: this.network.endpointsSecurityGroup,
      s3PrefixListId: this.network.s3PrefixListId,
      internetEgress: nodesNeedInternet(config),
      aerospike: a,
      store: config.store,
      clusterName: this.clusterName,
      parameterPrefix,
      ami,
      packageSha256,
      exporterPackageSha256: exporterSha256,
      metricsNamespace: aerospikeMetricsNamespace(config),
      logRetentionDays: config.logRetentionDays,
      bootDependencies: this.network.bootDependencies(),
    });

    if (config.alarmEmail) {
      // CloudWatch can publish to an encrypted topic only with a customer managed key that lets it use the key
      const key = new kms.Key(this, 'AlarmTopicKey', {
        description: 'bsv-utxo-store alarm topic encryption',
        enableKeyRotation: true,
      });
      // only for this account's alarms (no confused deputy: another account's alarm cannot use the key)
      key.addToResourcePolicy(
        new iam.PolicyStatement({
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
          resources: ['*'],
          conditions: {
            StringEquals: { 'aws:SourceAccount': this.account },
            ArnLike: { 'aws:SourceArn': `arn:${this.partition}:cloudwatch:${this.region}:${this.account}:alarm:*` },
          },
        }),
      );
      this.topic = new sns.Topic(this, 'AlarmTopic', {
        displayName: `bsv-utxo-store ${config.stage} alarms`,
        masterKey: key,
        enforceSSL: true,
      });
      this.topic.addSubscription(new subscriptions.EmailSubscription(config.alarmEmail));
    }
    this.backup = new Backup(this, 'Backup', {
      clusterName: this.clusterName,
      nodeTag: { key: CLUSTER_TAG, value: this.clusterName },
      namespace: a.namespace,
      intervalHours: a.backupIntervalHours,
      retentionDays: a.backupRetentionDays,
      nodeRole: this.cluster.role,
      metricsNamespace: aerospikeMetricsNamespace(config),
      objectLockDays: a.backupObjectLockDays,
      keepNewest: a.backupKeepNewest,
      topic: this.topic,
    });
    // a node setting written outside CloudFormation (cdk/node-pins.ts refuses it on the nodes; this tells someone)
    this.settingsWritten = new AuditAlarm(this, 'NodeSettingsWritten', {
      description: `An Aerospike node setting under ${parameterPrefix}/ was written outside CloudFormation`,
      source: 'aws.ssm',
      eventNames: ['PutParameter', 'DeleteParameter', 'LabelParameterVersion'],
      detail: {
        requestParameters: { name: [{ prefix: `${parameterPrefix}/` }] },
        sourceIPAddress: [{ 'anything-but': 'cloudformation.amazonaws.com' }],
      },
      topic: this.topic,
    });
    this.alarms = new ClusterAlarms(this, 'Alarms', {
      aerospike: a,
      clusterName: this.clusterName,
      metricsNamespace: aerospikeMetricsNamespace(config),
      nodes: this.cluster.instances,
      topic: this.topic,
    });

    new CfnOutput(this, 'AerospikeHosts', { value: this.cluster.hostNames.join(',') });
    new CfnOutput(this, 'BackupBucket', { value: this.backup.bucket.bucketName });
    new CfnOutput(this, 'RestoreDocument', { value: this.backup.restoreDocument.ref });
    this.cluster.instances.forEach(
      (node, i) =>
        new CfnOutput(this, `AerospikeNode${i + 1}InstanceId`, {
          value: node.instanceId,
          description: `aws ssm start-session --target <this id> (node ${i + 1})`,
        }),
    );
  }

  /**
   * An environment-agnostic stack gets only 2 AZs from CDK (it cannot know the region's); the cluster needs
   * maxAzs (default 3) so that one node per AZ keeps a copy of every partition after an AZ is lost. The first maxAzs
   * AZs of the deployment region (Fn::GetAZs), resolved by CloudFormation. With an explicit region, CDK's own list
   * (or config availabilityZones) applies.
   */
  override get availabilityZones(): string[] {
    if (!Token.isUnresolved(this.region)) return super.availabilityZones;
    return Array.from({ length: this.config?.maxAzs ?? 3 }, (_, i) => Fn.select(i, Fn.getAzs()));
  }

  /** `aerospike://...` for the functions' UTXO_STORE */
  connectionString(): string {
    return this.cluster.connectionString(this.config.aerospike.namespace, this.config.aerospike.set);
  }
}
