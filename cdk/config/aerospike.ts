/** Configuration area: the Aerospike nodes (Community Edition limits, packages, AMI, conf, backups). */
import type { ConfSettings } from '../aerospike-scripts';
import { bool, ConfigurationError, int, scriptSafe, type ContextSpec } from './errors';
import {
  CE_MAX_CLUSTER_SIZE,
  MIN_COMMANDS_IN_PROCESS,
  namespaceProblem,
  setNameProblem,
} from '../../lib/domain/engine-limits';
import { maxRecordSizeBytes, type StoreConfig } from './store';

/**
 * Aerospike Community Edition limits (aerospike.com/docs/database/reference/limitations, "Cluster size" and
 * "Amount of data"): at most 8 nodes, and 5 TB of data per cluster (640 GB of unique data per node). Rack awareness
 * is Enterprise-only (aerospike.com/docs/kubernetes/manage/configure/rack-awareness: "Enterprise Edition 4.0 and
 * later"), so replicas are spread over AZs by node placement alone (validateAerospike's AZ rule).
 */
export const CE_MAX_NODES = CE_MAX_CLUSTER_SIZE;
export const CE_MAX_DATA_BYTES_PER_NODE = 640 * 1000 ** 3;

/**
 * Raw instance-store capacity (bytes, all NVMe devices of one instance) of the types we can check at synth; other
 * types of NVME_FAMILIES are accepted without the per-node data check (their capacity is not in this table).
 * Source: the EC2 instance-store volume tables (docs.aws.amazon.com/ec2/latest/instancetypes, "Instance store
 * specifications").
 */
export const INSTANCE_STORE_BYTES: Record<string, number> = {
  'i4i.large': 468e9,
  'i4i.xlarge': 937e9,
  'i4i.2xlarge': 1875e9,
  'i4i.4xlarge': 3750e9,
  'i3.large': 475e9,
  'i3.xlarge': 950e9,
  'i3.2xlarge': 1900e9,
};

/** NVMe instance-store families with x86_64 (the AMI is Amazon Linux 2023 x86_64). */
export const NVME_FAMILIES = [
  'i3',
  'i3en',
  'i4i',
  'i7i',
  'i7ie',
  'r5d',
  'r5ad',
  'r5dn',
  'r6id',
  'r6idn',
  'm5d',
  'm5ad',
  'm5dn',
  'm6id',
  'm6idn',
  'c5d',
  'c6id',
  'z1d',
  'x2idn',
  'x2iedn',
];

