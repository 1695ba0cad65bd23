/**
 * The whole deployment as one stack of readable constructs: network, Aerospike cluster, storage, functions, API,
 * triggers and observability. One stack keeps every reference inside a template (no cross-stack exports to pin
 * resources), and a deployment is one `cdk deploy`.
 */
import { CfnOutput, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AerospikeCluster } from './aerospike-cluster';
import { Api } from './api';
import type { UtxoStoreConfig } from './config';
import { Functions } from './functions';
import { Network } from './network';
import { applyNagSuppressions } from './nag';
import { Observability } from './observability';
import { Storage } from './storage';
import { Triggers } from './triggers';
import { Duration } from 'aws-cdk-lib';

export interface UtxoStoreStackProps extends StackProps {
  config: UtxoStoreConfig;
}

export function stackName(config: UtxoStoreConfig): string {
  return `BsvUtxoStore-${config.stage}`;
}

export class UtxoStoreStack extends Stack {
  readonly config: UtxoStoreConfig;
  readonly network: Network;
  readonly cluster: AerospikeCluster;
  readonly storage: Storage;
  readonly fns: Functions;
  readonly api: Api;
  readonly triggers: Triggers;
  readonly observability: Observability;

  constructor(scope: Construct, id: string, props: UtxoStoreStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.config = config;
    Tags.of(this).add('project', 'bsv-utxo-store');
    Tags.of(this).add('stage', config.stage);

    this.network = new Network(this, 'Network', { config });
    this.cluster = new AerospikeCluster(this, 'Aerospike', {
      vpc: this.network.vpc,
      subnets: this.network.clusterSubnets,
      clientSecurityGroup: this.network.functionsSecurityGroup,
      aerospike: config.aerospike,
      store: config.store,
      clusterName: `bsv-utxo-store-${config.stage}`,
    });
    this.storage = new Storage(this, 'Storage', {
      config,
      signalConsumerTimeout: Duration.seconds(config.functions.signals.timeoutSeconds),
    });
    this.fns = new Functions(this, 'Functions', {
      config,
      vpc: this.network.vpc,
      subnets: this.network.functionSubnets,
      securityGroup: this.network.functionsSecurityGroup,
      storage: this.storage,
      utxoStoreUrl: this.cluster.connectionString(config.aerospike.namespace, config.aerospike.set),
    });
    this.api = new Api(this, 'Api', { config, targets: this.fns.targets });
    this.triggers = new Triggers(this, 'Triggers', {
      config,
      signalQueue: this.storage.signalQueue,
      signalConsumer: this.fns.targets.signals,
      cleanup: this.fns.targets.cleanup,
    });
    this.observability = new Observability(this, 'Observability', {
      config,
      restApiName: this.api.api.restApiName,
      stageName: this.api.stageName,
      functions: this.fns.functions,
      signalQueue: this.storage.signalQueue,
      signalDlq: this.storage.signalDlq,
      cleanupDlq: this.triggers.cleanupDlq,
      nodes: this.cluster.instances,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url, description: 'base URL of the v1 API (SigV4)' });
    new CfnOutput(this, 'BlobBucket', { value: this.storage.blobBucket.bucketName });
    new CfnOutput(this, 'SignalQueueUrl', { value: this.storage.signalQueue.queueUrl });
    new CfnOutput(this, 'AerospikeHosts', { value: this.cluster.hostNames.join(',') });
    this.cluster.instances.forEach(
      (node, i) =>
        new CfnOutput(this, `AerospikeNode${i + 1}InstanceId`, {
          value: node.instanceId,
          description: `aws ssm start-session --target <this id> (node ${i + 1})`,
        }),
    );
    new CfnOutput(this, 'DashboardName', { value: `bsv-utxo-store-${config.stage}` });

    applyNagSuppressions(this);
  }
}
