/**
 * The deployment's configuration: one typed props object with defaults (docs/settings.md for the store settings).
 *
 * Precedence, lowest first: DEFAULTS -> `stages.<stage>` in cdk.json context (an object with the keys of
 * `UtxoStoreConfig`, nested like it) -> individual context keys (`-c key=value`, see CONTEXT_KEYS). Every value is
 * validated and an invalid one stops synthesis with a message naming the context key.
 */
import { DEFAULTS as RUNTIME_DEFAULTS } from '../lib/domain/config';
import { maxRecordSizeBytes as recordSizeFor } from '../lib/domain/record-size';
import type { ConfSettings } from './aerospike-scripts';
import { namespaceProblem, setNameProblem } from '../lib/domain/engine-limits';

/**
 * Aerospike Community Edition limits (aerospike.com/docs/database/reference/limitations, "Cluster size" and
 * "Amount of data"): at most 8 nodes, and 5 TB of data per cluster (640 GB of unique data per node). Rack awareness
 * is Enterprise-only (aerospike.com/docs/kubernetes/manage/configure/rack-awareness: "Enterprise Edition 4.0 and
 * later"), so replicas are spread over AZs by node placement alone (validateConfig's AZ rule).
 */
export const CE_MAX_NODES = 8;
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

export const FUNCTION_NAMES = [
  'create',
  'get',
  'spend',
  'unspend',
  'setMined',
  'getUtxo',
  'admin',
  'signals',
  'cleanup',
] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

export interface FunctionTuning {
  /** MiB */
  memoryMb: number;
  timeoutSeconds: number;
  /** reserved concurrency (unset: none) */
  reservedConcurrency?: number;
  /** provisioned concurrency on the `live` alias (unset: no alias, no provisioned concurrency) */
  provisionedConcurrency?: number;
}

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
  /** days a backup is kept (noncurrent versions: the same) */
  backupRetentionDays: number;
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
}

export interface StoreConfig {
  utxoBatchSize: number;
  blockHeightRetention: number;
  /** default: blockHeightRetention */
  cleanupSafetyWindow?: number;
  maxTxSizeInStore: number;
  externalizeAll: boolean;
  coinbaseMaturity: number;
  cleanupBatchSize: number;
  /** key prefix of the blobs in the bucket */
  blobPrefix: string;
}

export interface UtxoStoreConfig {
  /** e.g. dev, staging, prod; names the stack (`BsvUtxoStore-<stage>`) */
  stage: string;
  /** explicit account/region; unset -> an environment-agnostic stack (deploys to the CLI's account/region) */
  account?: string;
  region?: string;
  /** explicit AZ names (requires region); unset -> the first `maxAzs` AZs of the region (Fn::GetAZs) */
  availabilityZones?: string[];
  vpcCidr: string;
  /** AZs used (>= 2) */
  maxAzs: number;
  /** NAT gateways for the Aerospike nodes' egress (package download, OS updates); 0 -> nodes in isolated subnets */
  natGateways: number;
  aerospike: AerospikeConfig;
  store: StoreConfig;
  functions: Record<FunctionName, FunctionTuning>;
  /** SQS batch size of the signal consumer */
  signalBatchSize: number;
  /** the SQS event source's maximumConcurrency (2..1000, at most the consumer's reserved concurrency) */
  signalMaxConcurrency: number;
  /** blocks PUT /v1/chain/tip may move the tip forward per call (MAX_TIP_ADVANCE); more needs the admin route */
  maxTipAdvance: number;
  /** Deny every caller but the three API roles in the API's resource policy (aws:PrincipalArn) */
  apiRestrictToRoles: boolean;
  /**
   * IAM principals (role/user ARNs or 12-digit account ids) allowed to invoke the API functions directly with the
   * Lambda Invoke API, by caller role: each gets lambda:InvokeFunction on the functions whose every route its role
   * may call (cdk/direct-invoke.ts). Context: -c validatorInvokers=arn,arn (and blockValidationInvokers,
   * adminInvokers).
   */
  directInvokers: { validator: string[]; blockValidation: string[]; admin: string[] };
  /** receives before a signal moves to the DLQ */
  signalMaxReceiveCount: number;
  /** minutes between scheduled cleanup passes */
  cleanupScheduleMinutes: number;
  /**
   * invocations a scheduled pass is split over, one rule per shard (docs/cleanup.md, "Shards"): 1 to
   * MAX_CLEANUP_SHARDS, at most the functions' cleanup partition ranges (CLEANUP_PARTITION_RANGES, left at its default
   * by the stack) and at most the cleanup function's reserved concurrency
   */
  cleanupShards: number;
  /** EventBridge delivery retries of a cleanup invocation */
  cleanupRetryAttempts: number;
  /** seconds EventBridge keeps retrying a cleanup event */
  cleanupMaxEventAgeSeconds: number;
  apiThrottleRateLimit: number;
  apiThrottleBurstLimit: number;
  /** days of retention of the function, API access and VPC flow log groups */
  logRetentionDays: number;
  /** X-Ray tracing on functions and the API stage (adds the X-Ray interface endpoint) */
  xrayTracing: boolean;
  /** email subscribed to the alarm topic; unset -> alarms without notification (no topic) */
  alarmEmail?: string;
  /** alarm threshold: age of the oldest signal in seconds */
  signalAgeAlarmSeconds: number;
  /** alarm threshold: API 5xx error rate in percent */
  apiErrorRateAlarmPercent: number;
  /** keep the buckets, queues' data and log groups on stack deletion */
  retainData: boolean;
  powertoolsServiceName: string;
  powertoolsMetricsNamespace: string;
}

