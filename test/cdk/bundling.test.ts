/**
 * Real local bundling (esbuild, no Docker) of one handler with the app's bundling options: the bundle holds the
 * handler, utxo.lua beside it, and the aerospike package with the Node 22 binding and its runtime dependencies
 * (bindings, file-uri-to-path, minimatch...), so `require('aerospike')` resolves inside the bundle. One function
 * only: the nine bundles of `npm run synth` are the same options over other entries. Also: every handler file of
 * the function table exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { AEROSPIKE_BINDING, FUNCTION_TABLE, nodejsBundling, REPO_ROOT } from '../../cdk/functions';

let bundleDir: string;

beforeAll(() => {
  const app = new App();
  const stack = new Stack(app, 'BundlingProbe');
  new nodejs.NodejsFunction(stack, 'Signals', {
    entry: path.join(REPO_ROOT, FUNCTION_TABLE.signals.entry),
    projectRoot: REPO_ROOT,
    depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.X86_64,
    bundling: nodejsBundling(),
  });
  const assembly = app.synth();
  const assets = readdirSync(assembly.directory).filter((d) => d.startsWith('asset.'));
  expect(assets).toHaveLength(1);
  bundleDir = path.join(assembly.directory, assets[0]);
}, 120000);

function du(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => {
    const p = path.join(dir, name);
    const st = statSync(p);
    return sum + (st.isDirectory() ? du(p) : st.size);
  }, 0);
}

test('every handler of the function table exists', () => {
  for (const spec of Object.values(FUNCTION_TABLE))
    expect([spec.entry, existsSync(path.join(REPO_ROOT, spec.entry))]).toEqual([spec.entry, true]);
});

test('bundle: index.js with the handler, utxo.lua beside it, the aerospike native module as a node module', () => {
  expect(existsSync(path.join(bundleDir, 'index.js'))).toBe(true);
  expect(existsSync(path.join(bundleDir, 'utxo.lua'))).toBe(true);
  const aerospike = path.join(bundleDir, 'node_modules', 'aerospike');
  expect(existsSync(path.join(aerospike, 'lib', 'binding', AEROSPIKE_BINDING, 'aerospike.node'))).toBe(true);
  // only the Lambda runtime's binding
  expect(readdirSync(path.join(aerospike, 'lib', 'binding'))).toEqual([AEROSPIKE_BINDING]);
  // require('aerospike') and its runtime requires resolve from inside the bundle
  const main = require.resolve('aerospike', { paths: [bundleDir] });
  expect(main.startsWith(bundleDir)).toBe(true);
  for (const dep of ['bindings', 'file-uri-to-path', 'minimatch'])
    expect(require.resolve(dep, { paths: [aerospike] }).startsWith(bundleDir)).toBe(true);
  // under Lambda's 250 MB unzipped limit with room to spare
  expect(du(bundleDir)).toBeLessThan(100 * 1024 * 1024);
});

/** DT_NEEDED entries of an ELF64 little-endian shared object (the libraries the dynamic loader must find). */
function neededLibraries(file: string): string[] {
  const elf = readFileSync(file);
  expect(elf.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const section = (i: number) => {
    const at = shoff + i * shentsize;
    return {
      type: elf.readUInt32LE(at + 4),
      offset: Number(elf.readBigUInt64LE(at + 0x18)),
      size: Number(elf.readBigUInt64LE(at + 0x20)),
      link: elf.readUInt32LE(at + 0x28),
    };
  };
  const needed: string[] = [];
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (s.type !== 6) continue; // SHT_DYNAMIC
    const strtab = section(s.link);
    for (let at = s.offset; at < s.offset + s.size; at += 16) {
      const tag = elf.readBigInt64LE(at);
      if (tag === 0n) break;
      if (tag !== 1n) continue; // DT_NEEDED
      const start = strtab.offset + Number(elf.readBigUInt64LE(at + 8));
      needed.push(elf.toString('latin1', start, elf.indexOf(0, start)));
    }
  }
  return needed;
}

/** What the Lambda Node.js 22 runtime (Amazon Linux 2023) itself loads: glibc and the GCC runtime. */
const RUNTIME_LIBRARIES = ['libc.so.6', 'libm.so.6', 'libstdc++.so.6', 'ld-linux-x86-64.so.2', 'libgcc_s.so.1'];

test('every shared library the aerospike binding needs is in the runtime or in the bundle lib/ (on LD_LIBRARY_PATH)', () => {
  const binding = path.join(
    bundleDir,
    'node_modules',
    'aerospike',
    'lib',
    'binding',
    AEROSPIKE_BINDING,
    'aerospike.node',
  );
  const needed = neededLibraries(binding);
  expect(needed).toEqual(expect.arrayContaining(['libc.so.6', 'libyaml-0.so.2']));
  const bundled = existsSync(path.join(bundleDir, 'lib')) ? readdirSync(path.join(bundleDir, 'lib')) : [];
  for (const lib of needed)
    expect([lib, RUNTIME_LIBRARIES.includes(lib) || bundled.includes(lib)]).toEqual([lib, true]);
  // and what the bundled libraries need in turn
  for (const lib of bundled)
    for (const dep of neededLibraries(path.join(bundleDir, 'lib', lib)))
      expect([lib, dep, RUNTIME_LIBRARIES.includes(dep) || bundled.includes(dep)]).toEqual([lib, dep, true]);
});