export interface AerospikeConfig {
  /** number of EC2 nodes (>= 1; replication-factor is capped at it) */
  nodeCount: number;
  /** an NVMe instance-store x86_64 type: i4i, i3, i3en, i7ie, r6id, m6id, c6id, ... (default i4i.large) */
  instanceType: string;
  /** Aerospike Community Edition 7.x server+tools package for Amazon Linux 2023 x86_64 (https:// or s3://) */
  packageUrl: string;
  namespace: string;
  set: string;
  replicationFactor: number;
  /** seconds between namespace supervisor runs; must be > 0 because the lock records carry a TTL */
  nsupPeriodSeconds: number;
  /** GiB of the encrypted gp3 root volume */
  rootVolumeGb: number;
  /** EC2 API termination protection on the nodes */
  terminationProtection: boolean;
  /** the Route 53 private hosted zone the nodes are published in (node i is `aerospike-<i>.<zone>`) */
  hostedZoneName: string;
  /**
   * The pinned AMI of the nodes, per region (`-c aerospikeAmi=us-east-1:ami-...,eu-west-1:ami-...`, or
   * `aerospikeAmi=ami-...` with an explicit region). Changed on purpose only: a new AMI replaces a node, which erases
   * its instance-store data (the cluster stack's policy refuses it; README, runbook "Upgrade the OS image").
   * Unset: the template takes the AMI from the stack parameter AerospikeAmiId, which CloudFormation keeps across
   * updates (`cdk deploy --parameters ...AerospikeAmiId=ami-...` on the first deployment).
   */
  amiIds?: Record<string, string>;
  /**
   * SHA-256 (hex) of the package at packageUrl; the boot script refuses a package that does not match. Unset: the
   * stack parameter AerospikePackageSha256 (required at the first deployment, kept across updates).
   */
  packageSha256?: string;
  /** the Aerospike Prometheus exporter RPM (x86_64) the node installs next to the server, and its SHA-256 */
  exporterPackageUrl: string;
  /** unset: the stack parameter ExporterPackageSha256 */
  exporterPackageSha256?: string;
  /** `proto-fd-max`: client connections one node accepts (the connection budget must fit under it) */
  protoFdMax: number;
  /** AEROSPIKE_MAX_CONNS_PER_NODE of every function: connections one execution environment may open to one node */
  clientMaxConnsPerNode: number;
  /** alarm: a namespace's device use above this percent (stop-writes-used-pct is 80) */
  deviceUsedAlarmPercent: number;
  /** hours between asbackup runs of the namespace to the backup bucket */
  backupIntervalHours: number;
  /** days a superseded backup is kept (noncurrent versions: the same); the newest backupKeepNewest never expire */
  backupRetentionDays: number;
  /** complete backups never superseded, so never expired: the newest ones stay if backups stop */
  backupKeepNewest: number;
  /** days of S3 Object Lock (governance mode) on every backup version; 0: none (set it at the first deployment) */
  backupObjectLockDays: number;
  /**
   * The Enterprise path (docs/decisions/0006-partitions-on-community-edition.md): the namespace in strong-consistency
   * mode, its roster set by the node bootstrap, the functions' reads linearizable. Needs an Enterprise Edition
   * packageUrl and its feature key in the SSM SecureString `<prefix>/feature-key`. Default false (Community Edition).
   */
  strongConsistency: boolean;
  /**
   * SPEND_ACK_GUARD of the functions: `refuse` answers a spend applied while the cluster is not settled as in doubt
   * (503); `off` acknowledges it. Default: `refuse` on Community Edition, `off` with strongConsistency (the engine
   * itself then refuses what it cannot make durable).
   */
  spendAckGuard?: 'refuse' | 'off';
  /**
   * Accept replication-factor 2 on 3 or more Community Edition nodes (refused otherwise): two nodes that die within
   * the same second lose the acknowledged writes still in their write buffers (CE has no commit-to-device), the
   * partition harness's two-kill nemesis (docs/reliability.md). Default false.
   */
  acceptTwoNodeLoss: boolean;
}

export function aerospikeDefaults(stage: string): AerospikeConfig {
  return {
    nodeCount: 3,
    instanceType: 'i4i.large',
    // the 8.1.2 line the store is tested on (docs/e2e.md: the conf this app writes starts an 8.1.2 node as written)
    packageUrl:
      'https://download.aerospike.com/artifacts/aerospike-server-community/8.1.2.5/' +
      'aerospike-server-community_8.1.2.5_tools-13.0.3_amzn2023_x86_64.tgz',
    namespace: 'utxo',
    set: 'utxos',
    // 3 copies where there are 3 nodes (capped at nodeCount: 2 on 2 nodes): a second node lost while a wiped or
    // replaced node refills keeps a copy of every partition (docs/reliability.md, durability); 1.5x the storage of RF 2
    replicationFactor: 3,
    nsupPeriodSeconds: 120,
    rootVolumeGb: 30,
    terminationProtection: true,
    hostedZoneName: `aerospike.${stage}.utxo.internal`,
    exporterPackageUrl:
      'https://download.aerospike.com/artifacts/aerospike-prometheus-exporter/1.9.0/' +
      'aerospike-prometheus-exporter-1.9.0.x86_64.rpm',
    protoFdMax: 15000,
    clientMaxConnsPerNode: 32,
    deviceUsedAlarmPercent: 70,
    backupIntervalHours: 24,
    backupRetentionDays: stage === 'prod' ? 35 : 7,
    backupKeepNewest: 3,
    backupObjectLockDays: 0,
    strongConsistency: false,
    acceptTwoNodeLoss: false,
  };
}

