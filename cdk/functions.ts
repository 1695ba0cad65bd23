/**
 * The Lambda functions: one NodejsFunction per handler in functions/ (FUNCTION_TABLE is the one place that names
 * the entry files), bundled by a local esbuild (never Docker, cdk/bundling.ts) and sharing one layer that holds the
 * native `aerospike` client, least-privilege IAM per function.
 */
import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { nativeLayerCode, NODE_OPTIONS, nodejsBundling, REPO_ROOT } from './bundling';
import { GATEWAY_ALIAS } from '../lib/http/gateway-alias';
import { ROUTES } from './api';
import { FUNCTION_NAMES, spendAckGuard, type FunctionName, type UtxoStoreConfig } from './config';
import type { Storage } from './storage';

export { REPO_ROOT } from './bundling';

/** The functions that serve routes: API Gateway invokes each through its gateway alias. */
const API_FUNCTIONS = new Set<FunctionName>(ROUTES.map((r) => r.fn));

/** What a function may do with the blobs under `<bucket>/<prefix>/` ('probe': only the bucket, for GET /v1/health). */
export type BlobAccess = 'read' | 'write' | 'delete' | 'tag' | 'probe';

export interface FunctionSpec {
  /** handler file, relative to the repository root; it exports `handler` */
  entry: string;
  description: string;
  blobs: BlobAccess[];
  /** sends DAH/spent signals to the signal queue */
  sendsSignals: boolean;
  /** probes the signal queue (sqs:GetQueueAttributes, GET /v1/health) without sending to it */
  probesQueue?: boolean;
  /** the SQS consumer of the signal queue */
  consumesSignals?: boolean;
}

/**
 * Every function, its handler file and its permissions. Permissions follow what each store operation touches
 * (lib/store, lib/signals/reconciler.ts, lib/cleanup): create writes blobs (create-only, so it also reads them) and
 * tags a conflicting tx's blob; get reads tx/outputs blobs; admin deletes txs and runs cleanup on demand; the
 * reconciler only moves the blobs' deleteAtHeight tag; cleanup reads and deletes blobs.
 */
export const FUNCTION_TABLE: Record<FunctionName, FunctionSpec> = {
  create: {
    entry: 'functions/create.ts',
    description: 'POST /v1/txs',
    blobs: ['read', 'write', 'tag'],
    sendsSignals: true,
  },
  get: { entry: 'functions/get.ts', description: 'GET /v1/txs/{txid}', blobs: ['read'], sendsSignals: false },
  spend: { entry: 'functions/spend.ts', description: 'POST /v1/spends', blobs: [], sendsSignals: true },
  unspend: { entry: 'functions/unspend.ts', description: 'POST /v1/unspends', blobs: [], sendsSignals: true },
  setMined: { entry: 'functions/set-mined.ts', description: 'POST /v1/mined', blobs: [], sendsSignals: true },
  getUtxo: {
    entry: 'functions/get-utxo.ts',
    description: 'GET /v1/utxos/{txid}/{vout}',
    blobs: [],
    sendsSignals: false,
  },
  status: {
    entry: 'functions/status.ts',
    description: 'GET /v1/health, GET /v1/chain/tip',
    // the health probes: HeadBucket (s3:ListBucket) and GetQueueAttributes, nothing else
    blobs: ['probe'],
    sendsSignals: false,
    probesQueue: true,
  },
  admin: {
    entry: 'functions/admin.ts',
    description: 'admin routes: delete, locked, conflicting, freeze, reassign, preserve, unmined, set tip, cleanup',
    blobs: ['read', 'delete'],
    sendsSignals: true,
  },
  signals: {
    entry: 'functions/signals.ts',
    description: 'SQS consumer: applies DAH signals (reconciler)',
    blobs: ['read', 'tag'],
    sendsSignals: false,
    consumesSignals: true,
  },
  cleanup: {
    entry: 'functions/cleanup.ts',
    description: 'scheduled DAH cleanup pass',
    blobs: ['read', 'delete'],
    // expirePreserve's DAHSET of an external or paginated tx (lib/cleanup/cleanup-service.ts)
    sendsSignals: true,
  },
};

/** The S3 object actions a function's role is granted on the blobs (plus s3:ListBucket when there is any). */
export function blobObjectActions(spec: FunctionSpec): string[] {
  return [...new Set(spec.blobs.flatMap((b) => BLOB_ACTIONS[b]))];
}

