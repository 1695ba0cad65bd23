/**
 * The Aerospike Community Edition 7.x cluster: one EC2 instance per node on an NVMe instance-store family, the `utxo`
 * namespace on the instance-store devices, mesh heartbeat between the nodes.
 *
 * Peer discovery: a Route 53 private hosted zone. Node i is published as `aerospike-<i>.<zone>` (an A record on its
 * private IP) and every node's aerospike.conf lists all node names as `mesh-seed-address-port`. We chose DNS over
 * EC2-tag discovery because the names are known at synthesis time: the configuration is static (no AWS API calls
 * or IAM permissions at boot, no script to keep in sync), the same names are the functions' seed hosts in
 * UTXO_STORE, and a replaced node keeps its name (the record follows the new private IP in the same deployment).
 * Aerospike re-resolves and retries seeds, so a node that boots before its peers' records exist joins later.
 *
 * UDF registration: the store registers the Lua module on its first connection (createUtxoStore -> ensureModule,
 * under a content-versioned name, so a changed module is registered by the first function that runs the new code).
 * No custom resource is needed: a custom resource would need its own VPC function with the native client only to
 * do what the first request does anyway. Check after the first deployment with `asinfo -v udf-list`.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as route53 from 'aws-cdk-lib/aws-route53';
import { Construct } from 'constructs';
import { maxRecordSizeBytes, type AerospikeConfig, type StoreConfig } from './config';

export const AEROSPIKE_SERVICE_PORT = 3000;
export const AEROSPIKE_FABRIC_PORT = 3001;
export const AEROSPIKE_HEARTBEAT_PORT = 3002;
/** replaced at boot by one `device /dev/nvmeXn1` line per instance-store device */
const DEVICES_PLACEHOLDER = '        @DEVICES@';

export interface AerospikeClusterProps {
  vpc: ec2.IVpc;
  subnets: ec2.SubnetSelection;
  /** the only security group admitted on the service port 3000 */
  clientSecurityGroup: ec2.ISecurityGroup;
  aerospike: AerospikeConfig;
  store: Pick<StoreConfig, 'utxoBatchSize' | 'maxTxSizeInStore'>;
  clusterName: string;
}

/** aerospike.conf for a cluster whose nodes are `seeds` (DNS names). */
export function renderAerospikeConf(opts: {
  clusterName: string;
  seeds: string[];
  aerospike: AerospikeConfig;
  maxRecordSize: number;
}): string {
  const a = opts.aerospike;
  const replication = Math.min(a.replicationFactor, a.nodeCount);
  return [
    '# Written by the bsv-utxo-store CDK app (cdk/aerospike-cluster.ts).',
    'service {',
    '    proto-fd-max 15000',
    `    cluster-name ${opts.clusterName}`,
    '}',
    'logging {',
    '    console {',
    '        context any info',
    '    }',
    '}',
    'network {',
    '    service {',
    '        address any',
    `        port ${AEROSPIKE_SERVICE_PORT}`,
    '    }',
    '    heartbeat {',
    '        mode mesh',
    `        port ${AEROSPIKE_HEARTBEAT_PORT}`,
    ...opts.seeds.map((s) => `        mesh-seed-address-port ${s} ${AEROSPIKE_HEARTBEAT_PORT}`),
    '        # cloud networks: interval 150 ms, timeout 20 intervals (Aerospike recommendation)',
    '        interval 150',
    '        timeout 20',
    '    }',
    '    fabric {',
    `        port ${AEROSPIKE_FABRIC_PORT}`,
    '    }',
    '}',
    `namespace ${a.namespace} {`,
    `    replication-factor ${replication}`,
    '    # records never expire by TTL: deletion is the cleanup service (docs/cleanup.md)',
    '    default-ttl 0',
    '    # the supervisor must run: the create lock records carry a TTL (docs/records.md)',
    `    nsup-period ${a.nsupPeriodSeconds}`,
    '    # B x 68-byte slots + the tx bytes when not external + small bins, whole MiB (cdk/config.ts)',
    `    max-record-size ${opts.maxRecordSize}`,
    '    # the primary and secondary indexes stay in RAM (Community Edition: no flash/pmem index)',
    '    storage-engine device {',
    DEVICES_PLACEHOLDER,
    '        # no eviction: a UTXO store must not drop records',
    '        evict-used-pct 0',
    '        stop-writes-used-pct 80',
    '    }',
    '}',
    '',
  ].join('\n');
}