export const AEROSPIKE_CONTEXT: ContextSpec = {
  keys: {
    nodeCount: 'aerospike.nodeCount',
    instanceType: 'aerospike.instanceType',
    aerospikePackageUrl: 'aerospike.packageUrl',
    aerospikeNamespace: 'aerospike.namespace',
    aerospikeSet: 'aerospike.set',
    replicationFactor: 'aerospike.replicationFactor',
    nsupPeriod: 'aerospike.nsupPeriodSeconds',
    rootVolumeGb: 'aerospike.rootVolumeGb',
    terminationProtection: 'aerospike.terminationProtection',
    hostedZoneName: 'aerospike.hostedZoneName',
    aerospikeAmi: 'aerospike.amiIds',
    aerospikePackageSha256: 'aerospike.packageSha256',
    exporterPackageUrl: 'aerospike.exporterPackageUrl',
    exporterPackageSha256: 'aerospike.exporterPackageSha256',
    protoFdMax: 'aerospike.protoFdMax',
    clientMaxConnsPerNode: 'aerospike.clientMaxConnsPerNode',
    deviceUsedAlarmPercent: 'aerospike.deviceUsedAlarmPercent',
    backupIntervalHours: 'aerospike.backupIntervalHours',
    backupRetentionDays: 'aerospike.backupRetentionDays',
    backupKeepNewest: 'aerospike.backupKeepNewest',
    backupObjectLockDays: 'aerospike.backupObjectLockDays',
    aerospikeStrongConsistency: 'aerospike.strongConsistency',
    spendAckGuard: 'aerospike.spendAckGuard',
    acceptTwoNodeLoss: 'aerospike.acceptTwoNodeLoss',
  },
  optional: ['amiIds', 'packageSha256', 'exporterPackageSha256'],
  parsers: { 'aerospike.amiIds': (key, raw) => amiMap(key, raw) },
};

/** `ami-...` (for the explicit region, resolved in validateAerospike) or `region:ami-...,region:ami-...` */
export function amiMap(key: string, raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [region, ami] = part.includes(':') ? part.split(':').map((x) => x.trim()) : ['*', part];
    if (!region || !ami) throw new ConfigurationError(key, `expected region:ami-id, got "${part}"`);
    out[region] = ami;
  }
  return out;
}

const URL_CHAR = /^[A-Za-z0-9._~:/+=%@-]$/;

/** A package the nodes download: an https:// or s3:// URL of a `kind` file, s3:// only without internet egress. */
function packageUrl(key: string, url: string, kind: '.tgz' | '.rpm', natGateways: number): void {
  // the URL reaches the bootstrap (a parameter it reads into a quoted variable) and the node role's policy: no
  // character a shell or a policy would read as syntax
  scriptSafe(key, url, URL_CHAR, 'a package URL', 1024);
  if (!new RegExp(`^(https|s3)://[^/]+/\\S+\\${kind}$`).test(url))
    throw new ConfigurationError(key, `expected an https:// or s3:// URL of ${kind === '.tgz' ? 'a' : 'an'} ${kind}`);
  if (natGateways === 0 && !url.startsWith('s3://'))
    throw new ConfigurationError(
      key,
      'with natGateways=0 the nodes have no internet egress: stage the package in S3 and give its s3:// URL',
    );
}

/** The settings of other areas the Aerospike checks depend on. */
interface AerospikeContext {
  region?: string;
  availabilityZones?: string[];
  maxAzs: number;
  natGateways: number;
  aerospike: AerospikeConfig;
}

