/**
 * How the functions are packaged (README, section "Bundling and cold start"):
 * - each function: its handler bundled by a local esbuild (never Docker), minified with a linked source map
 *   (NODE_OPTIONS=--enable-source-maps maps stack traces back to the .ts files), utxo.lua beside it;
 * - one Lambda layer shared by all functions: the `aerospike` native client for the Node 22 runtime with its binding's
 *   debug info stripped (26.6 MB -> 2.0 MB), its run-time dependencies, and the shared libraries the runtime lacks.
 *
 * The binding is checked twice: before stripping, its sha256 must be the one recorded here for the pinned aerospike
 * release (so what is stripped is exactly the binary npm installed from the lockfile); after stripping, every section
 * the dynamic loader maps must be byte-identical to the original's and no debug section may be left (so what ships
 * is that binary minus its debug info). The stripped file's own checksum is not pinned: it depends on the binutils
 * version of the deploying machine, while the loaded-sections digest does not.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { debugSections, loadedSectionsDigest } from './elf';

/** The repository root (cdk/..): entry paths, package-lock.json, lua/ and node_modules/ are resolved from it. */
export const REPO_ROOT = path.resolve(__dirname, '..');

/** The aerospike release whose binding checksums are recorded below (package.json pins ^6.7.1; the lockfile 6.7.1). */
export const AEROSPIKE_VERSION = '6.7.1';

/** The native binding of the `aerospike` package for the Lambda runtime (Node.js 22 = ABI 127, linux x64). */
export const AEROSPIKE_BINDING = 'node-v127-linux-x64';

/**
 * sha256 of each prebuilt binding of aerospike 6.7.1 as npm installs it (lib/binding/<name>/aerospike.node). Only
 * node-v127 is deployed; the others let the bench build the same layer for the local Node to time its load.
 */
export const AEROSPIKE_BINDING_SHA256: Readonly<Record<string, string>> = {
  'node-v115-linux-x64': '5853255ecf815591e87d78e75a67e5cc7e5042c970de2c5df41940fde3e76078',
  'node-v127-linux-x64': '736ec1aae32dad61fd14295fae15970cc9c87d48c46c97bf5bb237f8de62b530',
  'node-v137-linux-x64': '8bb47164df85cd0d61965094fcddfcd48e3560e53aa20d9f7b1bc4ffcd999914',
  'node-v141-linux-x64': '640dac01ddb6558edec6db1437d4a3e30d926a55c0be9797c50479a5ad0ea72c',
};

/**
 * Shared libraries (linux x64, glibc <= 2.34) that the aerospike binding needs and the Lambda Node.js 22 runtime does
 * not ship, vendored in the repository (cdk/native/README.md says where they come from) so bundling needs nothing from
 * the deploying machine. They go to the layer's lib/ (/opt/lib, on Lambda's LD_LIBRARY_PATH).
 */
export const NATIVE_LIBS_DIR = ['cdk', 'native', 'linux-x64'];

/**
 * Packages the `aerospike` client needs at run time (its package.json also lists build tools: node-gyp,
 * node-pre-gyp, nan, husky...). `bindings` locates the .node file, `minimatch` is required by lib/info.js; their
 * own dependencies are added by runtimeModuleClosure.
 */
export const AEROSPIKE_RUNTIME_DEPS = ['bindings', 'minimatch'];

/** Where Lambda's Node.js runtimes look for a layer's modules (NODE_PATH includes /opt/nodejs/node_modules). */
export const LAYER_NODE_MODULES = ['nodejs', 'node_modules'];

/** Set on every function: stack traces of the minified bundle point at the TypeScript sources. */
export const NODE_OPTIONS = '--enable-source-maps';

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

export class BundlingError extends Error {
  readonly code = 'BUNDLING_FAILED';
  constructor(message: string) {
    super(`bundling: ${message}`);
    this.name = 'BundlingError';
  }
}

