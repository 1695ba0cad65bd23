/**
 * The deployment's configuration: one typed props object with defaults (docs/settings.md for the store settings).
 *
 * Precedence, lowest first: DEFAULTS -> `stages.<stage>` in cdk.json context (an object with the keys of
 * `UtxoStoreConfig`, nested like it) -> individual context keys (`-c key=value`, see CONTEXT_KEYS). Every value is
 * validated and an invalid one stops synthesis with a message naming the context key.
 */
import { maxRecordSizeBytes as recordSizeFor } from '../lib/domain/record-size';

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
  /** receives before a signal moves to the DLQ */
  signalMaxReceiveCount: number;
  /** minutes between scheduled cleanup passes */
  cleanupScheduleMinutes: number;
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

const API_TUNING: FunctionTuning = { memoryMb: 1024, timeoutSeconds: 29 };

export function defaultConfig(stage = 'dev'): UtxoStoreConfig {
  const prod = stage === 'prod';
  return {
    stage,
    vpcCidr: '10.40.0.0/16',
    maxAzs: 2,
    natGateways: 1,
    aerospike: {
      nodeCount: 3,
      instanceType: 'i4i.large',
      packageUrl:
        'https://download.aerospike.com/artifacts/aerospike-server-community/7.2.0.6/' +
        'aerospike-server-community_7.2.0.6_tools-11.2.2_amzn2023_x86_64.tgz',
      namespace: 'utxo',
      set: 'utxos',
      replicationFactor: 2,
      nsupPeriodSeconds: 120,
      rootVolumeGb: 30,
      terminationProtection: prod,
      hostedZoneName: `aerospike.${stage}.utxo.internal`,
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
    functions: {
      create: { ...API_TUNING },
      get: { ...API_TUNING },
      spend: { ...API_TUNING },
      unspend: { ...API_TUNING },
      setMined: { ...API_TUNING },
      getUtxo: { ...API_TUNING },
      admin: { ...API_TUNING },
      signals: { memoryMb: 1024, timeoutSeconds: 60 },
      cleanup: { memoryMb: 1024, timeoutSeconds: 55 },
    },
    signalBatchSize: 10,
    signalMaxReceiveCount: 5,
    cleanupScheduleMinutes: 1,
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

const OPTIONAL_KEYS = new Set([
  'account',
  'region',
  'availabilityZones',
  'alarmEmail',
  'cleanupSafetyWindow',
  'reservedConcurrency',
  'provisionedConcurrency',
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
  if (path === 'availabilityZones')
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
  int('nodeCount', a.nodeCount, 1, 64);
  const family = a.instanceType.split('.')[0];
  if (!NVME_FAMILIES.includes(family) || !/^[a-z0-9]+\.[a-z0-9]+$/.test(a.instanceType))
    throw new ConfigurationError(
      'instanceType',
      `"${a.instanceType}" is not an x86_64 NVMe instance-store type (families: ${NVME_FAMILIES.join(', ')})`,
    );
  if (!/^(https|s3):\/\/\S+\.tgz$/.test(a.packageUrl))
    throw new ConfigurationError('aerospikePackageUrl', 'expected an https:// or s3:// URL of a .tgz');
  if (c.natGateways === 0 && !a.packageUrl.startsWith('s3://'))
    throw new ConfigurationError(
      'aerospikePackageUrl',
      'with natGateways=0 the nodes have no internet egress: stage the package in S3 and give its s3:// URL',
    );
  int('replicationFactor', a.replicationFactor, 1, 4);
  int('nsupPeriod', a.nsupPeriodSeconds, 1, 86400);
  int('rootVolumeGb', a.rootVolumeGb, 8, 1024);
  if (!/^[a-z0-9-]+$/.test(a.namespace)) throw new ConfigurationError('aerospikeNamespace', 'expected [a-z0-9-]+');
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(a.set)) throw new ConfigurationError('aerospikeSet', 'expected a set name');
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(a.hostedZoneName))
    throw new ConfigurationError('hostedZoneName', 'expected a DNS name');
  const s = c.store;
  int('utxoBatchSize', s.utxoBatchSize, 1, 100000);
  int('blockHeightRetention', s.blockHeightRetention, 0, 0x7fffffff);
  if (s.cleanupSafetyWindow !== undefined) int('cleanupSafetyWindow', s.cleanupSafetyWindow, 0, 0x7fffffff);
  int('maxTxSizeInStore', s.maxTxSizeInStore, 0, 4 * 1024 * 1024);
  int('coinbaseMaturity', s.coinbaseMaturity, 0, 0x7fffffff);
  int('cleanupBatchSize', s.cleanupBatchSize, 1, 100000);
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
  int('signalMaxReceiveCount', c.signalMaxReceiveCount, 1, 1000);
  int('cleanupScheduleMinutes', c.cleanupScheduleMinutes, 1, 1440);
  int('cleanupRetryAttempts', c.cleanupRetryAttempts, 0, 185);
  int('cleanupMaxEventAgeSeconds', c.cleanupMaxEventAgeSeconds, 60, 86400);
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
