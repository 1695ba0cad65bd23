/**
 * The Lambda functions: one NodejsFunction per handler in functions/ (FUNCTION_TABLE is the one place that names
 * the entry files), bundled by a local esbuild (never Docker) with the native `aerospike` client copied in as a node
 * module, least-privilege IAM per function.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { FUNCTION_NAMES, type FunctionName, type UtxoStoreConfig } from './config';
import type { Storage } from './storage';

/** The repository root (cdk/..): entry paths, package-lock.json, lua/ and node_modules/ are resolved from it. */
export const REPO_ROOT = path.resolve(__dirname, '..');

/** What a function may do with the blobs under `<bucket>/<prefix>/`. */
export type BlobAccess = 'read' | 'write' | 'delete' | 'tag';

export interface FunctionSpec {
  /** handler file, relative to the repository root; it exports `handler` */
  entry: string;
  description: string;
  blobs: BlobAccess[];
  /** sends DAH/spent signals to the signal queue */
  sendsSignals: boolean;
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
  admin: {
    entry: 'functions/admin.ts',
    description: 'admin routes: delete, locked, conflicting, freeze, reassign, preserve, unmined, tip, health, cleanup',
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
    sendsSignals: false,
  },
};

const BLOB_ACTIONS: Record<BlobAccess, string[]> = {
  read: ['s3:GetObject'],
  write: ['s3:PutObject'],
  delete: ['s3:DeleteObject'],
  // removing the tag rewrites the tag set with PutObjectTagging (lib/blob/s3-blob-store.ts), no DeleteObjectTagging
  tag: ['s3:GetObjectTagging', 's3:PutObjectTagging'],
};

/** The native binding of the `aerospike` package for the Lambda runtime (Node.js 22 = ABI 127, linux x64). */
export const AEROSPIKE_BINDING = 'node-v127-linux-x64';

/**
 * Shared libraries (linux x64, glibc <= 2.34) that the aerospike binding needs and the Lambda Node.js 22 runtime does
 * not ship, vendored in the repository (cdk/native/README.md says where they come from) so bundling needs nothing from
 * the deploying machine.
 */
export const NATIVE_LIBS_DIR = ['cdk', 'native', 'linux-x64'];

/**
 * Packages the `aerospike` client needs at run time (its package.json also lists build tools: node-gyp,
 * node-pre-gyp, nan, husky...). `bindings` locates the .node file, `minimatch` is required by lib/info.js; their
 * own dependencies are added by runtimeModuleClosure.
 */
export const AEROSPIKE_RUNTIME_DEPS = ['bindings', 'minimatch'];

function packageDir(from: string, name: string, root: string): string {
  // Node's resolution: the nearest node_modules upwards from the requiring package, then the root's
  for (let dir = from; dir.startsWith(root); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === root) break;
  }
  throw new Error(`bundling: ${name} is not installed (run npm ci in ${root})`);
}

/** The directories of `names` and of their dependencies, transitively (absolute paths, deduplicated). */
export function runtimeModuleClosure(root: string, names: string[]): string[] {
  const seen = new Set<string>();
  const visit = (from: string, name: string): void => {
    const dir = packageDir(from, name, root);
    if (seen.has(dir)) return;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dir, dep);
  };
  for (const n of names) visit(root, n);
  return [...seen].sort();
}