/** The AWS SDK clients of lib/runtime.ts a function never uses: left out of its bundle (cdk/bundling.ts). */
export function unusedSdkClients(spec: FunctionSpec): string[] {
  return [
    ...(spec.blobs.length === 0 ? ['@aws-sdk/client-s3'] : []),
    ...(spec.sendsSignals || spec.probesQueue ? [] : ['@aws-sdk/client-sqs']),
  ];
}

const BLOB_ACTIONS: Record<BlobAccess, string[]> = {
  read: ['s3:GetObject'],
  write: ['s3:PutObject'],
  delete: ['s3:DeleteObject'],
  // removing the tag rewrites the tag set with PutObjectTagging (lib/blob/s3-blob-store.ts), no DeleteObjectTagging
  tag: ['s3:GetObjectTagging', 's3:PutObjectTagging'],
  probe: [],
};

export interface FunctionsProps {
  config: UtxoStoreConfig;
  vpc: ec2.IVpc;
  subnets: ec2.SubnetSelection;
  securityGroup: ec2.ISecurityGroup;
  storage: Storage;
  /** `aerospike://...` (docs/settings.md) */
  utxoStoreUrl: string;
}

/** An API function's gateway alias (lib/http/gateway-alias.ts) and the version it points to. */
export interface GatewayAlias {
  alias: lambda.Alias;
  version: lambda.IVersion;
}

export class Functions extends Construct {
  /** the unqualified functions: what direct invokers invoke */
  readonly functions = {} as Record<FunctionName, nodejs.NodejsFunction>;
  /**
   * each API function's gateway alias (`api`, carrying its provisioned concurrency if any): the only ARN API Gateway
   * invokes, and no IAM principal may (cdk/direct-invoke.ts); the function believes an API Gateway event only
   * under it (lib/http/caller.ts)
   */
  readonly gateway: Partial<Record<FunctionName, GatewayAlias>> = {};
  /**
   * what the triggers invoke (the signal consumer, cleanup): the `live` alias when provisioned concurrency is set,
   * else the function
   */
  readonly targets: Partial<Record<FunctionName, lambda.IFunction>> = {};
  readonly logGroups = {} as Record<FunctionName, logs.LogGroup>;
  /**
   * with the `live` alias: the other ARNs a caller can invoke, the unqualified function and the alias's version (each
   * has a resource policy of its own, cdk/function-policy.ts)
   */
  readonly qualified: Partial<Record<FunctionName, lambda.IFunction[]>> = {};

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    const { config, storage } = props;
    const s = config.store;
    const environment: Record<string, string> = {
      UTXO_STORE: props.utxoStoreUrl,
      BLOB_STORE: `s3://${storage.blobBucket.bucketName}/${storage.blobPrefix}`,
      SIGNAL_QUEUE: storage.signalQueue.queueUrl,
      UTXO_BATCH_SIZE: String(s.utxoBatchSize),
      BLOCK_HEIGHT_RETENTION: String(s.blockHeightRetention),
      CLEANUP_SAFETY_WINDOW: String(s.cleanupSafetyWindow ?? s.blockHeightRetention),
      MAX_TX_SIZE_IN_STORE: String(s.maxTxSizeInStore),
      EXTERNALIZE_ALL: String(s.externalizeAll),
      COINBASE_MATURITY: String(s.coinbaseMaturity),
      CLEANUP_BATCH_SIZE: String(s.cleanupBatchSize),
      MAX_TIP_ADVANCE: String(config.maxTipAdvance),
      // the per-environment pool that cdk/config.ts connectionBudget counts against proto-fd-max
      AEROSPIKE_MAX_CONNS_PER_NODE: String(config.aerospike.clientMaxConnsPerNode),
      // partitions (docs/decisions/0006-partitions-on-community-edition.md)
      SPEND_ACK_GUARD: spendAckGuard(config.aerospike),
      AEROSPIKE_CLUSTER_SIZE: String(config.aerospike.nodeCount),
      AEROSPIKE_STRONG_CONSISTENCY: String(config.aerospike.strongConsistency),
      UTXO_UDF_PATH: '/var/task/utxo.lua',
      NODE_OPTIONS,
      POWERTOOLS_SERVICE_NAME: config.powertoolsServiceName,
      POWERTOOLS_METRICS_NAMESPACE: config.powertoolsMetricsNamespace,
    };

