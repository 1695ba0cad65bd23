/**
 * The Aerospike Community Edition 8.1 cluster: one EC2 instance per node on an NVMe instance-store family, the `utxo`
 * namespace on the instance-store devices (by stable /dev/disk/by-id path), mesh heartbeat between the nodes.
 *
 * Data safety: a node's data lives on its instance store, which a stop, a hibernation or a replacement erases. So
 * nothing a deployment routinely changes touches an instance: the AMI is pinned (config amiIds or the AerospikeAmiId
 * stack parameter), the user data only fetches and runs the bootstrap, and the conf, package URLs/checksums and node
 * scripts live in SSM parameters (cdk/aerospike-scripts.ts). A changed conf is applied node by node with
 * aerospike-apply-config (README, runbook). The cluster stack's policy refuses any update of the instances.
 *
 * Placement: node i goes to AZ i mod AZs (round robin), so with nodeCount <= AZs every node is in its own AZ; with
 * more nodes, validateConfig requires enough replicas that the loss of one AZ keeps a copy of every partition.
 *
 * Peer discovery: a Route 53 private hosted zone; node i is `aerospike-<i>.<zone>` and every node's conf lists all
 * names as mesh seeds. The same names are the functions' seed hosts; a replaced node keeps its name.
 *
 * UDF registration: the store registers the Lua module on its first connection (createUtxoStore -> ensureModule,
 * content-versioned), which functions do during init (lib/runtime.ts warmRuntime).
 */
import { Duration, Lazy, Stack, Tags } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct, type IDependable } from 'constructs';
import {
  AEROSPIKE_FABRIC_PORT,
  AEROSPIKE_HEARTBEAT_PORT,
  AEROSPIKE_SERVICE_PORT,
  parameterNames,
  renderAerospikeConf,
  renderAgentConfig,
  renderApplyConfigScript,
  renderBootstrap,
  featureKeyParameterName,
  renderDeviceScript,
  renderUserData,
  DEVICES_FILE,
} from './aerospike-scripts';
import { PIN_METADATA_KEY, pinOf, type PinnedSetting, type Pins } from './node-pins';
import { renderWatchdogScript } from './node-watchdog';
import { aerospikeConfSettings, maxRecordSizeBytes, type AerospikeConfig, type StoreConfig } from './config';

export { AEROSPIKE_FABRIC_PORT, AEROSPIKE_HEARTBEAT_PORT, AEROSPIKE_SERVICE_PORT };

/**
 * The SSM agent's actions of AmazonSSMManagedInstanceCore (Session Manager, Run Command, State Manager associations)
 * without ssm:GetParameter/GetParameters and the patching action: the node reads only its own parameters.
 */
export const SSM_AGENT_ACTIONS = [
  'ssm:DescribeAssociation',
  'ssm:DescribeDocument',
  'ssm:GetDocument',
  'ssm:GetManifest',
  'ssm:ListAssociations',
  'ssm:ListInstanceAssociations',
  'ssm:PutComplianceItems',
  'ssm:PutInventory',
  'ssm:UpdateAssociationStatus',
  'ssm:UpdateInstanceAssociationStatus',
  'ssm:UpdateInstanceInformation',
  'ssmmessages:CreateControlChannel',
  'ssmmessages:CreateDataChannel',
  'ssmmessages:OpenControlChannel',
  'ssmmessages:OpenDataChannel',
  'ec2messages:AcknowledgeMessage',
  'ec2messages:DeleteMessage',
  'ec2messages:FailMessage',
  'ec2messages:GetEndpoint',
  'ec2messages:GetMessages',
  'ec2messages:SendReply',
];

/** The tag the backup association and the runbook's SSM commands target the nodes by. */
export const CLUSTER_TAG = 'bsv-utxo-store:aerospike-cluster';