/** Validates c.aerospike; a bare `aerospikeAmi=ami-...` is resolved to the stack's region here. */
export function validateAerospike(c: AerospikeContext): void {
  const a = c.aerospike;
  int('nodeCount', a.nodeCount, 1, CE_MAX_NODES);
  const family = a.instanceType.split('.')[0];
  if (!NVME_FAMILIES.includes(family) || !/^[a-z0-9]+\.[a-z0-9]+$/.test(a.instanceType))
    throw new ConfigurationError(
      'instanceType',
      `"${a.instanceType}" is not an x86_64 NVMe instance-store type (families: ${NVME_FAMILIES.join(', ')})`,
    );
  packageUrl('aerospikePackageUrl', a.packageUrl, '.tgz', c.natGateways);
  int('replicationFactor', a.replicationFactor, 1, 4);
  const azCount = c.availabilityZones?.length ?? c.maxAzs;
  const replication = effectiveReplication(a);
  // Without rack awareness (Enterprise-only) Aerospike may put every copy of a partition on nodes of one AZ whenever
  // an AZ holds as many nodes as there are copies; placing nodes round-robin over the AZs, an AZ holds at most
  // ceil(nodeCount / AZs) nodes, so one more copy than that survives the loss of any one AZ.
  const perAz = Math.ceil(a.nodeCount / Math.min(azCount, a.nodeCount));
  if (a.nodeCount >= 2 && replication < perAz + 1)
    throw new ConfigurationError(
      'replicationFactor',
      `${a.nodeCount} nodes over ${azCount} AZs put up to ${perAz} nodes in one AZ; replication-factor ${replication} ` +
        `could keep every copy of a partition in that AZ (Community Edition has no rack awareness): use at least ` +
        `${perAz + 1}, or more AZs`,
    );
  bool('acceptTwoNodeLoss', a.acceptTwoNodeLoss);
  // Community Edition flushes a write buffer to the device every flush-max-ms (1 s) and cannot wait for it
  // (commit-to-device is Enterprise-only): two nodes killed within that second lose the acknowledged writes of the
  // partitions whose every copy they held. A third copy, or strong consistency, keeps them (the two-kill nemesis).
  if (a.nodeCount >= 3 && replication < 3 && !a.strongConsistency && !a.acceptTwoNodeLoss)
    throw new ConfigurationError(
      'replicationFactor',
      `replication-factor ${replication} on ${a.nodeCount} Community Edition nodes loses acknowledged writes when two ` +
        'nodes die within the same second (no commit-to-device): use 3, or strongConsistency on Enterprise, or ' +
        'accept the loss with acceptTwoNodeLoss=true',
    );
  const storeBytes = INSTANCE_STORE_BYTES[a.instanceType];
  if (storeBytes !== undefined && storeBytes > CE_MAX_DATA_BYTES_PER_NODE)
    throw new ConfigurationError(
      'instanceType',
      `${a.instanceType} has ${storeBytes / 1e9} GB of instance store; Community Edition serves at most 640 GB of ` +
        'data per node (5 TB per cluster): choose a smaller type or more nodes',
    );
  if (a.amiIds !== undefined) {
    if (a.amiIds['*'] !== undefined) {
      if (!c.region)
        throw new ConfigurationError('aerospikeAmi', 'a bare ami-id needs an explicit region (or give region:ami-id)');
      a.amiIds = { [c.region]: a.amiIds['*'] };
    }
    for (const [region, ami] of Object.entries(a.amiIds))
      if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(region) || !/^ami-[0-9a-f]{8,17}$/.test(ami))
        throw new ConfigurationError('aerospikeAmi', `expected region:ami-id, got "${region}:${ami}"`);
    if (c.region && a.amiIds[c.region] === undefined)
      throw new ConfigurationError('aerospikeAmi', `no AMI pinned for the stack's region ${c.region}`);
  }
  for (const [key, sha] of [
    ['aerospikePackageSha256', a.packageSha256],
    ['exporterPackageSha256', a.exporterPackageSha256],
  ] as const)
    if (sha !== undefined && !/^[0-9a-f]{64}$/.test(sha))
      throw new ConfigurationError(key, 'expected the 64 hex digits of a SHA-256');
  packageUrl('exporterPackageUrl', a.exporterPackageUrl, '.rpm', c.natGateways);
  int('protoFdMax', a.protoFdMax, 1000, 2 ** 31 - 1);
  // AEROSPIKE_MAX_CONNS_PER_NODE's range: the client runs at least MIN_COMMANDS_IN_PROCESS commands at once
  int('clientMaxConnsPerNode', a.clientMaxConnsPerNode, MIN_COMMANDS_IN_PROCESS, 10000);
  int('deviceUsedAlarmPercent', a.deviceUsedAlarmPercent, 1, 99);
  int('backupIntervalHours', a.backupIntervalHours, 1, 168);
  int('backupRetentionDays', a.backupRetentionDays, 1, 3650);
  int('backupKeepNewest', a.backupKeepNewest, 1, 100);
  int('backupObjectLockDays', a.backupObjectLockDays, 0, a.backupRetentionDays);
  bool('aerospikeStrongConsistency', a.strongConsistency);
  if (a.spendAckGuard !== undefined && a.spendAckGuard !== 'refuse' && a.spendAckGuard !== 'off')
    throw new ConfigurationError('spendAckGuard', `expected refuse or off, got ${JSON.stringify(a.spendAckGuard)}`);
  int('nsupPeriod', a.nsupPeriodSeconds, 1, 86400);
  int('rootVolumeGb', a.rootVolumeGb, 8, 1024);
  if (!/^[a-z0-9-]+$/.test(a.namespace)) throw new ConfigurationError('aerospikeNamespace', 'expected [a-z0-9-]+');
  const nameProblem = namespaceProblem(a.namespace);
  if (nameProblem) throw new ConfigurationError('aerospikeNamespace', nameProblem);
  const setProblem = setNameProblem(a.set);
  if (setProblem) throw new ConfigurationError('aerospikeSet', setProblem);
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(a.hostedZoneName))
    throw new ConfigurationError('hostedZoneName', 'expected a DNS name');
}

