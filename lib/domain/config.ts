/**
 * Configuration from the environment (docs/settings.md). Invalid values stop start-up with a ConfigError that
 * names the variable and says what was wrong.
 */
import {
  CE_MAX_CLUSTER_SIZE,
  MIN_AEROSPIKE_TIMEOUT_MS,
  MIN_COMMANDS_IN_PROCESS,
  namespaceProblem,
  setNameProblem,
} from './engine-limits';
import type { StoreSettings } from './store-settings';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export type UtxoStoreSpec =
  { kind: 'embedded'; path: string } | { kind: 'aerospike'; hosts: string; namespace: string; set: string };

export type BlobStoreSpec = { kind: 'file'; dir: string } | { kind: 's3'; bucket: string; prefix: string };

export type SignalQueueSpec = { kind: 'inline' } | { kind: 'sqs'; queueUrl: string };

export interface Config {
  utxoStore: UtxoStoreSpec;
  blobStore: BlobStoreSpec;
  signalQueue: SignalQueueSpec;
  settings: StoreSettings;
  /** blocks a spending child must be buried before its parent may be deleted (default: retention) */
  cleanupSafetyWindow: number;
  /** candidates per cleanup chunk */
  cleanupBatchSize: number;
  /** partition ranges a cleanup pass queries in parallel */
  cleanupPartitionRanges: number;
  /** local server */
  port: number;
  cleanupIntervalSeconds: number;
  /** S3 and SQS: ms of silence on a connection before the call fails (the SDK default is to wait forever) */
  awsSocketTimeoutMs: number;
  /** seconds a deleted record's tombstone lives (both engines; see lib/engine/port.ts TOMBSTONE_BIN) */
  tombstoneTtlSeconds: number;
  /** the Aerospike client's connection pool and process-wide command queue */
  aerospike: AerospikeClientSettings;
  /** most items one batch request (POST /v1/batch/...) may carry */
  maxBatchItems: number;
}

export interface AerospikeClientSettings {
  maxConnsPerNode: number;
  /** commands running at once (each holds a connection): at most maxConnsPerNode */
  maxCommandsInProcess: number;
  /** commands waiting beyond that; one more is refused (503 STORAGE_ERROR) */
  maxCommandsInQueue: number;
  /** AEROSPIKE_STRONG_CONSISTENCY: the namespace is in strong-consistency mode (Enterprise): linearizable reads */
  strongConsistency: boolean;
  /** time budget of a single-record command / of a batch, ms (also the KEY_BUSY retry budget) */
  commandTimeoutMs: number;
  batchTimeoutMs: number;
}

export const DEFAULTS = {
  UTXO_STORE: 'embedded:./data/utxo.db',
  BLOB_STORE: 'file:./data/blobs',
  SIGNAL_QUEUE: 'inline',
  UTXO_BATCH_SIZE: 20000,
  BLOCK_HEIGHT_RETENTION: 288,
  MAX_TX_SIZE_IN_STORE: 1048576,
  AWS_SOCKET_TIMEOUT_MS: 10000,
  EXTERNALIZE_ALL: false,
  COINBASE_MATURITY: 100,
  CLEANUP_BATCH_SIZE: 1000,
  CLEANUP_PARTITION_RANGES: 8,
  PORT: 8080,
  CLEANUP_INTERVAL_SECONDS: 60,
  TOMBSTONE_TTL_SECONDS: 30 * 24 * 3600,
  AEROSPIKE_MAX_CONNS_PER_NODE: 32,
  AEROSPIKE_MAX_COMMANDS_IN_QUEUE: 4096,
  AEROSPIKE_COMMAND_TIMEOUT_MS: 1000,
  AEROSPIKE_BATCH_TIMEOUT_MS: 5000,
  /** blocks PUT /v1/chain/tip moves the tip forward per call at most (lib/store/meta.ts moveChainTip) */
  MAX_TIP_ADVANCE: 10,
  ENGINE_BATCH_SIZE: 100,
  MAX_BATCH_ITEMS: 1000,
  /** outputs one get with `utxos` may list (a stored output's entry is at least 99 bytes of JSON: 6 MB / 99 > 60,000) */
  MAX_GET_OUTPUTS: 50000,
  /** bytes of txs one get with `tx` may answer: their hex (twice as many characters) fills Lambda's 6 MiB answer */
  MAX_GET_TX_BYTES: 3 * 1024 * 1024,
  /** docs/decisions/0006-partitions-on-community-edition.md */
  SPEND_ACK_GUARD: 'refuse',
  AEROSPIKE_CLUSTER_SIZE: 0,
  AEROSPIKE_STRONG_CONSISTENCY: false,
} as const;

