/**
 * The functions of an assembly as Lambda would run them: handler, runtime, memory, timeout, the code asset (the task
 * root), the layers' assets (extracted in order into /opt), and the environment: the template's variables with every
 * reference resolved to its local stand-in, plus what the Lambda Node.js 22 runtime itself sets (reserved variables,
 * NODE_PATH, LD_LIBRARY_PATH...). Lambda's fixed paths (/var/task, /opt, /var/runtime) are directories of the local
 * layout: in the runtime's own variables and in the template's values that name a path under them.
 */
import type { Assembly, StackArtifact } from './assembly';
import { AssemblyError, assetDirOf, isDeployTimeFunction, resourcesOfType } from './assembly';
import { resolveValue, UnresolvedReferenceError } from './intrinsics';
import { EMULATOR_CREDENTIALS } from './aws-emulator';
import { functionName, type StandIns } from './stand-ins';

export interface DeployedFunction {
  stack: StackArtifact;
  logicalId: string;
  /** the local function name (what a Ref to it resolves to) */
  name: string;
  handler: string;
  runtime: string;
  memoryMb: number;
  timeoutSeconds: number;
  codeDir: string;
  /** in the template's order: a later layer's files replace an earlier one's */
  layerDirs: string[];
  /** the template's variables, resolved */
  environment: Record<string, string>;
}

/** Lambda's reserved variables: a template may not set them (Lambda refuses the function). */
export const RESERVED_VARIABLES = [
  '_HANDLER',
  '_X_AMZN_TRACE_ID',
  'AWS_DEFAULT_REGION',
  'AWS_REGION',
  'AWS_EXECUTION_ENV',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_INITIALIZATION_TYPE',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  'AWS_LAMBDA_LOG_STREAM_NAME',
  'AWS_ACCESS_KEY',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_LAMBDA_RUNTIME_API',
  'LAMBDA_TASK_ROOT',
  'LAMBDA_RUNTIME_DIR',
];

/** The function's template environment, resolved (also used by the template checks, without assets). */
export function resolvedEnvironment(
  stack: StackArtifact,
  logicalId: string,
  standIns: StandIns,
): Record<string, string> {
  const props = stack.template.Resources[logicalId].Properties ?? {};
  const vars = ((props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<
    string,
    unknown
  >;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars)) {
    if (RESERVED_VARIABLES.includes(k))
      throw new UnresolvedReferenceError(`${stack.name}/${logicalId} ${k}`, 'is reserved by Lambda');
    out[k] = standIns.substituteHosts(resolveValue(standIns.resolver, stack, v, `${stack.name}/${logicalId} ${k}`));
  }
  return out;
}

export function deployedFunctions(assembly: Assembly, standIns: StandIns): DeployedFunction[] {
  const service = resourcesOfType(assembly, 'AWS::Lambda::Function').filter(
    ({ stack, id }) => !isDeployTimeFunction(stack, id),
  );
  return service.map(({ stack, id, resource }) => {
    const p = resource.Properties ?? {};
    const what = `${stack.name}/${id}`;
    const layerDirs = ((p.Layers ?? []) as unknown[]).map((l) => {
      const ref = (l as { Ref?: string }).Ref;
      const layer = ref === undefined ? undefined : stack.template.Resources[ref];
      if (layer?.Type !== 'AWS::Lambda::LayerVersion')
        throw new AssemblyError(`${what}: layer ${JSON.stringify(l)} is not a layer version of its stack`);
      return assetDirOf(assembly, layer.Properties?.Content, `${what} layer ${ref}`);
    });
    return {
      stack,
      logicalId: id,
      name: functionName(stack, id),
      handler: String(p.Handler),
      runtime: String(p.Runtime),
      memoryMb: Number(p.MemorySize ?? 128),
      timeoutSeconds: Number(p.Timeout ?? 3),
      codeDir: assetDirOf(assembly, p.Code, what),
      layerDirs,
      environment: resolvedEnvironment(stack, id, standIns),
    };
  });
}

/** Where the execution environment's fixed directories are locally. */
export interface LocalLayout {
  /** /var/task */
  taskRoot: string;
  /** /opt */
  opt: string;
  /** /var/runtime */
  runtimeDir: string;
  /** /var/lang (the Node binary's installation) */
  lang: string;
}

/** A path under one of Lambda's fixed directories, as the local layout has it. */
export function localPath(p: string, layout: LocalLayout): string {
  const prefixes: [string, string][] = [
    ['/var/task', layout.taskRoot],
    ['/var/runtime', layout.runtimeDir],
    ['/var/lang', layout.lang],
    ['/opt', layout.opt],
  ];
  for (const [from, to] of prefixes) if (p === from || p.startsWith(`${from}/`)) return to + p.slice(from.length);
  return p;
}

export interface InvokeEnvironment {
  layout: LocalLayout;
  /** host:port of the local Runtime API */
  runtimeApi: string;
  region: string;
  /** what the stand-ins need on top (the S3 endpoint); printed by the runner */
  endpoints: Record<string, string>;
}

/**
 * The whole environment of the function's process, nothing inherited: the runtime's variables (Lambda developer
 * guide, "Defined runtime environment variables"; the Node.js runtime's bootstrap sets NODE_PATH), the function's
 * resolved template variables with Lambda paths mapped to the layout, the stand-ins' endpoints, and credentials to
 * sign with (Lambda gives the execution role's; fauxqs checks none).
 */
export function lambdaEnvironment(fn: DeployedFunction, o: InvokeEnvironment): Record<string, string> {
  const { layout } = o;
  const paths = (list: string[]) => list.map((p) => localPath(p, layout)).join(':');
  const template: Record<string, string> = {};
  for (const [k, v] of Object.entries(fn.environment)) template[k] = v.startsWith('/') ? localPath(v, layout) : v;
  return {
    PATH: paths(['/var/lang/bin', '/usr/local/bin', '/usr/bin', '/bin', '/opt/bin']),
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    NODE_PATH: paths([
      '/opt/nodejs/node22/node_modules',
      '/opt/nodejs/node_modules',
      '/var/runtime/node_modules',
      '/var/runtime',
      '/var/task',
    ]),
    LD_LIBRARY_PATH: paths([
      '/var/lang/lib',
      '/lib64',
      '/usr/lib64',
      '/var/runtime',
      '/var/runtime/lib',
      '/var/task',
      '/var/task/lib',
      '/opt/lib',
    ]),
    ...template,
    _HANDLER: fn.handler,
    AWS_REGION: o.region,
    AWS_DEFAULT_REGION: o.region,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `e2e/[$LATEST]${fn.logicalId}`,
    AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: 'e2e-session',
    AWS_LAMBDA_RUNTIME_API: o.runtimeApi,
    LAMBDA_TASK_ROOT: layout.taskRoot,
    LAMBDA_RUNTIME_DIR: layout.runtimeDir,
    ...o.endpoints,
  };
}

/**
 * Node flags in the manner of the runtime's bootstrap: the heap sized from the function's memory (the semi-space a
 * 64th of it, the old space the rest). An approximation of the bootstrap's own arithmetic, which is not published.
 */
export function nodeArguments(memoryMb: number): string[] {
  const newSpace = Math.floor(memoryMb / 64);
  return [
    '--expose-gc',
    '--max-http-header-size=81920',
    `--max-semi-space-size=${Math.max(1, Math.floor(newSpace / 2))}`,
    `--max-old-space-size=${memoryMb - newSpace}`,
  ];
}
