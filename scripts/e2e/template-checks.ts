/**
 * Checks of a synthesised template against what the code reads and serves, each returning the problems it finds
 * (an empty list when the template is right), so that tests can run them on a mutated template and see them fail:
 *
 * - environment: every variable a function's template sets is read by something (the configuration parser,
 *   lib/domain/config.ts, the UDF loader, Powertools, Node); every variable the configuration parser reads is set
 *   by the template or listed in LAMBDA_DEFAULTED with why its default is right in Lambda; and the resolved
 *   environment configures the deployed adapters (Aerospike, S3, SQS), not the local defaults.
 * - routes: every route of the handlers' table (lib/http/routes.ts) has its method in the REST API, integrated with
 *   the function whose handler serves it, and no explicit method goes to a function that does not serve it.
 * - modules: every module a bundle requires that it does not contain resolves from the task root or the layer, as
 *   the Node 22 runtime resolves it (NODE_PATH), unless the function table declares it never loaded by that function.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { LAYER_NODE_MODULES, REPO_ROOT } from '../../cdk/bundling';
import { FUNCTION_NAMES, type FunctionName } from '../../cdk/config';
import { FUNCTION_TABLE, pascal, unusedSdkClients } from '../../cdk/functions';
import { loadConfig } from '../../lib/domain/config';
import { callerOf } from '../../lib/http/caller';
import { ROUTES } from '../../lib/http/routes';
import { loadUdfSource } from '../../lib/store/udf-module';
import type { StackArtifact } from './assembly';
import { isDeployTimeFunction, resourcesOfType } from './assembly';
import { resolvedEnvironment } from './functions';
import { restApiModel } from './rest-api';
import type { StandIns } from './stand-ins';

/** The variables `fn` reads from an environment (every key it touches). */
export function variablesReadBy(fn: (env: NodeJS.ProcessEnv) => unknown): string[] {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(_t, key) {
      if (typeof key === 'string') read.add(key);
      return undefined;
    },
  });
  fn(env);
  return [...read].sort();
}

