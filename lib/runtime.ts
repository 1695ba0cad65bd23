/**
 * The runtime of one execution environment (a Lambda container, or the local server): engine, blob store, signal
 * queue, store, reconciler and cleanup service, built once from loadConfig(env) and reused by every invocation.
 *
 * - The promise is cached: concurrent first invocations share one initialisation.
 * - A failed initialisation is not cached: the next invocation tries again (e.g. Aerospike was briefly unreachable).
 * - The Aerospike client is shared per process and never closed by a handler; the embedded engine is closed only by
 *   closeRuntime() (local server shutdown, tests).
 * - Modules with native code or heavy SDKs are required only when needed: aerospike when the configuration names it,
 *   the S3 and SQS clients when a call first needs the blob store or the queue.
 */
import { mkdirSync } from 'fs';
import * as path from 'path';
import { LazyBlobStore } from './blob/lazy-blob-store';
import type { BlobStore } from './blob/port';
import { CleanupService } from './cleanup';
import { ConfigError, loadConfig, type Config } from './domain/config';
import { InvalidArgumentError } from './domain/errors';
import { maxRecordSizeBytes } from './domain/record-size';
import type { RecordEngine } from './engine/port';
import { LazyQueue } from './signals/lazy-queue';
import type { SignalHandler, SignalQueue } from './signals/port';
import { Reconciler } from './signals/reconciler';
import { createUtxoStore } from './store/utxo-store';
import type { SpendRefusal, UtxoStore } from './store/types';

export interface Runtime {
  config: Config;
  engine: RecordEngine;
  blobs: BlobStore;
  queue: SignalQueue;
  store: UtxoStore & { moduleName: string };
  reconciler: Reconciler;
  cleanup: CleanupService;
}

/* eslint-disable @typescript-eslint/no-require-imports */

async function openEngine(config: Config): Promise<RecordEngine> {
  const spec = config.utxoStore;
  if (spec.kind === 'embedded') {
    if (spec.path !== ':memory:') mkdirSync(path.dirname(path.resolve(spec.path)), { recursive: true });
    const { openEmbeddedEngine } = require('./engine/embedded') as typeof import('./engine/embedded');
    // the same limit as the Aerospike namespace (cdk/config.ts): B slots + the tx, not the engine's 1 MiB default
    const maxRecordSize = maxRecordSizeBytes(config.settings.utxoBatchSize, config.settings.maxTxSizeInStore);
    return openEmbeddedEngine({ path: spec.path, maxRecordSize, tombstoneTtlSeconds: config.tombstoneTtlSeconds });
  }
  // loads the aerospike native module: only when configured
  const aerospike = require('./engine/aerospike') as typeof import('./engine/aerospike');
  const tuning = config.aerospike;
  const client = await aerospike.getSharedAerospikeClient({
    hosts: spec.hosts,
    namespace: spec.namespace,
    maxConnsPerNode: tuning.maxConnsPerNode,
    strongConsistency: tuning.strongConsistency,
    timeouts: { commandMs: tuning.commandTimeoutMs, batchMs: tuning.batchTimeoutMs },
    commandQueue: { maxCommandsInProcess: tuning.maxCommandsInProcess, maxCommandsInQueue: tuning.maxCommandsInQueue },
  });
  // a namespace these settings cannot work with is refused at start-up, naming the setting; so is an
  // AEROSPIKE_CLUSTER_SIZE whose majority no cluster of these nodes reaches (every spend would be refused). The two
  // checks are independent info requests: asked together, one round trip of the cold start, the namespace's error first
  const checks = await Promise.allSettled([
    aerospike.checkNamespace(client, spec.namespace, { strongConsistency: tuning.strongConsistency }),
    aerospike.checkClusterSize(client, config.settings.clusterSize ?? 0, spec.hosts),
  ]);
  for (const c of checks) if (c.status === 'rejected') throw c.reason;
  return new aerospike.AerospikeEngine({
    client,
    namespace: spec.namespace,
    set: spec.set,
    tombstoneTtlSeconds: config.tombstoneTtlSeconds,
    seeds: spec.hosts,
  });
}

/**
 * The S3 store and the SQS queue are opened on first use: the functions that never touch a blob or never send a
 * signal never load that AWS SDK client (and their bundles leave it out: cdk/bundling.ts).
 */
function openBlobStore(config: Config): BlobStore {
  const spec = config.blobStore;
  if (spec.kind === 'file') {
    const { FileBlobStore } = require('./blob/file-blob-store') as typeof import('./blob/file-blob-store');
    return new FileBlobStore({ dir: spec.dir });
  }
  return new LazyBlobStore('s3', () => {
    const { S3BlobStore } = require('./blob/s3-blob-store') as typeof import('./blob/s3-blob-store');
    const { S3Client } = require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
    return new S3BlobStore({
      client: new S3Client(awsClientOptions(config)),
      bucket: spec.bucket,
      prefix: spec.prefix,
    });
  });
}

function openQueue(config: Config): SignalQueue {
  const spec = config.signalQueue;
  if (spec.kind === 'inline') {
    const { InlineQueue } = require('./signals/inline-queue') as typeof import('./signals/inline-queue');
    return new InlineQueue();
  }
  return new LazyQueue('sqs', () => {
    const { SqsQueue } = require('./signals/sqs-queue') as typeof import('./signals/sqs-queue');
    const { SQSClient } = require('@aws-sdk/client-sqs') as typeof import('@aws-sdk/client-sqs');
    return new SqsQueue({ client: new SQSClient(awsClientOptions(config)), queueUrl: spec.queueUrl });
  });
}

