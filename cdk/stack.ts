/**
 * The service stack: storage (blob bucket, signal queue), functions, API (with its three caller roles), triggers and
 * the dashboard and service alarms. It runs in the VPC of the cluster stack (cdk/cluster-stack.ts) and reaches the
 * Aerospike nodes by their DNS names; it can be deployed as often as the code changes without touching the cluster.
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { Api } from './api';
import { DirectInvoke } from './direct-invoke';
import { API_ROLES } from '../lib/http/roles';
import { FUNCTION_NAMES, type FunctionName, type UtxoStoreConfig } from './config';
import { FUNCTION_TABLE, Functions } from './functions';
import { AdminOperationAlarm, AuditAlarm } from './audit';
import { Observability } from './observability';
import { Storage } from './storage';
import { Triggers } from './triggers';

export interface UtxoStoreStackProps extends StackProps {
  config: UtxoStoreConfig;
  vpc: ec2.IVpc;
  functionSubnets: ec2.SubnetSelection;
  functionsSecurityGroup: ec2.ISecurityGroup;
  /** `aerospike://...` */
  utxoStoreUrl: string;
  clusterName: string;
  aerospikeMetricsNamespace: string;
  alarmTopic?: sns.ITopic;
}

export function stackName(config: UtxoStoreConfig): string {
  return `BsvUtxoStore-${config.stage}`;
}

export class UtxoStoreStack extends Stack {
  readonly config: UtxoStoreConfig;
  readonly storage: Storage;
  readonly fns: Functions;
  readonly api: Api;
  readonly directInvoke: DirectInvoke;
  readonly triggers: Triggers;
  readonly observability: Observability;
  readonly adminAssumed: AuditAlarm;
  readonly adminOperation: AdminOperationAlarm;

  constructor(scope: Construct, id: string, props: UtxoStoreStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.config = config;
    Tags.of(this).add('project', 'bsv-utxo-store');
    Tags.of(this).add('stage', config.stage);

    this.storage = new Storage(this, 'Storage', {
      config,
      signalConsumerTimeout: Duration.seconds(config.functions.signals.timeoutSeconds),
    });
    this.fns = new Functions(this, 'Functions', {
      config,
      vpc: props.vpc,
      subnets: props.functionSubnets,
      securityGroup: props.functionsSecurityGroup,
      storage: this.storage,
      utxoStoreUrl: props.utxoStoreUrl,
    });
    this.storage.restrictSignalSenders(
      FUNCTION_NAMES.filter((fn) => FUNCTION_TABLE[fn].sendsSignals).map((fn) => this.fns.functions[fn].role!),
    );
    const gatewayAliases = Object.fromEntries(Object.entries(this.fns.gateway).map(([fn, g]) => [fn, g.alias]));
    this.api = new Api(this, 'Api', { config, targets: gatewayAliases });
    // API Gateway's execution log group (loggingLevel ERROR) would otherwise be created by API Gateway itself, outside
    // the template and without retention; the stage waits for it
    const executionLogs = new logs.LogGroup(this, 'ApiExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.api.restApiId}/${this.api.stageName}`,
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.api.api.deploymentStage.node.addDependency(executionLogs);
    this.directInvoke = new DirectInvoke(this, 'DirectInvoke', {
      config,
      functions: this.fns.functions,
      gateway: this.fns.gateway,
      roles: this.api.roles,
      sourceArns: this.api.invokeSourceArns,
    });
    // the caller's role per request (lib/http/caller.ts): the names of the roles API Gateway reports as the signer
    const callerRoles = API_ROLES.map((role) => `${role}=${this.api.roles[role].roleName}`).join(',');
    for (const fn of Object.keys(this.directInvoke.invokerRoles) as FunctionName[])
      this.fns.functions[fn].addEnvironment('API_CALLER_ROLES', callerRoles);
    this.triggers = new Triggers(this, 'Triggers', {
      config,
      signalQueue: this.storage.signalQueue,
      signalConsumer: this.fns.targets.signals!,
      cleanup: this.fns.targets.cleanup!,
      qualified: { signals: this.fns.qualified.signals, cleanup: this.fns.qualified.cleanup },
    });
    this.observability = new Observability(this, 'Observability', {
      config,
      restApiName: this.api.api.restApiName,
      stageName: this.api.stageName,
      functions: this.fns.functions,
      signalQueue: this.storage.signalQueue,
      signalDlq: this.storage.signalDlq,
      cleanupDlq: this.triggers.cleanupDlq,
      clusterName: props.clusterName,
      aerospikeMetricsNamespace: props.aerospikeMetricsNamespace,
      topic: props.alarmTopic,
    });

    // every assumption of the admin role is worth a look (docs/runbook.md "AdminRoleAssumed")
    this.adminAssumed = new AuditAlarm(this, 'AdminRoleAssumed', {
      description: `The ${config.stage} admin API role was assumed`,
      source: 'aws.sts',
      eventNames: ['AssumeRole'],
      detail: { requestParameters: { roleArn: [this.api.roles.admin.roleArn] } },
      topic: props.alarmTopic,
    });

    // and every admin operation, whoever invoked it: an admin invoker never assumes the role (security review N9)
    this.adminOperation = new AdminOperationAlarm(this, 'AdminOperation', {
      logGroup: this.fns.logGroups.admin,
      stage: config.stage,
      topic: props.alarmTopic,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url, description: 'base URL of the v1 API (SigV4)' });
    for (const [role, r] of Object.entries(this.api.roles))
      new CfnOutput(this, `${role.charAt(0).toUpperCase()}${role.slice(1)}RoleArn`, {
        value: r.roleArn,
        description: `the API's ${role} role: assume it to call its routes (README, Security)`,
      });
    new CfnOutput(this, 'BlobBucket', { value: this.storage.blobBucket.bucketName });
    new CfnOutput(this, 'SignalQueueUrl', { value: this.storage.signalQueue.queueUrl });
    new CfnOutput(this, 'DashboardName', { value: `bsv-utxo-store-${config.stage}` });
  }
}
