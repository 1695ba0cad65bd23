// Builds dist/: one ESM and one CommonJS bundle of src (dependencies left as imports, so the Lambda SDK and the
// credential chain stay lazy), and tsc's declarations beside each; a package.json in each directory tells node and
// TypeScript which module format its files are.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });

for (const [dir, format, type] of [
  ['esm', 'esm', 'module'],
  ['cjs', 'cjs', 'commonjs'],
]) {
  await build({
    entryPoints: [path.join(root, 'src', 'index.ts')],
    outfile: path.join(dist, dir, 'index.js'),
    bundle: true,
    packages: 'external',
    platform: 'node',
    target: 'node20',
    format,
    sourcemap: true,
    logLevel: 'warning',
  });
  writeFileSync(path.join(dist, dir, 'package.json'), `${JSON.stringify({ type }, null, 2)}\n`);
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
for (const dir of ['esm', 'cjs']) cpSync(path.join(dist, 'types'), path.join(dist, dir), { recursive: true });
rmSync(path.join(dist, 'types'), { recursive: true });
mkdirSync(dist, { recursive: true });
console.log('built dist/esm and dist/cjs (JavaScript, source maps, declarations)');