/** S3 and SQS clients: a stalled connection fails after its timeouts instead of holding the function. */
function awsClientOptions(config: Config) {
  return {
    requestHandler: {
      connectionTimeout: Math.min(3000, config.awsSocketTimeoutMs),
      socketTimeout: config.awsSocketTimeoutMs,
    },
  };
}

/* eslint-enable @typescript-eslint/no-require-imports */

interface InlineQueueLike extends SignalQueue {
  setHandler(handler: SignalHandler): void;
}

function isInline(queue: SignalQueue): queue is InlineQueueLike {
  return typeof (queue as Partial<InlineQueueLike>).setHandler === 'function';
}

/** What an entry point observes of the store it runs (the functions: the SpendsRefused metric). */
export interface RuntimeHooks {
  onSpendRefused?: (refusal: SpendRefusal) => void;
}

let runtimeHooks: RuntimeHooks = {};

/** The hooks of the runtimes built from now on (an entry point sets them once, before its first getRuntime()). */
export function setRuntimeHooks(hooks: RuntimeHooks): void {
  runtimeHooks = hooks;
}

/** Builds a runtime from a configuration (exported for tests and tools; handlers use getRuntime()). */
export async function buildRuntime(config: Config, hooks: RuntimeHooks = runtimeHooks): Promise<Runtime> {
  const engine = await openEngine(config);
  try {
    const blobs = openBlobStore(config);
    const queue = openQueue(config);
    const store = await createUtxoStore({
      engine,
      blobs,
      signals: queue,
      settings: config.settings,
      onSpendRefused: hooks.onSpendRefused,
    }).catch((err: unknown) => {
      // a setting the store refuses when it opens (UTXO_BATCH_SIZE against the one the store was created with) is
      // a configuration error naming it, like any other refused setting: `npm start` says so, a Lambda answers
      // 500 CONFIG_ERROR
      const field = err instanceof InvalidArgumentError ? err.details.field : undefined;
      if (field && /^[A-Z][A-Z0-9_]+$/.test(field)) {
        throw new ConfigError(field, err instanceof Error ? err.message.replace(`${field}: `, '') : String(err));
      }
      throw err;
    });
    const getTip = () => store.getChainTip();
    const reconciler = new Reconciler({
      engine,
      blobs,
      settings: config.settings,
      moduleName: store.moduleName,
      getTip,
    });
    if (isInline(queue)) queue.setHandler(reconciler);
    const cleanup = new CleanupService({
      engine,
      blobs,
      // expirePreserve's DAHSET of an external tx must reach the reconciler (pagination records, blob tag)
      signals: queue,
      moduleName: store.moduleName,
      settings: {
        utxoBatchSize: config.settings.utxoBatchSize,
        blockHeightRetention: config.settings.blockHeightRetention,
        cleanupSafetyWindow: config.cleanupSafetyWindow,
        batchSize: config.cleanupBatchSize,
        partitionRanges: config.cleanupPartitionRanges,
      },
      getTip,
    });
    return { config, engine, blobs, queue, store, reconciler, cleanup };
  } catch (err) {
    await closeEngine(engine);
    throw err;
  }
}

/** The embedded engine is closed; the shared Aerospike client stays open for the life of the process. */
async function closeEngine(engine: RecordEngine): Promise<void> {
  if (engine.kind === 'aerospike') return;
  try {
    await engine.close();
  } catch {
    // closing is best effort
  }
}

let runtimeEnv: NodeJS.ProcessEnv | undefined;
let pending: Promise<Runtime> | undefined;

/** The runtime of this execution environment, built on first use from loadConfig(env) (default process.env). */
export function getRuntime(): Promise<Runtime> {
  if (!pending) {
    const attempt = Promise.resolve().then(() => buildRuntime(loadConfig(runtimeEnv ?? process.env)));
    pending = attempt;
    // not cached forever: a failed attempt is forgotten so that the next invocation retries
    attempt.catch(() => {
      if (pending === attempt) pending = undefined;
    });
  }
  return pending;
}

/**
 * Starts building the runtime while the Lambda execution environment initialises (module load), so the Aerospike
 * client has connected and the UDF module is registered before the first invocation, and provisioned concurrency
 * arrives connected. Only inside Lambda (AWS_LAMBDA_FUNCTION_NAME); a failure is not fatal here: getRuntime()
 * forgets a failed attempt and the first invocation retries (and reports the error).
 */
export function warmRuntime(env: NodeJS.ProcessEnv = process.env): void {
  if (env.AWS_LAMBDA_FUNCTION_NAME === undefined) return;
  getRuntime().catch(() => undefined);
}

/** The runtime if it was built successfully, else undefined (does not start a build). */
export async function currentRuntime(): Promise<Runtime | undefined> {
  if (!pending) return undefined;
  try {
    return await pending;
  } catch {
    return undefined;
  }
}

/**
 * Forgets the cached runtime (tests, local server). `env` is used by the next getRuntime() (default: process.env);
 * `close` (default true) closes the forgotten runtime's embedded engine.
 */
export async function resetRuntime(options: { env?: NodeJS.ProcessEnv; close?: boolean } = {}): Promise<void> {
  const previous = pending;
  pending = undefined;
  runtimeEnv = options.env;
  if (!previous || options.close === false) return;
  let runtime: Runtime;
  try {
    runtime = await previous;
  } catch {
    return;
  }
  await closeEngine(runtime.engine);
}

/** Closes the runtime (embedded engine) and forgets it. */
export function closeRuntime(): Promise<void> {
  return resetRuntime({ env: runtimeEnv, close: true });
}
