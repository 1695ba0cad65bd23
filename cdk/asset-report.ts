/**
 * What `cdk synth` packages, measured: the app synthesised with real bundling (as `npm run synth` does), each
 * function's asset directory and the native-client layer's, and the size of the zip each becomes. Used by
 * test/cdk/bundling.test.ts (size bounds) and bench/sections/cold-start.ts (sizes and load times).
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { App } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { buildApp } from './app';
import { FUNCTION_NAMES, type FunctionName } from './config';
import { pascal } from './functions';

export interface BundledApp {
  outdir: string;
  /** each function's asset directory (index.js, index.js.map, utxo.lua) */
  functions: Record<FunctionName, string>;
  /** the native-client layer's asset directory (nodejs/node_modules, lib) */
  layer: string;
  /** the constructs, for their synthesised properties */
  constructs: { functions: Record<FunctionName, nodejs.NodejsFunction>; layer: lambda.LayerVersion };
}

function assetDir(outdir: string, scope: { node: { tryFindChild(id: string): unknown } }, what: string): string {
  const asset = scope.node.tryFindChild('Code') as s3assets.Asset | undefined;
  if (!asset?.assetPath) throw new Error(`${what} has no code asset`);
  return path.join(outdir, asset.assetPath);
}

/** Synthesises the default app with bundling into a fresh temporary directory (or `outdir`). */
export function synthesizeBundled(context: Record<string, unknown> = {}, outdir?: string): BundledApp {
  const dir = outdir ?? mkdtempSync(path.join(tmpdir(), 'utxo-bundles-'));
  const app = new App({ outdir: dir, context });
  buildApp(app);
  app.synth();
  const all = app.node.findAll();
  const layers = all.filter((c): c is lambda.LayerVersion => c instanceof lambda.LayerVersion);
  if (layers.length !== 1) throw new Error(`expected one layer, found ${layers.length}`);
  const functions = {} as Record<FunctionName, string>;
  const fnConstructs = {} as Record<FunctionName, nodejs.NodejsFunction>;
  for (const name of FUNCTION_NAMES) {
    const fns = all.filter(
      (c): c is nodejs.NodejsFunction => c instanceof nodejs.NodejsFunction && c.node.id === pascal(name),
    );
    if (fns.length !== 1) throw new Error(`expected one function ${pascal(name)}, found ${fns.length}`);
    functions[name] = assetDir(dir, fns[0], name);
    fnConstructs[name] = fns[0];
  }
  return {
    outdir: dir,
    functions,
    layer: assetDir(dir, layers[0], 'the layer'),
    constructs: { functions: fnConstructs, layer: layers[0] },
  };
}

function files(dir: string, prefix = ''): { name: string; path: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    const name = prefix + e.name;
    return e.isDirectory() ? files(p, `${name}/`) : [{ name, path: p }];
  });
}

/** Bytes of the directory's files, unzipped. */
export function dirSize(dir: string): number {
  return files(dir).reduce((sum, f) => sum + statSync(f.path).size, 0);
}

/**
 * Bytes of the zip cdk-assets uploads for `dir` (deflate level 9 per file; local header, data descriptor and central
 * directory entry per file; end record), computed rather than zipped so it needs no zip tool.
 */
export function zipSize(dir: string): number {
  return files(dir).reduce((sum, f) => {
    const name = Buffer.byteLength(f.name);
    return sum + 30 + name + deflateRawSync(readFileSync(f.path), { level: 9 }).length + 16 + 46 + name;
  }, 22);
}
