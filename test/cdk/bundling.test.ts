/**
 * Real local bundling (esbuild, no Docker) of the whole app, once for the file (cdk/asset-report.ts): every
 * function's asset is its minified handler with a linked source map and utxo.lua, within the size bound; one layer
 * holds the aerospike client with the Node 22 binding, verified against its recorded checksum and stripped of debug
 * info only, plus the shared libraries it needs. The strip/checksum guards are also exercised on their own (a
 * tampered binding, a missing or misbehaving strip).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { dirSize, synthesizeBundled, zipSize, type BundledApp } from '../../cdk/asset-report';
import {
  AEROSPIKE_BINDING,
  AEROSPIKE_BINDING_SHA256,
  buildNativeLayer,
  BundlingError,
  LAYER_NODE_MODULES,
  nodejsBundling,
  REPO_ROOT,
  stripDebugInfo,
  verifyBinding,
} from '../../cdk/bundling';
import { FUNCTION_NAMES } from '../../cdk/config';
import { debugSections, elfSections, loadedSectionsDigest, neededLibraries } from '../../cdk/elf';
import { FUNCTION_TABLE, unusedSdkClients } from '../../cdk/functions';
import { checkModules, requiredModules } from '../../scripts/e2e/template-checks';

/** The goal of issue 11: each zip Lambda downloads on a cold start at most 3 MB. */
const MAX_ZIP_BYTES = 3 * 1024 * 1024;
const ORIGINAL_BINDING = path.join(
  REPO_ROOT,
  'node_modules',
  'aerospike',
  'lib',
  'binding',
  AEROSPIKE_BINDING,
  'aerospike.node',
);

let bundled: BundledApp;
let layerAerospike: string;

beforeAll(() => {
  bundled = synthesizeBundled();
  layerAerospike = path.join(bundled.layer, ...LAYER_NODE_MODULES, 'aerospike');
}, 900000);

const temporary: string[] = [];
afterAll(() => {
  for (const dir of [bundled?.outdir, ...temporary]) if (dir) rmSync(dir, { recursive: true, force: true });
});

function tmp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bundling-test-'));
  temporary.push(dir);
  return dir;
}

test('every handler of the function table exists', () => {
  for (const spec of Object.values(FUNCTION_TABLE))
    expect([spec.entry, existsSync(path.join(REPO_ROOT, spec.entry))]).toEqual([spec.entry, true]);
});

test('the bundling options: minified, names kept, linked source map without sources, native modules external', () => {
  const options = nodejsBundling();
  expect(options).toMatchObject({ minify: true, keepNames: true, sourceMap: true, sourcesContent: false });
  expect(options.forceDockerBundling).toBe(false);
  expect(options.externalModules).toEqual(['aerospike', 'better-sqlite3', 'wasmoon']);
  expect(nodejsBundling({ leaveOut: ['@aws-sdk/client-s3'] }).externalModules).toEqual([
    'aerospike',
    'better-sqlite3',
    'wasmoon',
    '@aws-sdk/client-s3',
  ]);
});

test('each function asset: minified index.js, its source map, utxo.lua; no node_modules; zip <= 3 MB', () => {
  for (const name of FUNCTION_NAMES) {
    const dir = bundled.functions[name];
    expect([name, readdirSync(dir).sort()]).toEqual([name, ['index.js', 'index.js.map', 'utxo.lua']]);
    const js = readFileSync(path.join(dir, 'index.js'), 'utf8');
    // minified: a handful of long lines, not one line per statement (the unminified bundle has ~70,000)
    expect([name, js.split('\n').length < 1000]).toEqual([name, true]);
    expect(js.trimEnd().endsWith('//# sourceMappingURL=index.js.map')).toBe(true);
    const map = JSON.parse(readFileSync(path.join(dir, 'index.js.map'), 'utf8')) as {
      version: number;
      sources: string[];
      sourcesContent?: unknown;
    };
    expect(map.version).toBe(3);
    expect(map.sources.some((s) => s.endsWith(FUNCTION_TABLE[name].entry))).toBe(true);
    expect(map.sourcesContent).toBeUndefined();
    expect([name, zipSize(dir) <= MAX_ZIP_BYTES]).toEqual([name, true]);
  }
});