const API_TUNING = (reservedConcurrency: number): FunctionTuning => ({
  memoryMb: 1024,
  timeoutSeconds: 29,
  reservedConcurrency,
});

export function defaultConfig(stage = 'dev'): UtxoStoreConfig {
  const prod = stage === 'prod';
  return {
    stage,
    vpcCidr: '10.40.0.0/16',
    maxAzs: 3,
    natGateways: 1,
    aerospike: {
      nodeCount: 3,
      instanceType: 'i4i.large',
      // the 8.1.2 line the store is tested on (docs/e2e.md: the conf this app writes starts an 8.1.2 node as written)
      packageUrl:
        'https://download.aerospike.com/artifacts/aerospike-server-community/8.1.2.5/' +
        'aerospike-server-community_8.1.2.5_tools-13.0.3_amzn2023_x86_64.tgz',
      namespace: 'utxo',
      set: 'utxos',
      replicationFactor: 2,
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
      backupRetentionDays: prod ? 35 : 7,
      strongConsistency: false,
    },
    store: {
      utxoBatchSize: 20000,
      blockHeightRetention: 288,
      maxTxSizeInStore: 1048576,
      externalizeAll: false,
      coinbaseMaturity: 100,
      cleanupBatchSize: 1000,
      blobPrefix: 'blobs',
    },
    // Reserved concurrency caps each function's execution environments, each holding up to clientMaxConnsPerNode
    // connections to every node: connectionBudget() checks the sum against proto-fd-max at synth.
    functions: {
      create: API_TUNING(60),
      get: API_TUNING(40),
      spend: API_TUNING(100),
      unspend: API_TUNING(20),
      setMined: API_TUNING(40),
      getUtxo: API_TUNING(40),
      admin: API_TUNING(10),
      signals: { memoryMb: 1024, timeoutSeconds: 60, reservedConcurrency: 10 },
      cleanup: { memoryMb: 1024, timeoutSeconds: 55, reservedConcurrency: 2 },
    },
    signalBatchSize: 10,
    signalMaxConcurrency: 10,
    maxTipAdvance: 10,
    apiRestrictToRoles: true,
    directInvokers: { validator: [], blockValidation: [], admin: [] },
    signalMaxReceiveCount: 5,
    cleanupScheduleMinutes: 1,
    cleanupShards: 1,
    cleanupRetryAttempts: 2,
    cleanupMaxEventAgeSeconds: 300,
    apiThrottleRateLimit: 1000,
    apiThrottleBurstLimit: 2000,
    logRetentionDays: prod ? 90 : 30,
    xrayTracing: false,
    signalAgeAlarmSeconds: 600,
    apiErrorRateAlarmPercent: 1,
    retainData: prod,
    powertoolsServiceName: 'bsv-utxo-store',
    powertoolsMetricsNamespace: 'BsvUtxoStore',
  };
}