function raw(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  if (v === undefined) return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

/** A decimal integer within [min, max]; absent -> fallback. */
export function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const v = raw(env, name);
  if (v === undefined) return fallback;
  if (!/^-?\d+$/.test(v)) throw new ConfigError(name, `expected an integer, got "${v}"`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got ${v}`);
  return n;
}

export function boolVar(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const v = raw(env, name);
  if (v === undefined) return fallback;
  const lower = v.toLowerCase();
  if (['true', '1', 'yes'].includes(lower)) return true;
  if (['false', '0', 'no'].includes(lower)) return false;
  throw new ConfigError(name, `expected true or false, got "${v}"`);
}

/** `embedded:<path>` (`embedded::memory:` for memory) or `aerospike://h1:3000,h2:3000/<namespace>?set=utxos`. */
export function parseUtxoStore(value: string, name = 'UTXO_STORE'): UtxoStoreSpec {
  if (value.startsWith('embedded:')) {
    const path = value.slice('embedded:'.length);
    if (path === '') throw new ConfigError(name, 'embedded: needs a file path or :memory:');
    return { kind: 'embedded', path };
  }
  const m = /^aerospike:\/\/([^/?]+)\/([A-Za-z0-9_-]+)(?:\?(.*))?$/.exec(value);
  const nsProblem = m ? namespaceProblem(m[2]) : undefined;
  if (nsProblem) throw new ConfigError(name, nsProblem);
  if (m) {
    const hosts = m[1];
    for (const h of hosts.split(',')) {
      if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(h)) throw new ConfigError(name, `invalid host "${h}"`);
    }
    let set = 'utxos';
    if (m[3]) {
      const params = new URLSearchParams(m[3]);
      for (const key of params.keys()) {
        if (key !== 'set') throw new ConfigError(name, `unknown parameter "${key}" (only "set")`);
      }
      const s = params.get('set');
      if (s !== null) {
        const problem = setNameProblem(s);
        if (problem) throw new ConfigError(name, problem);
        set = s;
      }
    }
    return { kind: 'aerospike', hosts, namespace: m[2], set };
  }
  throw new ConfigError(
    name,
    `expected embedded:<path>, embedded::memory: or aerospike://host:3000[,host:3000]/<namespace>[?set=<set>], got "${value}"`,
  );
}

/** `file:<dir>` or `s3://bucket/prefix`. */
export function parseBlobStore(value: string, name = 'BLOB_STORE'): BlobStoreSpec {
  if (value.startsWith('file:')) {
    const dir = value.slice('file:'.length);
    if (dir === '') throw new ConfigError(name, 'file: needs a directory');
    return { kind: 'file', dir };
  }
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value);
  if (m) return { kind: 's3', bucket: m[1], prefix: (m[2] ?? '').replace(/\/+$/, '') };
  throw new ConfigError(name, `expected file:<dir> or s3://<bucket>[/<prefix>], got "${value}"`);
}

/** `inline` or an SQS queue URL. */
export function parseSignalQueue(value: string, name = 'SIGNAL_QUEUE'): SignalQueueSpec {
  if (value === 'inline') return { kind: 'inline' };
  if (/^https:\/\/sqs\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/\d{12}\/[A-Za-z0-9_-]{1,80}(\.fifo)?$/.test(value))
    return { kind: 'sqs', queueUrl: value };
  if (/^https?:\/\/[^/\s]+\/\d{12}\/[A-Za-z0-9_-]{1,80}$/.test(value)) return { kind: 'sqs', queueUrl: value };
  throw new ConfigError(name, `expected "inline" or an SQS queue URL, got "${value}"`);
}

function loadAerospikeClientSettings(env: NodeJS.ProcessEnv): AerospikeClientSettings {
  // the client runs at least MIN_COMMANDS_IN_PROCESS commands at once, each on a connection of its own
  const maxConnsPerNode = intVar(
    env,
    'AEROSPIKE_MAX_CONNS_PER_NODE',
    DEFAULTS.AEROSPIKE_MAX_CONNS_PER_NODE,
    MIN_COMMANDS_IN_PROCESS,
    10000,
  );
  const maxCommandsInProcess = intVar(
    env,
    'AEROSPIKE_MAX_COMMANDS_IN_PROCESS',
    maxConnsPerNode,
    MIN_COMMANDS_IN_PROCESS,
    10000,
  );
  if (maxCommandsInProcess > maxConnsPerNode) {
    throw new ConfigError(
      'AEROSPIKE_MAX_COMMANDS_IN_PROCESS',
      `must not exceed AEROSPIKE_MAX_CONNS_PER_NODE (${maxConnsPerNode}): a command beyond the pool fails instead of waiting`,
    );
  }
  const maxCommandsInQueue = intVar(
    env,
    'AEROSPIKE_MAX_COMMANDS_IN_QUEUE',
    DEFAULTS.AEROSPIKE_MAX_COMMANDS_IN_QUEUE,
    1,
    10_000_000,
  );
  const strongConsistency = boolVar(env, 'AEROSPIKE_STRONG_CONSISTENCY', DEFAULTS.AEROSPIKE_STRONG_CONSISTENCY);
  const commandTimeoutMs = intVar(
    env,
    'AEROSPIKE_COMMAND_TIMEOUT_MS',
    DEFAULTS.AEROSPIKE_COMMAND_TIMEOUT_MS,
    MIN_AEROSPIKE_TIMEOUT_MS,
    600000,
  );
  const batchTimeoutMs = intVar(
    env,
    'AEROSPIKE_BATCH_TIMEOUT_MS',
    DEFAULTS.AEROSPIKE_BATCH_TIMEOUT_MS,
    MIN_AEROSPIKE_TIMEOUT_MS,
    600000,
  );
  return {
    maxConnsPerNode,
    maxCommandsInProcess,
    maxCommandsInQueue,
    strongConsistency,
    commandTimeoutMs,
    batchTimeoutMs,
  };
}