test('every function runs with source maps enabled and the native-client layer', () => {
  const layer = bundled.constructs.layer;
  const layerId = Stack.of(layer).getLogicalId(layer.node.defaultChild as lambda.CfnLayerVersion);
  for (const name of FUNCTION_NAMES) {
    const fn = bundled.constructs.functions[name];
    const cfn = fn.node.defaultChild as lambda.CfnFunction;
    const stack = Stack.of(fn);
    const env = stack.resolve(cfn.environment) as { variables: Record<string, string> };
    expect([name, env.variables.NODE_OPTIONS]).toEqual([name, '--enable-source-maps']);
    expect([name, stack.resolve(cfn.layers)]).toEqual([name, [{ Ref: layerId }]]);
  }
  const cfnLayer = layer.node.defaultChild as lambda.CfnLayerVersion;
  expect(cfnLayer.compatibleRuntimes).toEqual(['nodejs22.x']);
  expect(cfnLayer.compatibleArchitectures).toEqual(['x86_64']);
});

test('positions in the minified bundle map back to the TypeScript sources (NODE_OPTIONS=--enable-source-maps)', () => {
  // keepNames leaves each function's name as a string right after its minified body: lib/runtime.ts's openBlobStore
  const index = path.join(bundled.functions.spend, 'index.js');
  const probe = `const { findSourceMap } = require('node:module'); const index = ${JSON.stringify(index)}; require(index);
    const js = require('node:fs').readFileSync(index, 'utf8'); const at = js.indexOf('"openBlobStore"');
    const line = js.slice(0, at).split('\\n').length - 1; const col = at - js.lastIndexOf('\\n', at) - 1;
    console.log(findSourceMap(index).findEntry(line, col).originalSource);`;
  const run = spawnSync(process.execPath, ['-e', probe], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '--enable-source-maps' },
  });
  expect(run.stderr).toBe('');
  expect(run.stdout.trim()).toMatch(/\/lib\/runtime\.ts$/);
});