function sh(p: string): string {
  return `'${p.replace(/'/g, `'\\''`)}'`;
}

/**
 * Shell commands run after esbuild: the Lua module beside the handler (the store reads `utxo.lua` next to the bundle,
 * see lib/store/udf-module.ts), and the aerospike package with only the Node 22 binding plus its runtime
 * dependencies as plain node_modules (copied from the local install: no npm install in the bundle, works offline).
 */
export function afterBundlingCommands(inputDir: string, outputDir: string): string[] {
  // The hooks are rendered for local and Docker bundling alike (inputDir is /asset-input for Docker), so the checks
  // are shell commands; the module closure is read from the local install (REPO_ROOT) and mapped onto inputDir.
  const lua = path.join(inputDir, 'lua', 'utxo.lua');
  const aerospike = path.join(inputDir, 'node_modules', 'aerospike');
  const binding = path.join(aerospike, 'lib', 'binding', AEROSPIKE_BINDING);
  const out = path.join(outputDir, 'node_modules');
  const outAerospike = path.join(out, 'aerospike');
  const commands = [
    `test -f ${sh(lua)} || { echo "bundling: ${lua} is missing (the UDF module)" >&2; exit 1; }`,
    `test -f ${sh(path.join(binding, 'aerospike.node'))} || { echo "bundling: the aerospike ${AEROSPIKE_BINDING} binding is missing (npm ci installs it)" >&2; exit 1; }`,
    `cp ${sh(lua)} ${sh(path.join(outputDir, 'utxo.lua'))}`,
    `mkdir -p ${sh(path.join(outAerospike, 'lib', 'binding'))}`,
    `cp ${sh(path.join(aerospike, 'package.json'))} ${sh(path.join(aerospike, 'LICENSE'))} ${sh(outAerospike)}`,
    // lib/ without the other Node versions' bindings (each is ~26 MB), then the Node 22 one
    `for f in ${sh(path.join(aerospike, 'lib'))}/*; do [ "$(basename "$f")" = binding ] || cp -R "$f" ${sh(
      path.join(outAerospike, 'lib'),
    )}/; done`,
    `cp -R ${sh(binding)} ${sh(path.join(outAerospike, 'lib', 'binding'))}/`,
    // shared libraries the binding links that the Lambda runtime lacks (libyaml); /var/task/lib is on Lambda's
    // LD_LIBRARY_PATH after the system directories, so a library the runtime does have is still taken from there
    `mkdir -p ${sh(path.join(outputDir, 'lib'))}`,
    `cp ${sh(path.join(inputDir, ...NATIVE_LIBS_DIR))}/*.so.* ${sh(path.join(outputDir, 'lib'))}/`,
  ];
  const localModules = path.join(REPO_ROOT, 'node_modules');
  for (const dir of runtimeModuleClosure(REPO_ROOT, AEROSPIKE_RUNTIME_DEPS)) {
    const rel = path.relative(localModules, dir);
    if (rel.split(path.sep).includes('node_modules')) continue; // nested: copied with its parent
    commands.push(`mkdir -p ${sh(path.dirname(path.join(out, rel)))}`);
    commands.push(`cp -R ${sh(path.join(inputDir, 'node_modules', rel))} ${sh(path.join(out, rel))}`);
  }
  return commands;
}

/** esbuild locally (never Docker), CommonJS for Node 22, the native client and utxo.lua added after bundling. */
export function nodejsBundling(): nodejs.BundlingOptions {
  return {
    forceDockerBundling: false,
    target: 'node22',
    format: nodejs.OutputFormat.CJS,
    minify: false,
    keepNames: true,
    sourceMap: false,
    // The AWS SDK is bundled (the version the code was tested with, not the runtime's). External: the native
    // aerospike client (copied in by afterBundling) and the embedded engine's local-only modules, which
    // lib/runtime.ts loads only for UTXO_STORE=embedded:... (never in Lambda).
    externalModules: ['aerospike', 'better-sqlite3', 'wasmoon'],
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: afterBundlingCommands,
    },
  };
}

export interface FunctionsProps {
  config: UtxoStoreConfig;
  vpc: ec2.IVpc;
  subnets: ec2.SubnetSelection;
  securityGroup: ec2.ISecurityGroup;
  storage: Storage;
  /** `aerospike://...` (docs/settings.md) */
  utxoStoreUrl: string;
}

export class Functions extends Construct {
  readonly functions = {} as Record<FunctionName, nodejs.NodejsFunction>;
  /** what the API and triggers invoke: the `live` alias when provisioned concurrency is set, else the function */
  readonly targets = {} as Record<FunctionName, lambda.IFunction>;
  readonly logGroups = {} as Record<FunctionName, logs.LogGroup>;

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
      UTXO_UDF_PATH: '/var/task/utxo.lua',
      POWERTOOLS_SERVICE_NAME: config.powertoolsServiceName,
      POWERTOOLS_METRICS_NAMESPACE: config.powertoolsMetricsNamespace,
    };

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
        environment: { ...environment, POWERTOOLS_TRACE_DISABLED: String(!config.xrayTracing) },
        bundling: nodejsBundling(),
      });
      this.grantAccess(fn, spec, storage);
      this.functions[name] = fn;
      this.logGroups[name] = logGroup;
      this.targets[name] =
        tuning.provisionedConcurrency !== undefined
          ? new lambda.Alias(this, `${pascal(name)}Live`, {
              aliasName: 'live',
              version: fn.currentVersion,
              provisionedConcurrentExecutions: tuning.provisionedConcurrency,
            })
          : fn;
    }
  }

  private grantAccess(fn: nodejs.NodejsFunction, spec: FunctionSpec, storage: Storage): void {
    const actions = [...new Set(spec.blobs.flatMap((b) => BLOB_ACTIONS[b]))];
    if (actions.length > 0) {
      fn.addToRolePolicy(
        new iam.PolicyStatement({ sid: 'BlobObjects', actions, resources: [storage.blobObjectsArn()] }),
      );
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
    // the consumer's permissions come with its SQS event source (grantConsumeMessages)
  }
}

export function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