function spendAckGuardVar(env: NodeJS.ProcessEnv): 'refuse' | 'settled' | 'off' {
  const v = raw(env, 'SPEND_ACK_GUARD') ?? DEFAULTS.SPEND_ACK_GUARD;
  if (v !== 'refuse' && v !== 'settled' && v !== 'off')
    throw new ConfigError('SPEND_ACK_GUARD', `expected refuse, settled or off, got "${v}"`);
  return v;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const blockHeightRetention = intVar(env, 'BLOCK_HEIGHT_RETENTION', DEFAULTS.BLOCK_HEIGHT_RETENTION, 0, 0x7fffffff);
  const settings: StoreSettings = {
    utxoBatchSize: intVar(env, 'UTXO_BATCH_SIZE', DEFAULTS.UTXO_BATCH_SIZE, 1, 0x7fffffff),
    blockHeightRetention,
    maxTxSizeInStore: intVar(env, 'MAX_TX_SIZE_IN_STORE', DEFAULTS.MAX_TX_SIZE_IN_STORE, 0, Number.MAX_SAFE_INTEGER),
    externalizeAll: boolVar(env, 'EXTERNALIZE_ALL', DEFAULTS.EXTERNALIZE_ALL),
    coinbaseMaturity: intVar(env, 'COINBASE_MATURITY', DEFAULTS.COINBASE_MATURITY, 0, 0x7fffffff),
    maxTipAdvance: intVar(env, 'MAX_TIP_ADVANCE', DEFAULTS.MAX_TIP_ADVANCE, 1, 0x7fffffff),
    engineBatchSize: intVar(env, 'ENGINE_BATCH_SIZE', DEFAULTS.ENGINE_BATCH_SIZE, 1, 100000),
    maxGetOutputs: intVar(env, 'MAX_GET_OUTPUTS', DEFAULTS.MAX_GET_OUTPUTS, 1, 10000000),
    maxGetTxBytes: intVar(env, 'MAX_GET_TX_BYTES', DEFAULTS.MAX_GET_TX_BYTES, 1, 0x7fffffff),
    spendAckGuard: spendAckGuardVar(env),
    clusterSize: intVar(env, 'AEROSPIKE_CLUSTER_SIZE', DEFAULTS.AEROSPIKE_CLUSTER_SIZE, 0, CE_MAX_CLUSTER_SIZE),
  };
  return {
    utxoStore: parseUtxoStore(raw(env, 'UTXO_STORE') ?? DEFAULTS.UTXO_STORE),
    blobStore: parseBlobStore(raw(env, 'BLOB_STORE') ?? DEFAULTS.BLOB_STORE),
    signalQueue: parseSignalQueue(raw(env, 'SIGNAL_QUEUE') ?? DEFAULTS.SIGNAL_QUEUE),
    settings,
    cleanupSafetyWindow: intVar(env, 'CLEANUP_SAFETY_WINDOW', blockHeightRetention, 0, 0x7fffffff),
    cleanupBatchSize: intVar(env, 'CLEANUP_BATCH_SIZE', DEFAULTS.CLEANUP_BATCH_SIZE, 1, 100000),
    cleanupPartitionRanges: intVar(env, 'CLEANUP_PARTITION_RANGES', DEFAULTS.CLEANUP_PARTITION_RANGES, 1, 4096),
    port: intVar(env, 'PORT', DEFAULTS.PORT, 0, 65535),
    cleanupIntervalSeconds: intVar(env, 'CLEANUP_INTERVAL_SECONDS', DEFAULTS.CLEANUP_INTERVAL_SECONDS, 0, 86400),
    awsSocketTimeoutMs: intVar(env, 'AWS_SOCKET_TIMEOUT_MS', DEFAULTS.AWS_SOCKET_TIMEOUT_MS, 1, 600000),
    tombstoneTtlSeconds: intVar(env, 'TOMBSTONE_TTL_SECONDS', DEFAULTS.TOMBSTONE_TTL_SECONDS, 1, 0x7fffffff),
    aerospike: loadAerospikeClientSettings(env),
    maxBatchItems: intVar(env, 'MAX_BATCH_ITEMS', DEFAULTS.MAX_BATCH_ITEMS, 1, 100000),
  };
}