export interface AerospikeClusterProps {
  vpc: ec2.IVpc;
  subnets: ec2.SubnetSelection;
  /** the only security group admitted on the service port 3000 */
  clientSecurityGroup: ec2.ISecurityGroup;
  /** the interface endpoints' group and the S3 prefix list: the nodes' HTTPS egress */
  endpointsSecurityGroup: ec2.ISecurityGroup;
  s3PrefixListId: string;
  /** a package comes from an https:// URL and NAT gateways exist: HTTPS to the internet too (cdk/network.ts) */
  internetEgress: boolean;
  aerospike: AerospikeConfig;
  store: Pick<StoreConfig, 'utxoBatchSize' | 'maxTxSizeInStore'>;
  clusterName: string;
  /** SSM parameter prefix, `/bsv-utxo-store/<stage>/aerospike` */
  parameterPrefix: string;
  /** the AMI: a region -> AMI map (pinned in the config) or an AMI id token (the stack parameter) */
  ami: Record<string, string> | string;
  packageSha256: string;
  exporterPackageSha256: string;
  /** CloudWatch namespace of the exporter's metrics */
  metricsNamespace: string;
  logRetentionDays: number;
  /** what must exist before a node boots besides this construct's own resources (routes, endpoints) */
  bootDependencies?: IDependable[];
}

/** A machine image whose id is a token (a stack parameter). */
class ParameterImage implements ec2.IMachineImage {
  constructor(private readonly imageId: string) {}
  getImage(): ec2.MachineImageConfig {
    return { imageId: this.imageId, osType: ec2.OperatingSystemType.LINUX, userData: ec2.UserData.forLinux() };
  }
}

export class AerospikeCluster extends Construct {
  readonly securityGroup: ec2.SecurityGroup;
  readonly instances: ec2.Instance[] = [];
  readonly role: iam.Role;
  readonly zone: route53.PrivateHostedZone;
  /** DNS names of the nodes, node 1 first */
  readonly hostNames: string[];
  readonly maxRecordSize: number;
  readonly conf: string;
  readonly logGroup: logs.LogGroup;
  readonly prometheusLogGroup: logs.LogGroup;
  readonly parameters: Record<keyof ReturnType<typeof parameterNames>, ssm.StringParameter>;
  /** where a node finds the SHA-256 of each setting it accepts (cdk/node-pins.ts) */
  readonly pins: Pins;

