/**
 * The VPC: functions in private isolated subnets (no NAT: every AWS API they call has an endpoint), Aerospike nodes
 * in their own private subnets (with NAT egress for the package download unless natGateways = 0), flow logs.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct, type IDependable } from 'constructs';
import type { UtxoStoreConfig } from './config';
import { interfaceEndpointStatements, s3EndpointStatements, s3PrefixListId } from './endpoint-policies';

export const FUNCTIONS_SUBNETS = 'functions';
export const CLUSTER_SUBNETS = 'aerospike';

/**
 * Whether the nodes need HTTPS to the internet: only to download a package from an https:// URL (a security group
 * cannot name a host, so that is 443 to 0.0.0.0/0 through the NAT gateway). Everything else a node's boot reads has
 * an endpoint: S3 (dnf's Amazon Linux repositories, s3:// packages, backups) through the gateway endpoint's prefix
 * list; SSM, Logs, metrics and CloudFormation through interface endpoints.
 */
export function nodesNeedInternet(config: UtxoStoreConfig): boolean {
  return (
    config.natGateways > 0 &&
    [config.aerospike.packageUrl, config.aerospike.exporterPackageUrl].some((u) => u.startsWith('https://'))
  );
}

export interface NetworkProps {
  config: UtxoStoreConfig;
}

export class Network extends Construct {
  readonly vpc: ec2.Vpc;
  /** the functions' security group (Aerospike 3000 admits exactly this group) */
  readonly functionsSecurityGroup: ec2.SecurityGroup;
  readonly endpointsSecurityGroup: ec2.SecurityGroup;
  /** the region's S3 managed prefix list (`com.amazonaws.<region>.s3`), resolved at deployment */
  readonly s3PrefixListId: string;
  readonly functionSubnets: ec2.SubnetSelection = { subnetGroupName: FUNCTIONS_SUBNETS };
  /** the S3 gateway endpoint and every interface endpoint: a node's first boot reads through them */
  readonly endpoints: ec2.IVpcEndpoint[] = [];
  readonly clusterSubnets: ec2.SubnetSelection = { subnetGroupName: CLUSTER_SUBNETS };

  /**
   * What a node's first boot needs in place before the instance starts (its user data runs once, under set -e): the
   * cluster subnets' routes (the NAT default route, the gateway endpoint's prefix-list route) and every endpoint.
   */
  bootDependencies(): IDependable[] {
    const routes = this.vpc.selectSubnets(this.clusterSubnets).internetConnectivityEstablished;
    return [routes, ...this.endpoints];
  }

  constructor(scope: Construct, id: string, props: NetworkProps) {
    super(scope, id);
    const { config } = props;
    const egress = config.natGateways > 0;

    const subnetConfiguration: ec2.SubnetConfiguration[] = [
      { name: FUNCTIONS_SUBNETS, subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 22 },
      {
        name: CLUSTER_SUBNETS,
        subnetType: egress ? ec2.SubnetType.PRIVATE_WITH_EGRESS : ec2.SubnetType.PRIVATE_ISOLATED,
        cidrMask: 24,
      },
    ];
    // Public subnets exist only to hold the NAT gateways; nothing else is placed in them.
    // No public IP for anything launched there by mistake (a NAT gateway has its own Elastic IP).
    if (egress)
      subnetConfiguration.push({
        name: 'nat',
        subnetType: ec2.SubnetType.PUBLIC,
        cidrMask: 26,
        mapPublicIpOnLaunch: false,
      });

    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr(config.vpcCidr),
      ...(config.availabilityZones ? { availabilityZones: config.availabilityZones } : { maxAzs: config.maxAzs }),
      natGateways: config.natGateways,
      subnetConfiguration,
      enableDnsHostnames: true,
      enableDnsSupport: true,
      // the default security group loses its rules: an ENI launched without a group of its own reaches nothing
      restrictDefaultSecurityGroup: true,
      gatewayEndpoints: { S3: { service: ec2.GatewayVpcEndpointAwsService.S3 } },
    });
    // The S3 gateway endpoint serves this account's buckets (blobs, backups, staged packages) for this account's
    // principals, and the AWS-owned buckets the nodes' package manager and SSM agent read (endpointPolicies.ts).
    const s3Endpoint = this.vpc.node.findChild('S3') as ec2.GatewayVpcEndpoint;
    for (const statement of s3EndpointStatements(config)) s3Endpoint.addToPolicy(statement);
    this.endpoints.push(s3Endpoint);
    // The region's S3 prefix list (the gateway endpoint's routes): the only S3 destination of the groups' egress
    this.s3PrefixListId = s3PrefixListId(this);

    const flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.vpc.addFlowLog('FlowLog', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup),
      trafficType: ec2.FlowLogTrafficType.ALL,
    });

    this.functionsSecurityGroup = new ec2.SecurityGroup(this, 'FunctionsSg', {
      vpc: this.vpc,
      description: 'bsv-utxo-store Lambda functions',
      allowAllOutbound: false,
    });
    this.endpointsSecurityGroup = new ec2.SecurityGroup(this, 'EndpointsSg', {
      vpc: this.vpc,
      description: 'bsv-utxo-store interface endpoints (HTTPS from inside the VPC)',
      allowAllOutbound: false,
    });
    // HTTPS only to the interface endpoints and to S3 through the gateway endpoint (the S3 prefix list)
    this.functionsSecurityGroup.addEgressRule(
      this.endpointsSecurityGroup,
      ec2.Port.tcp(443),
      'HTTPS to the interface endpoints',
    );
    this.functionsSecurityGroup.addEgressRule(
      ec2.Peer.prefixList(this.s3PrefixListId),
      ec2.Port.tcp(443),
      'HTTPS to S3 (gateway endpoint)',
    );
    this.endpointsSecurityGroup.addIngressRule(ec2.Peer.ipv4(config.vpcCidr), ec2.Port.tcp(443), 'HTTPS from the VPC');

    const services: [string, ec2.InterfaceVpcEndpointAwsService][] = [
      ['Sqs', ec2.InterfaceVpcEndpointAwsService.SQS],
      ['Logs', ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS],
      ['Monitoring', ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING],
      // Session Manager for the Aerospike nodes (no SSH anywhere)
      ['Ssm', ec2.InterfaceVpcEndpointAwsService.SSM],
      ['SsmMessages', ec2.InterfaceVpcEndpointAwsService.SSM_MESSAGES],
      ['Ec2Messages', ec2.InterfaceVpcEndpointAwsService.EC2_MESSAGES],
    ];
    if (config.xrayTracing) services.push(['Xray', ec2.InterfaceVpcEndpointAwsService.XRAY]);
    // without internet egress the nodes reach CloudFormation (their settings' pins, cdk/node-pins.ts) through an endpoint
    if (!nodesNeedInternet(config))
      services.push(['CloudFormation', ec2.InterfaceVpcEndpointAwsService.CLOUDFORMATION]);
    for (const [name, service] of services) {
      const endpoint = this.vpc.addInterfaceEndpoint(name, {
        service,
        subnets: this.functionSubnets,
        securityGroups: [this.endpointsSecurityGroup],
        privateDnsEnabled: true,
        open: false,
      });
      for (const statement of interfaceEndpointStatements(name)) endpoint.addToPolicy(statement);
      this.endpoints.push(endpoint);
    }
  }
}