/** Throws unless `file` is the recorded `binding` of aerospike AEROSPIKE_VERSION, byte for byte. */
export function verifyBinding(file: string, binding: string, content: Buffer = readFileSync(file)): void {
  const expected = AEROSPIKE_BINDING_SHA256[binding];
  if (expected === undefined)
    throw new BundlingError(`no checksum is recorded for the aerospike binding ${binding} (AEROSPIKE_BINDING_SHA256)`);
  const actual = createHash('sha256').update(content).digest('hex');
  if (actual !== expected)
    throw new BundlingError(
      `${file} has sha256 ${actual}, expected ${expected} (aerospike ${AEROSPIKE_VERSION} ${binding}); ` +
        'reinstall with npm ci, or for a new aerospike release record its checksums in cdk/bundling.ts',
    );
}

/**
 * `strip --strip-debug -o dst src` (GNU binutils, or llvm-strip through STRIP), then checks that dst is src minus
 * debug info: the same loaded sections, no .debug_* section. The source is never modified (npm hard-links it).
 */
export function stripDebugInfo(src: string, dst: string, strip = process.env.STRIP || 'strip'): void {
  const run = spawnSync(strip, ['--strip-debug', '-o', dst, src], { encoding: 'utf8' });
  if (run.error && (run.error as NodeJS.ErrnoException).code === 'ENOENT')
    throw new BundlingError(
      `\`${strip}\` was not found: stripping the aerospike binding's debug info needs GNU binutils' strip ` +
        '(apt-get install binutils, dnf install binutils, brew install binutils) or llvm-strip; set STRIP to its path',
    );
  if (run.error || run.status !== 0)
    throw new BundlingError(`\`${strip} --strip-debug\` failed on ${src}: ${run.error?.message ?? run.stderr.trim()}`);
  const before = readFileSync(src);
  const after = readFileSync(dst);
  const left = debugSections(after);
  if (left.length > 0) throw new BundlingError(`${dst} still has debug sections after ${strip}: ${left.join(', ')}`);
  if (loadedSectionsDigest(after) !== loadedSectionsDigest(before))
    throw new BundlingError(`${strip} changed the loaded sections of ${src}, not only its debug info`);
}

export interface NativeLayerOptions {
  /** repository root holding node_modules/aerospike and cdk/native */
  root?: string;
  /** which prebuilt binding to ship; the Lambda runtime's by default */
  binding?: string;
  strip?: string;
}

/**
 * Writes the native-client layer into outputDir: nodejs/node_modules/aerospike (package.json, LICENSE, lib/ without
 * type declarations and other Node versions' bindings, the verified and stripped binding), its run-time dependencies
 * as plain node_modules copied from the local install (no npm install: works offline), and lib/*.so.* (vendored).
 */
export function buildNativeLayer(outputDir: string, options: NativeLayerOptions = {}): void {
  const root = options.root ?? REPO_ROOT;
  const binding = options.binding ?? AEROSPIKE_BINDING;
  const localModules = path.join(root, 'node_modules');
  const aerospike = path.join(localModules, 'aerospike');
  const version = (JSON.parse(readFileSync(path.join(aerospike, 'package.json'), 'utf8')) as { version: string })
    .version;
  if (version !== AEROSPIKE_VERSION)
    throw new BundlingError(
      `node_modules has aerospike ${version}, but checksums are recorded for ${AEROSPIKE_VERSION} (cdk/bundling.ts)`,
    );
  const source = path.join(aerospike, 'lib', 'binding', binding, 'aerospike.node');
  if (!existsSync(source)) throw new BundlingError(`the aerospike ${binding} binding is missing (npm ci installs it)`);
  verifyBinding(source, binding);

  const modules = path.join(outputDir, ...LAYER_NODE_MODULES);
  const outAerospike = path.join(modules, 'aerospike');
  mkdirSync(path.join(outAerospike, 'lib', 'binding', binding), { recursive: true });
  for (const f of ['package.json', 'LICENSE']) cpSync(path.join(aerospike, f), path.join(outAerospike, f));
  cpSync(path.join(aerospike, 'lib'), path.join(outAerospike, 'lib'), {
    recursive: true,
    filter: (src) => !src.endsWith('.d.ts') && !src.startsWith(path.join(aerospike, 'lib', 'binding')),
  });
  stripDebugInfo(source, path.join(outAerospike, 'lib', 'binding', binding, 'aerospike.node'), options.strip);

  for (const dir of runtimeModuleClosure(root, AEROSPIKE_RUNTIME_DEPS)) {
    const rel = path.relative(localModules, dir);
    if (rel.split(path.sep).includes('node_modules')) continue; // nested: copied with its parent
    cpSync(dir, path.join(modules, rel), { recursive: true });
  }

  const libs = path.join(root, ...NATIVE_LIBS_DIR);
  mkdirSync(path.join(outputDir, 'lib'), { recursive: true });
  for (const f of readdirSync(libs).filter((n) => /\.so(\.|$)/.test(n)))
    cpSync(path.join(libs, f), path.join(outputDir, 'lib', f));
  writeFileSync(
    path.join(outputDir, 'nodejs', 'BUILD.txt'),
    `aerospike ${AEROSPIKE_VERSION} ${binding}, sha256 ${AEROSPIKE_BINDING_SHA256[binding]} before strip --strip-debug\n`,
  );
}