test('each function leaves out the AWS SDK clients it never uses, and every bundle loads with no module reachable', () => {
  // the hot paths of a validator: spend never touches a blob, getUtxo neither touches a blob nor sends a signal
  expect(unusedSdkClients(FUNCTION_TABLE.spend)).toEqual(['@aws-sdk/client-s3']);
  expect(unusedSdkClients(FUNCTION_TABLE.getUtxo)).toEqual(['@aws-sdk/client-s3', '@aws-sdk/client-sqs']);
  expect(unusedSdkClients(FUNCTION_TABLE.create)).toEqual([]);
  for (const name of FUNCTION_NAMES) {
    const index = path.join(bundled.functions[name], 'index.js');
    const js = readFileSync(index, 'utf8');
    const leftOut = unusedSdkClients(FUNCTION_TABLE[name]);
    // a left-out client is an external require; a used one is bundled (no require of the package remains)
    for (const client of ['@aws-sdk/client-s3', '@aws-sdk/client-sqs'])
      expect([name, client, js.includes(`require("${client}")`)]).toEqual([name, client, leftOut.includes(client)]);
    // nothing external (aerospike, a left-out SDK client) is required at load: the bundle loads where none resolves
    const run = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(index)})`], {
      cwd: tmp(),
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    expect([name, run.status, run.stderr]).toEqual([name, 0, '']);
  }
});

test('the layer: the aerospike package with only the Node 22 binding, its run-time dependencies, zip <= 3 MB', () => {
  expect(readdirSync(path.join(layerAerospike, 'lib', 'binding'))).toEqual([AEROSPIKE_BINDING]);
  expect(readdirSync(path.join(layerAerospike, 'lib')).filter((f) => f.endsWith('.d.ts'))).toEqual([]);
  // what Lambda's NODE_PATH (/opt/nodejs/node_modules) finds, and aerospike's own requires from there
  const modules = path.join(bundled.layer, ...LAYER_NODE_MODULES);
  expect(require.resolve('aerospike', { paths: [modules] }).startsWith(layerAerospike)).toBe(true);
  for (const dep of ['bindings', 'file-uri-to-path', 'minimatch'])
    expect(require.resolve(dep, { paths: [layerAerospike] }).startsWith(modules)).toBe(true);
  expect(zipSize(bundled.layer)).toBeLessThanOrEqual(MAX_ZIP_BYTES);
  // function + layer far under Lambda's 250 MB unzipped limit
  expect(dirSize(bundled.layer) + dirSize(bundled.functions.create)).toBeLessThan(20 * 1024 * 1024);
});

test('the shipped binding is the recorded release binary minus its debug info', () => {
  const shipped = readFileSync(path.join(layerAerospike, 'lib', 'binding', AEROSPIKE_BINDING, 'aerospike.node'));
  const original = readFileSync(ORIGINAL_BINDING);
  expect(() => verifyBinding(ORIGINAL_BINDING, AEROSPIKE_BINDING, original)).not.toThrow();
  expect(debugSections(original).length).toBeGreaterThan(0);
  expect(debugSections(shipped)).toEqual([]);
  expect(loadedSectionsDigest(shipped)).toBe(loadedSectionsDigest(original));
  expect(neededLibraries(shipped)).toEqual(neededLibraries(original));
  expect(shipped.length).toBeLessThan(original.length / 10);
  expect(readFileSync(path.join(bundled.layer, 'nodejs', 'BUILD.txt'), 'utf8')).toContain(
    AEROSPIKE_BINDING_SHA256[AEROSPIKE_BINDING],
  );
});

/** What the Lambda Node.js 22 runtime (Amazon Linux 2023) itself loads: glibc and the GCC runtime. */
const RUNTIME_LIBRARIES = ['libc.so.6', 'libm.so.6', 'libstdc++.so.6', 'ld-linux-x86-64.so.2', 'libgcc_s.so.1'];

test('every shared library the aerospike binding needs is in the runtime or in the layer lib/ (on LD_LIBRARY_PATH)', () => {
  const binding = path.join(layerAerospike, 'lib', 'binding', AEROSPIKE_BINDING, 'aerospike.node');
  const needed = neededLibraries(readFileSync(binding));
  expect(needed).toEqual(expect.arrayContaining(['libc.so.6', 'libyaml-0.so.2']));
  const bundledLibs = readdirSync(path.join(bundled.layer, 'lib'));
  for (const lib of needed)
    expect([lib, RUNTIME_LIBRARIES.includes(lib) || bundledLibs.includes(lib)]).toEqual([lib, true]);
  // and what the bundled libraries need in turn
  for (const lib of bundledLibs)
    for (const dep of neededLibraries(readFileSync(path.join(bundled.layer, 'lib', lib))))
      expect([lib, dep, RUNTIME_LIBRARIES.includes(dep) || bundledLibs.includes(dep)]).toEqual([lib, dep, true]);
});

describe('the strip and checksum guards', () => {
  test('a binding whose sha256 is not the recorded one is refused, naming the file and both checksums', () => {
    const dir = tmp();
    const file = path.join(dir, 'aerospike.node');
    const tampered = readFileSync(ORIGINAL_BINDING);
    tampered[tampered.length - 1] ^= 1;
    writeFileSync(file, tampered);
    expect(() => verifyBinding(file, AEROSPIKE_BINDING)).toThrow(BundlingError);
    expect(() => verifyBinding(file, AEROSPIKE_BINDING)).toThrow(
      new RegExp(`${file}.*expected ${AEROSPIKE_BINDING_SHA256[AEROSPIKE_BINDING]}`),
    );
    expect(() => verifyBinding(ORIGINAL_BINDING, 'node-v999-linux-x64')).toThrow(/no checksum is recorded/);
  });

  test('bundling without strip fails with a clear error and writes nothing', () => {
    const out = path.join(tmp(), 'aerospike.node');
    expect(() => stripDebugInfo(ORIGINAL_BINDING, out, '/nonexistent/strip')).toThrow(
      /`\/nonexistent\/strip` was not found: .*binutils/,
    );
    expect(existsSync(out)).toBe(false);
  });

  test('a strip that leaves debug info, or changes loaded code, is caught', () => {
    const dir = tmp();
    const text = elfSections(readFileSync(ORIGINAL_BINDING)).find((s) => s.name === '.text')!;
    // argv: --strip-debug -o <dst> <src>
    const copyOnly = path.join(dir, 'copy-only');
    writeFileSync(copyOnly, '#!/bin/sh\ncp "$4" "$3"\n');
    const patching = path.join(dir, 'patching');
    writeFileSync(
      patching,
      `#!/bin/sh\nstrip --strip-debug -o "$3" "$4" && printf '\\314' | dd of="$3" bs=1 seek=${text.offset + 16} conv=notrunc 2>/dev/null\n`,
    );
    chmodSync(copyOnly, 0o755);
    chmodSync(patching, 0o755);
    expect(() => stripDebugInfo(ORIGINAL_BINDING, path.join(dir, 'a.node'), copyOnly)).toThrow(
      /still has debug sections/,
    );
    expect(() => stripDebugInfo(ORIGINAL_BINDING, path.join(dir, 'b.node'), patching)).toThrow(
      /changed the loaded sections/,
    );
  });

  test('another aerospike release than the recorded one is refused before anything is built', () => {
    const root = tmp();
    mkdirSync(path.join(root, 'node_modules', 'aerospike'), { recursive: true });
    writeFileSync(path.join(root, 'node_modules', 'aerospike', 'package.json'), '{"version":"9.9.9"}');
    const out = path.join(root, 'out');
    expect(() => buildNativeLayer(out, { root })).toThrow(/aerospike 9\.9\.9, but checksums are recorded for 6\.7\.1/);
    expect(existsSync(out)).toBe(false);
  });

  test('a layer built the same way for the local Node loads: the stripped binding with the vendored libraries', () => {
    const local = `node-v${process.versions.modules}-${process.platform}-${process.arch}`;
    // the recorded bindings cover Node 20, 22, 24 and 25 on linux x64 (package.json engines: Node >= 20.19)
    expect(Object.keys(AEROSPIKE_BINDING_SHA256)).toContain(local);
    const out = tmp();
    buildNativeLayer(out, { binding: local });
    const copied = path.join(out, ...LAYER_NODE_MODULES, 'aerospike', 'lib', 'binding');
    expect(readdirSync(copied)).toEqual([local]);
    expect(debugSections(readFileSync(path.join(copied, local, 'aerospike.node')))).toEqual([]);
    // as Lambda runs a layer: nodejs/node_modules on NODE_PATH, lib/ on LD_LIBRARY_PATH
    const run = spawnSync(
      process.execPath,
      [
        '-e',
        "const a = require('aerospike'); console.log(require.resolve('aerospike'), typeof a.connect, typeof a.Client)",
      ],
      {
        cwd: out,
        encoding: 'utf8',
        env: {
          ...process.env,
          NODE_PATH: path.join(out, ...LAYER_NODE_MODULES),
          LD_LIBRARY_PATH: [process.env.LD_LIBRARY_PATH, path.join(out, 'lib')].filter(Boolean).join(':'),
        },
      },
    );
    expect(run.stderr).toBe('');
    const [resolved, ...types] = run.stdout.trim().split(' ');
    expect(resolved.startsWith(out)).toBe(true);
    expect(types).toEqual(['function', 'function']);
  });
});

test('every module a bundle requires is bundled, in the layer, or never loaded by that function (scripts/e2e/template-checks.ts)', () => {
  expect(checkModules(bundled.functions, bundled.layer)).toEqual([]);
  // the check sees the bundles' requires: the layer's aerospike is one of them in every function
  for (const name of FUNCTION_NAMES)
    expect([name, requiredModules(path.join(bundled.functions[name], 'index.js'))]).toEqual([
      name,
      expect.arrayContaining(['aerospike']),
    ]);
});