export function effectiveReplication(a: Pick<AerospikeConfig, 'replicationFactor' | 'nodeCount'>): number {
  return Math.min(a.replicationFactor, a.nodeCount);
}

/** The aerospike.conf settings of a deployment (cdk/aerospike-scripts.ts renderAerospikeConf); also the partition harness's. */
export function aerospikeConfSettings(
  a: AerospikeConfig,
  store: Pick<StoreConfig, 'utxoBatchSize' | 'maxTxSizeInStore'>,
  clusterName: string,
  seeds: string[],
): ConfSettings {
  return {
    clusterName,
    seeds,
    namespace: a.namespace,
    replicationFactor: effectiveReplication(a),
    minClusterSize: minClusterSize(a.nodeCount),
    protoFdMax: a.protoFdMax,
    nsupPeriodSeconds: a.nsupPeriodSeconds,
    maxRecordSize: maxRecordSizeBytes(store),
    strongConsistency: a.strongConsistency,
  };
}

/** The functions' SPEND_ACK_GUARD: as configured, else `refuse` on Community Edition and `off` in strong consistency. */
export function spendAckGuard(a: Pick<AerospikeConfig, 'spendAckGuard' | 'strongConsistency'>): 'refuse' | 'off' {
  return a.spendAckGuard ?? (a.strongConsistency ? 'off' : 'refuse');
}

/** `min-cluster-size`: a majority of the nodes, so a minority cut off by a partition cannot form its own cluster. */
export function minClusterSize(nodeCount: number): number {
  return Math.floor(nodeCount / 2) + 1;
}