/**
 * The layer's code asset, built locally at synthesis (never Docker: tryBundle builds or throws). The asset hash is
 * the output's, so any change of what ships (a new release, other libraries, this code) makes a new layer version.
 */
export function nativeLayerCode(): lambda.Code {
  return lambda.Code.fromAsset(path.join(REPO_ROOT, ...NATIVE_LIBS_DIR), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // required by the API; never pulled because local bundling always succeeds or throws
      image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
      local: {
        tryBundle(outputDir: string): boolean {
          buildNativeLayer(outputDir);
          return true;
        },
      },
    },
  });
}

/**
 * Shell commands run after esbuild: the Lua module beside the handler (the store reads `utxo.lua` next to the bundle,
 * see lib/store/udf-module.ts). The native client comes from the layer.
 */
export function afterBundlingCommands(inputDir: string, outputDir: string): string[] {
  const lua = path.join(inputDir, 'lua', 'utxo.lua');
  const sh = (p: string) => `'${p.replace(/'/g, `'\\''`)}'`;
  return [
    `test -f ${sh(lua)} || { echo "bundling: ${lua} is missing (the UDF module)" >&2; exit 1; }`,
    `cp ${sh(lua)} ${sh(path.join(outputDir, 'utxo.lua'))}`,
  ];
}

export interface FunctionBundlingOptions {
  /**
   * AWS SDK clients the function never uses (see unusedSdkClients in cdk/functions.ts), left out of its bundle: their
   * code is about half of what a function compiles at load. lib/runtime.ts opens them only on first use; a use that
   * the function's table entry did not foresee would load the runtime's own copy of the SDK (and meet the IAM
   * policy, which grants no access to that service either).
   */
  leaveOut?: string[];
}

/**
 * esbuild locally (never Docker), CommonJS for Node 22, minified with a linked source map (no sources inlined: the
 * map only has to turn positions into file:line), utxo.lua added after bundling.
 */
export function nodejsBundling(options: FunctionBundlingOptions = {}): nodejs.BundlingOptions {
  return {
    forceDockerBundling: false,
    target: 'node22',
    format: nodejs.OutputFormat.CJS,
    minify: true,
    // error classes and log lines use constructor/function names
    keepNames: true,
    sourceMap: true,
    sourceMapMode: nodejs.SourceMapMode.DEFAULT,
    sourcesContent: false,
    // The AWS SDK clients a function uses are bundled (the version the code was tested with, not the runtime's).
    // External: the native aerospike client (in the layer), the embedded engine's local-only modules, which
    // lib/runtime.ts loads only for UTXO_STORE=embedded:... (never in Lambda), and the SDK clients left out.
    externalModules: ['aerospike', 'better-sqlite3', 'wasmoon', ...(options.leaveOut ?? [])],
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: afterBundlingCommands,
    },
  };
}