  constructor(scope: Construct, id: string, props: AerospikeClusterProps) {
    super(scope, id);
    const a = props.aerospike;

    this.securityGroup = new ec2.SecurityGroup(this, 'Sg', {
      vpc: props.vpc,
      description: 'Aerospike nodes: 3000 from the functions, 3001-3002 between nodes',
      allowAllOutbound: false,
    });
    // Egress: HTTPS to the interface endpoints (SSM, logs, metrics) and to S3 (the gateway endpoint's prefix list);
    // HTTPS to the internet only for an https:// package URL through NAT (the package host; cdk/network.ts);
    // Aerospike's ports only to the other nodes. DNS, NTP and the instance metadata are not filtered by groups.
    const sg = this.securityGroup;
    const https = ec2.Port.tcp(443);
    const service = ec2.Port.tcp(AEROSPIKE_SERVICE_PORT);
    sg.addEgressRule(props.endpointsSecurityGroup, https, 'HTTPS to the interface endpoints');
    sg.addEgressRule(ec2.Peer.prefixList(props.s3PrefixListId), https, 'HTTPS to S3');
    if (props.internetEgress) sg.addEgressRule(ec2.Peer.anyIpv4(), https, 'HTTPS through the NAT gateway');
    const allNodePorts = ec2.Port.tcpRange(AEROSPIKE_SERVICE_PORT, AEROSPIKE_HEARTBEAT_PORT);
    sg.addEgressRule(sg, allNodePorts, 'Aerospike service, fabric and heartbeat to the other nodes');
    sg.addIngressRule(props.clientSecurityGroup, service, 'Aerospike service from the functions');
    const fabric = ec2.Port.tcpRange(AEROSPIKE_FABRIC_PORT, AEROSPIKE_HEARTBEAT_PORT);
    sg.addIngressRule(sg, fabric, 'Aerospike fabric and mesh heartbeat between nodes');
    // asbackup/asrestore and asadm on one node reach the others' service port
    sg.addIngressRule(sg, service, 'Aerospike service between nodes (backup, restore, asadm)');
    props.clientSecurityGroup.connections.allowTo(sg, service, 'Aerospike service');

    this.zone = new route53.PrivateHostedZone(this, 'Zone', { zoneName: a.hostedZoneName, vpc: props.vpc });
    this.hostNames = Array.from({ length: a.nodeCount }, (_, i) => `aerospike-${i + 1}.${a.hostedZoneName}`);
    this.maxRecordSize = maxRecordSizeBytes(props.store);
    this.conf = renderAerospikeConf(aerospikeConfSettings(a, props.store, props.clusterName, this.hostNames));

    const logGroupName = `/bsv-utxo-store/${props.clusterName}/aerospike`;
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName,
      retention: props.logRetentionDays as logs.RetentionDays,
    });
    // the agent's EMF log group of the exporter metrics (renderAgentConfig), created here so it has a retention
    this.prometheusLogGroup = new logs.LogGroup(this, 'PrometheusLogs', {
      logGroupName: `${logGroupName}/prometheus`,
      retention: props.logRetentionDays as logs.RetentionDays,
    });

    const names = parameterNames(props.parameterPrefix);
    const keys = Object.keys(names) as (keyof typeof names)[];
    // The parameters first (their values are set below: the scripts name the parameters' logical ids, the pins)
    const values = {} as Record<keyof typeof names, string>;
    this.parameters = {} as typeof this.parameters;
    for (const key of keys)
      this.parameters[key] = new ssm.StringParameter(this, `Param${key.charAt(0).toUpperCase()}${key.slice(1)}`, {
        parameterName: names[key],
        stringValue: Lazy.string({ produce: () => values[key] }),
        description: `bsv-utxo-store Aerospike node setting (${key}); applied per node, see README runbook`,
      });
    const cfnOf = (key: keyof typeof names) => this.parameters[key].node.defaultChild as ssm.CfnParameter;
    const setting = (key: keyof typeof names): PinnedSetting =>
      names[key].slice(props.parameterPrefix.length + 1) as PinnedSetting;
    this.pins = {
      stackName: Stack.of(this).stackName,
      logicalIds: Object.fromEntries(keys.map((k) => [setting(k), Stack.of(this).getLogicalId(cfnOf(k))])) as Record<
        PinnedSetting,
        string
      >,
    };
    Object.assign(values, {
      conf: this.conf,
      package: `${a.packageUrl} ${props.packageSha256}`,
      exporterPackage: `${a.exporterPackageUrl} ${props.exporterPackageSha256}`,
      bootstrap: renderBootstrap({
        prefix: props.parameterPrefix,
        logGroupName,
        strongConsistency: a.strongConsistency ? { namespace: a.namespace, nodeCount: a.nodeCount } : undefined,
        pins: this.pins,
      }),
      devicesScript: renderDeviceScript(),
      applyConfigScript: renderApplyConfigScript(props.parameterPrefix, a.nodeCount, this.pins),
      // check-start finds the other nodes in the conf apply-config writes (its mesh seeds, min-cluster-size)
      watchdogScript: renderWatchdogScript(DEVICES_FILE, {
        file: '/etc/aerospike/aerospike.conf',
        serviceBelowHeartbeat: AEROSPIKE_HEARTBEAT_PORT - AEROSPIKE_SERVICE_PORT,
      }),
      agentConfig: JSON.stringify(renderAgentConfig({ metricsNamespace: props.metricsNamespace, logGroupName })),
    });
    for (const key of keys) {
      const value = values[key];
      if (value.length > 8192)
        throw new Error(`SSM parameter ${names[key]} would be ${value.length} characters (max 8192)`);
      // standard parameters hold 4 KB; the bootstrap is larger (advanced tier: 8 KB)
      cfnOf(key).tier = value.length > 4096 ? ssm.ParameterTier.ADVANCED : ssm.ParameterTier.STANDARD;
      // what a node accepts (cdk/node-pins.ts): the value's hash, or for a package the package's own checksum
      const pin =
        key === 'package'
          ? props.packageSha256
          : key === 'exporterPackage'
            ? props.exporterPackageSha256
            : pinOf(value);
      cfnOf(key).addMetadata(PIN_METADATA_KEY, pin);
    }

    this.role = new iam.Role(this, 'NodeRole', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description: 'Aerospike nodes: Session Manager, their SSM settings, CloudWatch agent, backups',
    });
    // What AmazonSSMManagedInstanceCore grants the agent, without its ssm:GetParameter(s) on "*" (which with the
    // account's aws/ssm key would read every SecureString too): Session Manager, Run Command, State Manager.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'SsmAgent',
        actions: SSM_AGENT_ACTIONS,
        resources: ['*'],
      }),
    );
    // What the CloudWatch agent does with this config (renderAgentConfig): log events into the two groups below,
    // which exist (no logs:CreateLogGroup, no logs:PutRetentionPolicy), and metrics only into the cluster's namespace
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'AgentLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
        resources: [this.logGroup.logGroupArn, this.prometheusLogGroup.logGroupArn],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'AgentMetrics',
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringEquals: { 'cloudwatch:namespace': props.metricsNamespace } },
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'NodeSettings',
        actions: ['ssm:GetParameter'],
        resources: Object.values(this.parameters).map((p) => p.parameterArn),
      }),
    );
    // the pins (cdk/node-pins.ts): the metadata of this stack's resources
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'NodeSettingPins',
        actions: ['cloudformation:DescribeStackResource'],
        resources: [
          Stack.of(this).formatArn({
            service: 'cloudformation',
            resource: 'stack',
            resourceName: `${Stack.of(this).stackName}/*`,
          }),
        ],
      }),
    );
    if (a.strongConsistency) {
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'FeatureKey',
          actions: ['ssm:GetParameter'],
          resources: [
            Stack.of(this).formatArn({
              service: 'ssm',
              resource: 'parameter',
              resourceName: featureKeyParameterName(props.parameterPrefix).replace(/^\//, ''),
            }),
          ],
        }),
      );
    }
    for (const url of [a.packageUrl, a.exporterPackageUrl]) {
      if (!url.startsWith('s3://')) continue;
      const [bucket, ...key] = url.slice('s3://'.length).split('/');
      this.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [`arn:${Stack.of(this).partition}:s3:::${bucket}/${key.join('/')}`],
        }),
      );
    }

    const machineImage =
      typeof props.ami === 'string' ? new ParameterImage(props.ami) : ec2.MachineImage.genericLinux(props.ami);
    const subnets = props.vpc.selectSubnets(props.subnets).subnets;
    for (let i = 0; i < a.nodeCount; i++) {
      const userData = ec2.UserData.forLinux();
      userData.addCommands(...renderUserData(props.parameterPrefix, i + 1, this.hostNames[i], this.pins));
      const node = new ec2.Instance(this, `Node${i + 1}`, {
        vpc: props.vpc,
        // round robin over the AZs (one subnet per AZ): node i in AZ i mod AZs
        vpcSubnets: { subnets: [subnets[i % subnets.length]] },
        instanceType: new ec2.InstanceType(a.instanceType),
        machineImage,
        securityGroup: this.securityGroup,
        role: this.role,
        userData,
        // IMDSv2 only, on the instance itself (requireImdsv2 would add a launch template with a fixed name that
        // collides between two stages in one account)
        httpTokens: ec2.HttpTokens.REQUIRED,
        httpEndpoint: true,
        httpPutResponseHopLimit: 1,
        detailedMonitoring: true,
        disableApiTermination: a.terminationProtection,
        ebsOptimized: true,
        blockDevices: [
          {
            deviceName: '/dev/xvda',
            volume: ec2.BlockDeviceVolume.ebs(a.rootVolumeGb, {
              encrypted: true,
              volumeType: ec2.EbsDeviceVolumeType.GP3,
              deleteOnTermination: true,
            }),
          },
        ],
        propagateTagsToVolumeOnCreation: true,
      });
      Tags.of(node).add(CLUSTER_TAG, props.clusterName);
      // The user data runs once, under set -e: everything it reaches must exist first. The node's egress rules (the
      // group and its separate egress resources, which wait for the S3 prefix-list lookup), its settings and log
      // groups, the routes and endpoints.
      node.node.addDependency(
        this.securityGroup,
        ...Object.values(this.parameters),
        this.logGroup,
        this.prometheusLogGroup,
        ...(props.bootDependencies ?? []),
      );
      this.instances.push(node);
      new route53.ARecord(this, `Node${i + 1}Record`, {
        zone: this.zone,
        recordName: `aerospike-${i + 1}`,
        target: route53.RecordTarget.fromIpAddresses(node.instancePrivateIp),
        ttl: Duration.seconds(30),
      });
    }
  }

  /** `aerospike://h1:3000,h2:3000/<namespace>?set=<set>` (docs/settings.md) */
  connectionString(namespace: string, set: string): string {
    const hosts = this.hostNames.map((h) => `${h}:${AEROSPIKE_SERVICE_PORT}`).join(',');
    return `aerospike://${hosts}/${namespace}?set=${set}`;
  }
}