/** The flat context keys (`-c key=value`) and where each lands in UtxoStoreConfig. */
export const CONTEXT_KEYS = {
  account: 'account',
  region: 'region',
  availabilityZones: 'availabilityZones',
  vpcCidr: 'vpcCidr',
  maxAzs: 'maxAzs',
  natGateways: 'natGateways',
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
  aerospikeStrongConsistency: 'aerospike.strongConsistency',
  spendAckGuard: 'aerospike.spendAckGuard',
  signalMaxConcurrency: 'signalMaxConcurrency',
  maxTipAdvance: 'maxTipAdvance',
  apiRestrictToRoles: 'apiRestrictToRoles',
  validatorInvokers: 'directInvokers.validator',
  blockValidationInvokers: 'directInvokers.blockValidation',
  adminInvokers: 'directInvokers.admin',
  utxoBatchSize: 'store.utxoBatchSize',
  blockHeightRetention: 'store.blockHeightRetention',
  cleanupSafetyWindow: 'store.cleanupSafetyWindow',
  maxTxSizeInStore: 'store.maxTxSizeInStore',
  externalizeAll: 'store.externalizeAll',
  coinbaseMaturity: 'store.coinbaseMaturity',
  cleanupBatchSize: 'store.cleanupBatchSize',
  blobPrefix: 'store.blobPrefix',
  signalBatchSize: 'signalBatchSize',
  signalMaxReceiveCount: 'signalMaxReceiveCount',
  cleanupScheduleMinutes: 'cleanupScheduleMinutes',
  cleanupShards: 'cleanupShards',
  cleanupRetryAttempts: 'cleanupRetryAttempts',
  cleanupMaxEventAgeSeconds: 'cleanupMaxEventAgeSeconds',
  apiThrottleRateLimit: 'apiThrottleRateLimit',
  apiThrottleBurstLimit: 'apiThrottleBurstLimit',
  logRetentionDays: 'logRetentionDays',
  xrayTracing: 'xrayTracing',
  alarmEmail: 'alarmEmail',
  signalAgeAlarmSeconds: 'signalAgeAlarmSeconds',
  apiErrorRateAlarmPercent: 'apiErrorRateAlarmPercent',
  retainData: 'retainData',
  powertoolsServiceName: 'powertoolsServiceName',
  powertoolsMetricsNamespace: 'powertoolsMetricsNamespace',
} as const;

/** Per-function context keys: `-c reservedConcurrency=cleanup:1,spend:50` and the like. */
export const FUNCTION_CONTEXT_KEYS = {
  memoryMb: 'functionMemoryMb',
  timeoutSeconds: 'functionTimeoutSeconds',
  reservedConcurrency: 'reservedConcurrency',
  provisionedConcurrency: 'provisionedConcurrency',
} as const;