/** Powertools' variables: the names its installed packages read (@aws-lambda-powertools/*). */
export function powertoolsVariables(root = REPO_ROOT): string[] {
  const base = path.join(root, 'node_modules', '@aws-lambda-powertools');
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js'))
        for (const m of readFileSync(p, 'utf8').matchAll(/['"`](POWERTOOLS_[A-Z_]+)['"`]/g)) names.add(m[1]);
    }
  };
  for (const pkg of readdirSync(base)) if (existsSync(path.join(base, pkg, 'lib'))) walk(path.join(base, pkg, 'lib'));
  return [...names].sort();
}

/** Variables of the configuration parser a Lambda function leaves unset on purpose, and why. */
export const LAMBDA_DEFAULTED: Record<string, string> = {
  PORT: 'the local server only',
  CLEANUP_INTERVAL_SECONDS: "the local server's timer; Lambda's cleanup is the EventBridge schedule",
  AWS_SOCKET_TIMEOUT_MS: 'the default (10 s) is below every function timeout that calls S3 or SQS',
  TOMBSTONE_TTL_SECONDS: 'the documented default (30 days, docs/settings.md)',
  AEROSPIKE_MAX_COMMANDS_IN_PROCESS: 'defaults to AEROSPIKE_MAX_CONNS_PER_NODE, which the stack sets',
  AEROSPIKE_MAX_COMMANDS_IN_QUEUE: 'the default queue bound',
  ENGINE_BATCH_SIZE: "the engine's batch size default (100)",
  MAX_BATCH_ITEMS: "the batch routes' default (1000), within Lambda's payload limits",
  MAX_GET_OUTPUTS: "the default (50,000 outputs per get) bounds a get's memory well inside the get function's",
  MAX_GET_TX_BYTES: "the default (3 MiB of txs per get): their hex fills Lambda's 6 MiB answer",
  AEROSPIKE_COMMAND_TIMEOUT_MS:
    "the default single-record budget (1 s, KEY_BUSY retries included) fits every function's timeout",
  AEROSPIKE_BATCH_TIMEOUT_MS: "the default batch budget (5 s) fits every function's timeout and API Gateway's 29 s",
  CLEANUP_PARTITION_RANGES:
    'the default 8 ranges paged in parallel within one cleanup pass (docs/settings.md); cdk/config.ts bounds cleanupShards by it',
};

/** Read by Node itself. */
const NODE_VARIABLES = ['NODE_OPTIONS'];

export interface EnvironmentReadSet {
  /** read by the configuration parser */
  config: string[];
  /** read by the UDF loader */
  udf: string[];
  powertools: string[];
  /** read by the API functions' caller check (lib/http/caller.ts), besides Lambda's own AWS_LAMBDA_FUNCTION_NAME */
  caller: string[];
}

export function environmentReadSet(): EnvironmentReadSet {
  return {
    config: variablesReadBy((env) => loadConfig(env)),
    udf: variablesReadBy((env) => {
      try {
        loadUdfSource(env);
      } catch {
        // only the names read matter here
      }
    }),
    powertools: powertoolsVariables(),
    caller: variablesReadBy((env) =>
      callerOf({
        event: { requestContext: { identity: { userArn: null } } } as never,
        direct: false,
        routeRole: 'validator',
        directRole: 'validator',
        env,
      }),
    ).filter((k) => k !== 'AWS_LAMBDA_FUNCTION_NAME'),
  };
}

/**
 * The FUNCTION_TABLE name of a function resource: from its construct path (…/Functions/<Name>/Resource) when the
 * template carries path metadata (the CLI's synth), else from its logical id (Functions<Name><8-hex hash>).
 */
export function functionNameOf(stack: StackArtifact, logicalId: string): FunctionName | undefined {
  const cdkPath = (stack.template.Resources[logicalId]?.Metadata as Record<string, string> | undefined)?.[
    'aws:cdk:path'
  ];
  const m =
    /\/Functions\/([^/]+)\/Resource$/.exec(cdkPath ?? '') ?? /^Functions([A-Za-z]+)[0-9A-F]{8}$/.exec(logicalId);
  return FUNCTION_NAMES.find((n) => pascal(n) === m?.[1]);
}

export function checkEnvironment(
  stacks: StackArtifact[],
  standIns: StandIns,
  reads: EnvironmentReadSet = environmentReadSet(),
): string[] {
  const problems: string[] = [];
  const known = new Set([...reads.config, ...reads.udf, ...reads.powertools, ...reads.caller, ...NODE_VARIABLES]);
  for (const { stack, id } of resourcesOfType({ stacks }, 'AWS::Lambda::Function')) {
    if (isDeployTimeFunction(stack, id)) continue;
    const who = functionNameOf(stack, id) ?? id;
    let env: Record<string, string>;
    try {
      env = resolvedEnvironment(stack, id, standIns);
    } catch (err) {
      problems.push(`${who}: ${(err as Error).message}`);
      continue;
    }
    for (const k of Object.keys(env))
      if (!known.has(k)) problems.push(`${who}: sets ${k}, which nothing in the function reads`);
    for (const k of reads.config)
      if (!(k in env) && !(k in LAMBDA_DEFAULTED))
        problems.push(
          `${who}: lacks ${k}, which the configuration parser reads (set it, or say why in LAMBDA_DEFAULTED)`,
        );
    for (const k of reads.udf) if (!(k in env)) problems.push(`${who}: lacks ${k}, which the UDF loader reads`);
    try {
      const config = loadConfig(env);
      if (config.utxoStore.kind !== 'aerospike') problems.push(`${who}: UTXO_STORE is not an Aerospike cluster`);
      if (config.blobStore.kind !== 's3') problems.push(`${who}: BLOB_STORE is not an S3 bucket`);
      if (config.signalQueue.kind !== 'sqs') problems.push(`${who}: SIGNAL_QUEUE is not an SQS queue`);
    } catch (err) {
      problems.push(`${who}: its environment does not parse: ${(err as Error).message}`);
    }
    if (env.UTXO_UDF_PATH !== undefined && !env.UTXO_UDF_PATH.startsWith('/var/task/'))
      problems.push(`${who}: UTXO_UDF_PATH ${env.UTXO_UDF_PATH} is not in the task root (/var/task)`);
  }
  return problems;
}

/** The routes fn of lib/http/routes.ts a function's handler serves: its entry file's name (functions/<fn>.ts). */
function servedRoutesFn(name: FunctionName): string {
  return path.basename(FUNCTION_TABLE[name].entry, '.ts');
}

export function checkRoutes(stacks: StackArtifact[], standIns: StandIns): string[] {
  const problems: string[] = [];
  const api = restApiModel({ stacks, dir: '', assetDirs: new Map() }, standIns.resolver);
  const fnOf = (logicalId: string) => functionNameOf(api.stack, logicalId);
  for (const route of ROUTES) {
    const method = api.methods.find((m) => m.httpMethod === route.method && m.resourcePath === route.path);
    if (!method) {
      problems.push(`${route.method} ${route.path}: no method in the REST API`);
      continue;
    }
    const fn = fnOf(method.functionId);
    if (!fn || servedRoutesFn(fn) !== route.fn)
      problems.push(
        `${route.method} ${route.path}: integrated with ${fn ?? method.functionId}, but served by the ${route.fn} handler`,
      );
    for (const p of route.path.matchAll(/\{(\w+)\}/g))
      if (!method.requiredPath.includes(p[1]))
        problems.push(`${route.method} ${route.path}: path parameter ${p[1]} is not declared`);
  }
  for (const m of api.methods) {
    if (m.httpMethod === 'ANY') continue;
    const served = ROUTES.some((r) => r.method === m.httpMethod && r.path === m.resourcePath);
    if (!served) problems.push(`${m.httpMethod} ${m.resourcePath}: a method no handler serves`);
  }
  return problems;
}

/**
 * Modules a bundle requires by name (not a relative path, not a Node builtin), as esbuild's parser sees them (its
 * metafile's imports), so a require quoted in a string (an SDK error message naming a package to install) is not one.
 */
export function requiredModules(bundleFile: string): string[] {
  const result = buildSync({
    entryPoints: [bundleFile],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    packages: 'external',
    logLevel: 'silent',
  });
  const names = new Set<string>();
  for (const input of Object.values(result.metafile.inputs))
    for (const imp of input.imports) {
      const spec = imp.original ?? imp.path;
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      if (!imp.external || spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) continue;
      if (builtinModules.includes(name)) continue;
      names.add(spec);
    }
  return [...names].sort();
}

/**
 * Where `spec` resolves in Lambda: the task root's node_modules (its parents are /var and /: nothing), then the
 * NODE_PATH directories the layer provides (/opt/nodejs/node22/node_modules, /opt/nodejs/node_modules), each
 * searched directly as NODE_PATH is, never their parents (which here would be the repository's node_modules).
 */
export function resolveInLambda(spec: string, taskRoot: string, layerDir: string): string | undefined {
  const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
  const bases = [
    path.join(taskRoot, 'node_modules'),
    path.join(layerDir, 'nodejs', 'node22', 'node_modules'),
    path.join(layerDir, ...LAYER_NODE_MODULES),
  ];
  for (const base of bases) {
    if (!existsSync(path.join(base, pkg))) continue;
    try {
      return createRequire(path.join(base, 'x.js')).resolve(path.join(base, spec));
    } catch {
      // a package directory without the requested entry: not resolvable from here
    }
  }
  return undefined;
}

/** Modules a function's code never loads in Lambda: the embedded engine's, and the SDK clients it leaves out. */
export function neverLoaded(name: FunctionName): string[] {
  return ['better-sqlite3', 'wasmoon', ...unusedSdkClients(FUNCTION_TABLE[name])];
}

export function checkModules(bundles: Partial<Record<FunctionName, string>>, layerDir: string): string[] {
  const problems: string[] = [];
  for (const [name, dir] of Object.entries(bundles) as [FunctionName, string][]) {
    let specs: string[];
    try {
      specs = requiredModules(path.join(dir, 'index.js'));
    } catch (err) {
      // a relative require of a file the asset lacks fails the parse
      problems.push(`${name}: ${(err as Error).message.split('\n').slice(0, 2).join(' ')}`);
      continue;
    }
    for (const spec of specs) {
      if (neverLoaded(name).includes(spec)) continue;
      if (!resolveInLambda(spec, dir, layerDir))
        problems.push(`${name}: its bundle requires ${spec}, which is neither in the bundle nor in the layer`);
    }
  }
  return problems;
}