    // one copy of the native client for all functions: uploaded once, stripped once per synthesis
    const nativeClient = new lambda.LayerVersion(this, 'AerospikeClient', {
      code: nativeLayerCode(),
      compatibleRuntimes: [lambda.Runtime.NODEJS_22_X],
      compatibleArchitectures: [lambda.Architecture.X86_64],
      description: 'bsv-utxo-store: aerospike native client (Node 22, linux x64, debug info stripped) and libyaml',
    });

    for (const name of FUNCTION_NAMES) {
      const spec = FUNCTION_TABLE[name];
      const tuning = config.functions[name];
      const logGroup = new logs.LogGroup(this, `${pascal(name)}Logs`, {
        retention: config.logRetentionDays as logs.RetentionDays,
        removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      });
      const fn = new nodejs.NodejsFunction(this, pascal(name), {
        entry: path.join(REPO_ROOT, spec.entry),
        handler: 'handler',
        projectRoot: REPO_ROOT,
        depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
        description: `bsv-utxo-store ${config.stage}: ${spec.description}`,
        runtime: lambda.Runtime.NODEJS_22_X,
        architecture: lambda.Architecture.X86_64,
        memorySize: tuning.memoryMb,
        timeout: Duration.seconds(tuning.timeoutSeconds),
        reservedConcurrentExecutions: tuning.reservedConcurrency,
        vpc: props.vpc,
        vpcSubnets: props.subnets,
        securityGroups: [props.securityGroup],
        allowPublicSubnet: false,
        tracing: config.xrayTracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
        logGroup,
        // no POWERTOOLS_TRACE_DISABLED: no Powertools Tracer is bundled, nothing would read it (scripts/e2e/template-checks.ts)
        environment,
        bundling: nodejsBundling({ leaveOut: unusedSdkClients(spec) }),
        layers: [nativeClient],
        // a replaced version is deleted, not kept: a kept version would keep no resource policy of ours
        currentVersionOptions: { removalPolicy: RemovalPolicy.DESTROY },
      });
      this.grantAccess(fn, spec, storage);
      this.functions[name] = fn;
      this.logGroups[name] = logGroup;
      if (API_FUNCTIONS.has(name)) {
        // one alias: API Gateway's, with the provisioned concurrency (the construct id does not start with the
        // function's own, so that a logical-id prefix names either the function or the alias)
        const alias = new lambda.Alias(this, `GatewayAlias${pascal(name)}`, {
          aliasName: GATEWAY_ALIAS,
          version: fn.currentVersion,
          provisionedConcurrentExecutions: tuning.provisionedConcurrency,
        });
        this.gateway[name] = { alias, version: fn.currentVersion };
        continue;
      }
      this.targets[name] = fn;
      if (tuning.provisionedConcurrency !== undefined) {
        this.targets[name] = new lambda.Alias(this, `${pascal(name)}Live`, {
          aliasName: 'live',
          version: fn.currentVersion,
          provisionedConcurrentExecutions: tuning.provisionedConcurrency,
        });
        this.qualified[name] = [fn, fn.currentVersion];
      }
    }
  }

  private grantAccess(fn: nodejs.NodejsFunction, spec: FunctionSpec, storage: Storage): void {
    const actions = blobObjectActions(spec);
    if (actions.length > 0)
      fn.addToRolePolicy(
        new iam.PolicyStatement({ sid: 'BlobObjects', actions, resources: [storage.blobObjectsArn()] }),
      );
    if (spec.blobs.length > 0) {
      // Without s3:ListBucket a missing blob reads as 403 instead of 404 and the store could not tell "absent" from
      // "forbidden" (BlobStore.get/exists/delete/setDeleteAtHeight return null/false for a missing blob).
      // ListBucket is a bucket-level action; the bucket holds only blobs.
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          sid: 'BlobListForNotFound',
          actions: ['s3:ListBucket'],
          resources: [storage.blobBucket.bucketArn],
        }),
      );
    }
    if (spec.sendsSignals) storage.signalQueue.grantSendMessages(fn);
    else if (spec.probesQueue) storage.signalQueue.grant(fn, 'sqs:GetQueueAttributes');
    // the consumer's permissions come with its SQS event source (grantConsumeMessages)
  }
}

export function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