export class ConfigurationError extends Error {
  constructor(key: string, problem: string) {
    super(`cdk context "${key}": ${problem}`);
    this.name = 'ConfigurationError';
  }
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepMerge<T>(base: T, over: unknown, where: string): T {
  if (over === undefined) return base;
  if (!isObject(over)) throw new ConfigurationError(where, 'expected an object');
  const out: Json = { ...(base as Json) };
  for (const [k, v] of Object.entries(over)) {
    if (!(k in out) && !OPTIONAL_KEYS.has(k) && !(FUNCTION_NAMES as readonly string[]).includes(k))
      throw new ConfigurationError(`${where}.${k}`, 'unknown setting');
    out[k] = isObject(v) && isObject(out[k]) ? deepMerge(out[k], v, `${where}.${k}`) : v;
  }
  return out as T;
}

/** An IAM role or user ARN, or an account id: the principals a Lambda resource policy can name. */
const INVOKER_PRINCIPAL = /^(\d{12}|arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+)$/;

const OPTIONAL_KEYS = new Set([
  'account',
  'region',
  'availabilityZones',
  'alarmEmail',
  'cleanupSafetyWindow',
  'reservedConcurrency',
  'provisionedConcurrency',
  'amiIds',
  'packageSha256',
  'exporterPackageSha256',
]);

function setPath(target: Json, path: string, value: unknown): void {
  const parts = path.split('.');
  let obj = target;
  for (const p of parts.slice(0, -1)) obj = obj[p] as Json;
  obj[parts[parts.length - 1]] = value;
}

function getPath(target: Json, path: string): unknown {
  return path.split('.').reduce<unknown>((o, p) => (isObject(o) ? o[p] : undefined), target);
}

/** Converts a CLI string to the type of the default (number, boolean, string list). */
function coerce(key: string, raw: unknown, like: unknown, path: string): unknown {
  if (typeof raw !== 'string') return raw;
  if (path === 'aerospike.amiIds') return amiMap(key, raw);
  if (path === 'availabilityZones' || path.startsWith('directInvokers.'))
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (typeof like === 'number' || INT_PATHS.has(path)) {
    if (!/^-?\d+(\.\d+)?$/.test(raw.trim())) throw new ConfigurationError(key, `expected a number, got "${raw}"`);
    return Number(raw);
  }
  if (typeof like === 'boolean') {
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    throw new ConfigurationError(key, `expected true or false, got "${raw}"`);
  }
  return raw;
}

const INT_PATHS = new Set(['store.cleanupSafetyWindow']);

/** `ami-...` (for the explicit region, resolved in validateConfig) or `region:ami-...,region:ami-...` */
function amiMap(key: string, raw: string): Record<string, string> {
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

/** `cleanup:1,spend:50` or an object {cleanup: 1} -> {cleanup: 1, spend: 50} */
function perFunction(key: string, raw: unknown): Partial<Record<FunctionName, number>> {
  const entries: [string, unknown][] = isObject(raw)
    ? Object.entries(raw)
    : String(raw)
        .split(',')
        .filter((s) => s.trim() !== '')
        .map((pair) => {
          const [name, value] = pair.split(':').map((s) => s.trim());
          return [name, value];
        });
  const out: Partial<Record<FunctionName, number>> = {};
  for (const [name, value] of entries) {
    if (!(FUNCTION_NAMES as readonly string[]).includes(name))
      throw new ConfigurationError(key, `unknown function "${name}" (one of ${FUNCTION_NAMES.join(', ')})`);
    const n = Number(value);
    if (!Number.isInteger(n)) throw new ConfigurationError(key, `expected ${name}:<integer>, got "${String(value)}"`);
    out[name as FunctionName] = n;
  }
  return out;
}

function int(key: string, v: unknown, min: number, max: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new ConfigurationError(key, `expected an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
}

/** A package the nodes download: an https:// or s3:// URL of a `kind` file, s3:// only without internet egress. */
function packageUrl(key: string, url: string, kind: '.tgz' | '.rpm', natGateways: number): void {
  if (!new RegExp(`^(https|s3)://\\S+\\${kind}$`).test(url))
    throw new ConfigurationError(key, `expected an https:// or s3:// URL of ${kind === '.tgz' ? 'a' : 'an'} ${kind}`);
  if (natGateways === 0 && !url.startsWith('s3://'))
    throw new ConfigurationError(
      key,
      'with natGateways=0 the nodes have no internet egress: stage the package in S3 and give its s3:// URL',
    );
}

/** The retention periods CloudWatch Logs accepts. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

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

export function validateConfig(c: UtxoStoreConfig): UtxoStoreConfig {
  if (!/^[a-z][a-z0-9-]{0,20}$/.test(c.stage)) throw new ConfigurationError('stage', 'expected [a-z][a-z0-9-]{0,20}');
  int('maxAzs', c.maxAzs, 2, 6);
  int('natGateways', c.natGateways, 0, c.maxAzs);
  if (c.availabilityZones !== undefined) {
    if (!c.region) throw new ConfigurationError('availabilityZones', 'needs an explicit region');
    if (c.availabilityZones.length < 2) throw new ConfigurationError('availabilityZones', 'needs at least 2 AZs');
  }
  if (!/^\d+\.\d+\.\d+\.\d+\/(1[6-9]|2[0-2])$/.test(c.vpcCidr))
    throw new ConfigurationError('vpcCidr', 'expected an IPv4 CIDR from /16 to /22');
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
  int('clientMaxConnsPerNode', a.clientMaxConnsPerNode, 1, 10000);
  int('deviceUsedAlarmPercent', a.deviceUsedAlarmPercent, 1, 99);
  int('backupIntervalHours', a.backupIntervalHours, 1, 168);
  int('backupRetentionDays', a.backupRetentionDays, 1, 3650);
  if (typeof a.strongConsistency !== 'boolean')
    throw new ConfigurationError('aerospikeStrongConsistency', 'expected a boolean');
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
  const s = c.store;
  int('utxoBatchSize', s.utxoBatchSize, 1, 100000);
  int('blockHeightRetention', s.blockHeightRetention, 0, 0x7fffffff);
  if (s.cleanupSafetyWindow !== undefined) int('cleanupSafetyWindow', s.cleanupSafetyWindow, 0, 0x7fffffff);
  int('maxTxSizeInStore', s.maxTxSizeInStore, 0, 4 * 1024 * 1024);
  int('coinbaseMaturity', s.coinbaseMaturity, 0, 0x7fffffff);
  int('cleanupBatchSize', s.cleanupBatchSize, 1, 100000);
  maxRecordSizeBytes(s); // B and the in-record tx size together: refused here, not half-way through synthesis
  if (typeof s.externalizeAll !== 'boolean') throw new ConfigurationError('externalizeAll', 'expected a boolean');
  if (!/^[A-Za-z0-9_-]+$/.test(s.blobPrefix)) throw new ConfigurationError('blobPrefix', 'expected [A-Za-z0-9_-]+');
  for (const name of FUNCTION_NAMES) {
    const f = c.functions[name];
    int(`functions.${name}.memoryMb`, f.memoryMb, 128, 10240);
    int(`functions.${name}.timeoutSeconds`, f.timeoutSeconds, 1, name === 'signals' || name === 'cleanup' ? 900 : 29);
    if (f.reservedConcurrency !== undefined) int(`reservedConcurrency.${name}`, f.reservedConcurrency, 0, 10000);
    if (f.provisionedConcurrency !== undefined)
      int(`provisionedConcurrency.${name}`, f.provisionedConcurrency, 1, 10000);
  }
  int('signalBatchSize', c.signalBatchSize, 1, 10);
  // SQS event sources: maximumConcurrency from 2 to 1000 (Lambda developer guide, "Configuring maximum concurrency
  // for Amazon SQS event sources")
  int('signalMaxConcurrency', c.signalMaxConcurrency, 2, 1000);
  const signalsReserved = c.functions.signals.reservedConcurrency;
  if (signalsReserved !== undefined && c.signalMaxConcurrency > signalsReserved)
    throw new ConfigurationError(
      'signalMaxConcurrency',
      `${c.signalMaxConcurrency} is above the consumer's reserved concurrency ${signalsReserved} (the excess would only be throttled)`,
    );
  int('maxTipAdvance', c.maxTipAdvance, 1, 0x7fffffff);
  if (typeof c.apiRestrictToRoles !== 'boolean')
    throw new ConfigurationError('apiRestrictToRoles', 'expected a boolean');
  for (const role of ['validator', 'blockValidation', 'admin'] as const) {
    const list = c.directInvokers?.[role];
    const key = `${role}Invokers`;
    if (!Array.isArray(list)) throw new ConfigurationError(key, 'expected a list of IAM principal ARNs');
    for (const p of list)
      if (typeof p !== 'string' || !INVOKER_PRINCIPAL.test(p))
        throw new ConfigurationError(
          key,
          `"${String(p)}" is not an IAM role or user ARN (arn:aws:iam::123456789012:role/name) or a 12-digit account id`,
        );
  }
  connectionBudget(c);
  int('signalMaxReceiveCount', c.signalMaxReceiveCount, 1, 1000);
  int('cleanupScheduleMinutes', c.cleanupScheduleMinutes, 1, 1440);
  cleanupShards(c);
  int('cleanupRetryAttempts', c.cleanupRetryAttempts, 0, 185);
  // also the cleanup function's async-invoke maxEventAge, which Lambda bounds at 6 h (EventBridge's own allows 24 h)
  int('cleanupMaxEventAgeSeconds', c.cleanupMaxEventAgeSeconds, 60, 21600);
  int('apiThrottleRateLimit', c.apiThrottleRateLimit, 1, 100000);
  int('apiThrottleBurstLimit', c.apiThrottleBurstLimit, 1, 100000);
  if (!LOG_RETENTION_DAYS.includes(c.logRetentionDays))
    throw new ConfigurationError('logRetentionDays', `expected one of ${LOG_RETENTION_DAYS.join(', ')}`);
  int('signalAgeAlarmSeconds', c.signalAgeAlarmSeconds, 60, 1209600);
  if (typeof c.apiErrorRateAlarmPercent !== 'number' || c.apiErrorRateAlarmPercent <= 0)
    throw new ConfigurationError('apiErrorRateAlarmPercent', 'expected a positive number');
  if (c.alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+$/.test(c.alarmEmail))
    throw new ConfigurationError('alarmEmail', 'expected an email address');
  return c;
}

/** Most invocations a scheduled cleanup pass is split over. */
export const MAX_CLEANUP_SHARDS = 16;
/**
 * The partition ranges of the deployed cleanup function: the stack leaves CLEANUP_PARTITION_RANGES at its default
 * (scripts/e2e/template-checks.ts LAMBDA_DEFAULTED); a shard is a set of those ranges.
 */
export const DEPLOYED_CLEANUP_PARTITION_RANGES = RUNTIME_DEFAULTS.CLEANUP_PARTITION_RANGES;

/** cleanupShards: within [1, MAX_CLEANUP_SHARDS], the function's partition ranges and its reserved concurrency. */
function cleanupShards(c: UtxoStoreConfig): void {
  int('cleanupShards', c.cleanupShards, 1, MAX_CLEANUP_SHARDS);
  if (c.cleanupShards > DEPLOYED_CLEANUP_PARTITION_RANGES)
    throw new ConfigurationError(
      'cleanupShards',
      `${c.cleanupShards} shards but the cleanup function splits a pass into ${DEPLOYED_CLEANUP_PARTITION_RANGES} ` +
        'partition ranges (CLEANUP_PARTITION_RANGES): a shard is a set of ranges, so at most that many',
    );
  const reserved = c.functions.cleanup.reservedConcurrency;
  if (reserved !== undefined && c.cleanupShards > reserved)
    throw new ConfigurationError(
      'cleanupShards',
      `${c.cleanupShards} shards run at once every tick, above the cleanup function's reserved concurrency ` +
        `${reserved} (the excess would be throttled): raise reservedConcurrency=cleanup:${c.cleanupShards}`,
    );
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

/** Connections kept free on every node for the operators' tools: asbackup/asrestore, asadm, the exporter. */
export const TOOLS_CONNECTIONS = 256;
/** The budget may use at most this share of proto-fd-max; the connections alarm fires at CONNECTIONS_ALARM_SHARE. */
export const BUDGET_SHARE = 0.8;
export const CONNECTIONS_ALARM_SHARE = 0.9;

export interface ConnectionBudget {
  /** per function: reserved concurrency (its execution environments at most) x (conns per node + 1 tend connection) */
  perFunction: Record<FunctionName, number>;
  /** connections one node may see: the sum + TOOLS_CONNECTIONS */
  total: number;
  limit: number;
}

/**
 * The connection budget of one node: every execution environment of every function opens up to
 * AEROSPIKE_MAX_CONNS_PER_NODE command connections plus one tend connection to every node (the client's pool is per
 * node), and reserved concurrency is the most environments a function has (provisioned ones included). The sum plus
 * TOOLS_CONNECTIONS must stay under BUDGET_SHARE x proto-fd-max; a node refuses connections beyond proto-fd-max
 * (aerospike.com/docs/database/reference/config#service__proto-fd-max). Refused at synth otherwise, and every
 * function must have a reserved concurrency (unbounded environments have no budget).
 */
export function connectionBudget(c: UtxoStoreConfig): ConnectionBudget {
  const perEnv = c.aerospike.clientMaxConnsPerNode + 1;
  const perFunction = {} as Record<FunctionName, number>;
  let total = TOOLS_CONNECTIONS;
  for (const name of FUNCTION_NAMES) {
    const reserved = c.functions[name].reservedConcurrency;
    if (reserved === undefined || reserved === 0)
      throw new ConfigurationError(
        `reservedConcurrency.${name}`,
        'every function needs a reserved concurrency (>= 1): it bounds its Aerospike connections',
      );
    const provisioned = c.functions[name].provisionedConcurrency;
    if (provisioned !== undefined && provisioned > reserved)
      throw new ConfigurationError(
        `provisionedConcurrency.${name}`,
        `${provisioned} is above the reserved concurrency ${reserved}`,
      );
    perFunction[name] = reserved * perEnv;
    total += perFunction[name];
  }
  const limit = Math.floor(c.aerospike.protoFdMax * BUDGET_SHARE);
  if (total > limit) {
    const detail = FUNCTION_NAMES.map((n) => `${n} ${c.functions[n].reservedConcurrency}`).join(', ');
    throw new ConfigurationError(
      'reservedConcurrency',
      `the functions may open ${total} connections to one node (reserved concurrency ${detail}; x ` +
        `${perEnv} per environment; + ${TOOLS_CONNECTIONS} for tools), over ${BUDGET_SHARE * 100}% of ` +
        `proto-fd-max ${c.aerospike.protoFdMax} (${limit}): lower reservedConcurrency or clientMaxConnsPerNode, or ` +
        'raise protoFdMax',
    );
  }
  return { perFunction, total, limit };
}

/** Anything with tryGetContext (an App or a construct node). */
export interface ContextSource {
  tryGetContext(key: string): unknown;
}

export function loadConfig(ctx: ContextSource): UtxoStoreConfig {
  const stageRaw = ctx.tryGetContext('stage');
  const stage = stageRaw === undefined ? 'dev' : String(stageRaw);
  let config = defaultConfig(stage);
  const stages = ctx.tryGetContext('stages');
  if (stages !== undefined) {
    if (!isObject(stages)) throw new ConfigurationError('stages', 'expected an object of stage -> settings');
    config = deepMerge(config, stages[stage], `stages.${stage}`);
  }
  const flat = config as unknown as Json;
  for (const [key, path] of Object.entries(CONTEXT_KEYS)) {
    const raw = ctx.tryGetContext(key);
    if (raw === undefined) continue;
    setPath(flat, path, coerce(key, raw, getPath(flat, path), path));
  }
  for (const [field, key] of Object.entries(FUNCTION_CONTEXT_KEYS)) {
    const raw = ctx.tryGetContext(key);
    if (raw === undefined) continue;
    for (const [name, value] of Object.entries(perFunction(key, raw)))
      (config.functions[name as FunctionName] as unknown as Json)[field] = value;
  }
  return validateConfig(config);
}

/**
 * Aerospike `max-record-size` for the namespace (lib/domain/record-size.ts, which the embedded engine uses too);
 * Aerospike 7 allows at most 8 MiB.
 */
export function maxRecordSizeBytes(store: Pick<StoreConfig, 'utxoBatchSize' | 'maxTxSizeInStore'>): number {
  const rounded = recordSizeFor(store.utxoBatchSize, store.maxTxSizeInStore);
  if (rounded > 8 * 1024 * 1024)
    throw new ConfigurationError(
      'utxoBatchSize',
      `records of up to ${rounded} bytes exceed Aerospike's 8 MiB max-record-size; lower utxoBatchSize or maxTxSizeInStore`,
    );
  return rounded;
}