/** The boot script: install Aerospike CE, find the NVMe instance-store devices, write the config, start. */
export function renderUserData(opts: { packageUrl: string; conf: string }): string[] {
  const fetch = opts.packageUrl.startsWith('s3://')
    ? `aws s3 cp '${opts.packageUrl}' /tmp/aerospike.tgz`
    : `curl -fsSL --retry 10 --retry-delay 6 -o /tmp/aerospike.tgz '${opts.packageUrl}'`;
  return [
    'set -euxo pipefail',
    'exec > >(tee -a /var/log/aerospike-bootstrap.log) 2>&1',
    // tar/gzip/python3 are on the AMI; dnf reaches the Amazon Linux repositories (in S3) even without NAT
    'dnf install -y tar gzip python3 || true',
    fetch,
    'mkdir -p /tmp/aerospike && tar -xzf /tmp/aerospike.tgz --strip-components=1 -C /tmp/aerospike',
    '(cd /tmp/aerospike && ./asinstall)',
    // Instance-store NVMe devices report the model "Amazon EC2 NVMe Instance Storage"; the EBS root volume is
    // "Amazon Elastic Block Store". Names (nvme1n1, ...) vary by type, so the model is the reliable key.
    'DEVICES=$(lsblk -d -n -o NAME,MODEL | awk \'/Instance Storage/ {print "/dev/" $1}\')',
    'if [ -z "$DEVICES" ]; then echo "no NVMe instance-store device found" >&2; exit 1; fi',
    // A new device must have its first 8 MiB (the Aerospike header) zeroed before first use (user data runs on the
    // first boot only; instance storage is blank after a stop/start anyway).
    'for d in $DEVICES; do blkdiscard "$d" || dd if=/dev/zero of="$d" bs=1M count=8 oflag=direct; done',
    "cat > /etc/aerospike/aerospike.conf.template <<'AEROSPIKE_CONF'",
    opts.conf.trimEnd(),
    'AEROSPIKE_CONF',
    // one `device` line per instance-store device in place of the @DEVICES@ line
    'while IFS= read -r line; do if [ "$line" = "' +
      DEVICES_PLACEHOLDER +
      '" ]; then for d in $DEVICES; do echo "        device $d"; done; else printf \'%s\\n\' "$line"; fi; done' +
      ' < /etc/aerospike/aerospike.conf.template > /etc/aerospike/aerospike.conf',
    'systemctl enable aerospike',
    'systemctl start aerospike',
  ];
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

  constructor(scope: Construct, id: string, props: AerospikeClusterProps) {
    super(scope, id);
    const a = props.aerospike;

    this.securityGroup = new ec2.SecurityGroup(this, 'Sg', {
      vpc: props.vpc,
      description: 'Aerospike nodes: 3000 from the functions, 3001-3002 between nodes',
      // package download and OS updates through the NAT gateway; SSM through the endpoints
      allowAllOutbound: true,
    });
    this.securityGroup.addIngressRule(
      props.clientSecurityGroup,
      ec2.Port.tcp(AEROSPIKE_SERVICE_PORT),
      'Aerospike service from the functions',
    );
    this.securityGroup.addIngressRule(
      this.securityGroup,
      ec2.Port.tcpRange(AEROSPIKE_FABRIC_PORT, AEROSPIKE_HEARTBEAT_PORT),
      'Aerospike fabric and mesh heartbeat between nodes',
    );
    props.clientSecurityGroup.connections.allowTo(
      this.securityGroup,
      ec2.Port.tcp(AEROSPIKE_SERVICE_PORT),
      'Aerospike service',
    );

    this.zone = new route53.PrivateHostedZone(this, 'Zone', { zoneName: a.hostedZoneName, vpc: props.vpc });
    this.hostNames = Array.from({ length: a.nodeCount }, (_, i) => `aerospike-${i + 1}.${a.hostedZoneName}`);
    this.maxRecordSize = maxRecordSizeBytes(props.store);
    this.conf = renderAerospikeConf({
      clusterName: props.clusterName,
      seeds: this.hostNames,
      aerospike: a,
      maxRecordSize: this.maxRecordSize,
    });

    this.role = new iam.Role(this, 'NodeRole', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description: 'Aerospike nodes: Session Manager only',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore')],
    });
    if (a.packageUrl.startsWith('s3://')) {
      const [bucket, ...key] = a.packageUrl.slice('s3://'.length).split('/');
      this.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [`arn:${Stack.of(this).partition}:s3:::${bucket}/${key.join('/')}`],
        }),
      );
    }

    const subnets = props.vpc.selectSubnets(props.subnets).subnets;
    const userDataScript = renderUserData({ packageUrl: a.packageUrl, conf: this.conf });
    for (let i = 0; i < a.nodeCount; i++) {
      const userData = ec2.UserData.forLinux();
      userData.addCommands(`hostnamectl set-hostname ${this.hostNames[i]}`, ...userDataScript);
      const node = new ec2.Instance(this, `Node${i + 1}`, {
        vpc: props.vpc,
        // spread the nodes over the AZs
        vpcSubnets: { subnets: [subnets[i % subnets.length]] },
        instanceType: new ec2.InstanceType(a.instanceType),
        machineImage: ec2.MachineImage.latestAmazonLinux2023({ cpuType: ec2.AmazonLinuxCpuType.X86_64 }),
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
