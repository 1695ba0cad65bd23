/**
 * Cold start of the Lambda functions: the app is synthesised with real bundling (what `npm run synth` packages),
 * then for each function: the zip cdk-assets uploads (function and the shared native-client layer), and the time a
 * fresh Node process takes to require the bundled handler with NODE_OPTIONS=--enable-source-maps (as Lambda runs it),
 * then to require the aerospike client from the layer (what the first invocation adds when it opens the engine).
 *
 * The deployed layer holds the Node 22 binding; the local Node loads its own ABI's binding, built into a layer the same
 * way (verified checksum, strip --strip-debug). Times are medians of COLD_START_RUNS (default 5) fresh processes,
 * wall clock and CPU; the `node -e 0` row is the machine's own process start-up, to scale the others by. The Node 22
 * rows run the same probe on the Lambda runtime's Node line (e2e/node22.ts, installed once into a cache) with the
 * deployed layer itself (node-v127 binding) on NODE_PATH/LD_LIBRARY_PATH as the Node.js 22 runtime sets them.
 * Standalone: `npx tsx bench/sections/cold-start.ts`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { synthesizeBundled, zipSize } from '../../cdk/asset-report';
import { AEROSPIKE_BINDING_SHA256, buildNativeLayer, LAYER_NODE_MODULES, NODE_OPTIONS } from '../../cdk/bundling';
import { FUNCTION_NAMES, type FunctionName } from '../../cdk/config';
import { findNode22 } from '../../scripts/e2e/node22';
import { registerBench, type BenchRow } from '../registry';

export interface ColdStartRow {
  fn: FunctionName;
  zipBytes: number;
  layerZipBytes: number;
  /** require of the bundled handler: median wall ms, median CPU ms */
  loadMs: number;
  loadCpuMs: number;
  /** then require('aerospike') from the layer (wall ms), null when no binding is recorded for the local Node */
  aerospikeMs: number | null;
  /** the same on the Lambda runtime's Node 22 with the deployed layer as Lambda lays it out; null without Node 22 */
  node22: { loadMs: number; loadCpuMs: number; aerospikeMs: number | null } | null;
}

const PROBE = `
const t0 = process.hrtime.bigint(); const c0 = process.cpuUsage();
require(process.env.PROBE_HANDLER);
const t1 = process.hrtime.bigint(); const c1 = process.cpuUsage(c0);
let aerospikeMs = null;
if (process.env.PROBE_AEROSPIKE) { require('aerospike'); aerospikeMs = Number(process.hrtime.bigint() - t1) / 1e6; }
console.log(JSON.stringify({ loadMs: Number(t1 - t0) / 1e6, loadCpuMs: (c1.user + c1.system) / 1000, aerospikeMs }));
`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * The environment of a bundled handler run as the Node.js 22 runtime runs it: the layer where Lambda extracts it
 * (/opt), the paths of the runtime's bootstrap (e2e/functions.ts), and nothing else of this machine's environment.
 */
export function lambdaLayoutEnv(handler: string, layer: string): NodeJS.ProcessEnv {
  const task = path.dirname(handler);
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    NODE_OPTIONS,
    NODE_PATH: [
      path.join(layer, 'nodejs', 'node22', 'node_modules'),
      path.join(layer, ...LAYER_NODE_MODULES),
      task,
    ].join(':'),
    LD_LIBRARY_PATH: ['/lib64', '/usr/lib64', task, path.join(task, 'lib'), path.join(layer, 'lib')].join(':'),
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
  };
}

function probe(
  handler: string,
  layer: string | null,
  node = process.execPath,
  lambdaLayout = false,
): { loadMs: number; loadCpuMs: number; aerospikeMs: number | null } {
  let env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS, PROBE_HANDLER: handler };
  if (layer && lambdaLayout) {
    env = { ...lambdaLayoutEnv(handler, layer), PROBE_HANDLER: handler, PROBE_AEROSPIKE: '1' };
  } else if (layer) {
    // what Lambda sets for a layer: /opt/nodejs/node_modules on NODE_PATH, /opt/lib on LD_LIBRARY_PATH
    env.NODE_PATH = path.join(layer, ...LAYER_NODE_MODULES);
    env.LD_LIBRARY_PATH = [process.env.LD_LIBRARY_PATH, path.join(layer, 'lib')].filter(Boolean).join(':');
    env.PROBE_AEROSPIKE = '1';
  }
  const run = spawnSync(node, ['-e', PROBE], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`cold-start probe of ${handler} failed: ${run.stderr.trim()}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as ReturnType<typeof probe>;
}

/** Wall ms of a fresh `node -e 0`, median of `runs`: the machine's process start-up. */
export function nodeStartupMs(runs: number): number {
  return median(
    Array.from({ length: runs }, () => {
      const t = performance.now();
      spawnSync(process.execPath, ['-e', '0']);
      return performance.now() - t;
    }),
  );
}

function summarize(runsOf: ReturnType<typeof probe>[]): ColdStartRow['node22'] {
  if (runsOf.length === 0) return null;
  const aerospike = runsOf.map((r) => r.aerospikeMs).filter((x): x is number => x !== null);
  return {
    loadMs: Math.round(median(runsOf.map((r) => r.loadMs))),
    loadCpuMs: Math.round(median(runsOf.map((r) => r.loadCpuMs))),
    aerospikeMs: aerospike.length > 0 ? Math.round(median(aerospike)) : null,
  };
}

export function benchColdStart(runs = Number(process.env.COLD_START_RUNS ?? 5)): ColdStartRow[] {
  const bundled = synthesizeBundled();
  const localBinding = `node-v${process.versions.modules}-${process.platform}-${process.arch}`;
  const localLayer = AEROSPIKE_BINDING_SHA256[localBinding]
    ? mkdtempSync(path.join(tmpdir(), 'cold-start-layer-'))
    : null;
  try {
    if (localLayer) buildNativeLayer(localLayer, { binding: localBinding });
    const layerZipBytes = zipSize(bundled.layer);
    // round robin (each round probes every function once), so that the machine's drift during the section weighs
    // on every function alike instead of on whichever ran in a busy moment
    const probes = new Map<FunctionName, ReturnType<typeof probe>[]>(FUNCTION_NAMES.map((fn) => [fn, []]));
    // the deployed layer (the Node 22 binding) on the Lambda runtime's Node line
    const node22 = findNode22();
    if (!node22.ok) console.log(`cold start: no Node 22 rows (${node22.reason})`);
    const probes22 = new Map<FunctionName, ReturnType<typeof probe>[]>(FUNCTION_NAMES.map((fn) => [fn, []]));
    for (let round = 0; round < runs; round++)
      for (const fn of FUNCTION_NAMES) {
        probes.get(fn)!.push(probe(path.join(bundled.functions[fn], 'index.js'), localLayer));
        if (node22.ok)
          probes22.get(fn)!.push(probe(path.join(bundled.functions[fn], 'index.js'), bundled.layer, node22.node, true));
      }
    return FUNCTION_NAMES.map((fn) => {
      const runsOf = probes.get(fn)!;
      const aerospike = runsOf.map((r) => r.aerospikeMs).filter((x): x is number => x !== null);
      return {
        fn,
        zipBytes: zipSize(bundled.functions[fn]),
        layerZipBytes,
        loadMs: Math.round(median(runsOf.map((r) => r.loadMs))),
        loadCpuMs: Math.round(median(runsOf.map((r) => r.loadCpuMs))),
        aerospikeMs: aerospike.length > 0 ? Math.round(median(aerospike)) : null,
        node22: summarize(probes22.get(fn)!),
      };
    });
  } finally {
    rmSync(bundled.outdir, { recursive: true, force: true });
    if (localLayer) rmSync(localLayer, { recursive: true, force: true });
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);

export async function benchColdStartSection(): Promise<BenchRow[]> {
  const runs = Number(process.env.COLD_START_RUNS ?? 5);
  const startup = Math.round(nodeStartupMs(runs));
  const rows = benchColdStart(runs);
  console.log(`cold start (${runs} fresh processes per function, medians; node -e 0 takes ${startup} ms here):`);
  console.table(
    rows.map((r) => ({
      function: r.fn,
      'zip MB': mb(r.zipBytes),
      'layer zip MB': mb(r.layerZipBytes),
      'load ms': r.loadMs,
      'load CPU ms': r.loadCpuMs,
      'aerospike ms': r.aerospikeMs ?? 'n/a',
      'Node 22 load ms': r.node22?.loadMs ?? 'n/a',
      'Node 22 load CPU ms': r.node22?.loadCpuMs ?? 'n/a',
      'Node 22 aerospike ms': r.node22?.aerospikeMs ?? 'n/a',
    })),
  );
  return [
    { section: 'cold start', measure: 'node -e 0 (process start-up, reference)', ops: runs, ms: startup, opsPerSec: 0 },
    ...rows.map((r) => ({
      section: 'cold start',
      measure: `require ${r.fn} handler (ms = median wall)`,
      ops: runs,
      ms: r.loadMs,
      opsPerSec: 0,
      note: `zip ${mb(r.zipBytes)} MB + layer ${mb(r.layerZipBytes)} MB, CPU ${r.loadCpuMs} ms, then aerospike ${r.aerospikeMs ?? 'n/a'} ms`,
    })),
    ...rows
      .filter((r) => r.node22 !== null)
      .map((r) => ({
        section: 'cold start',
        measure: `require ${r.fn} handler on Node 22, deployed layer (ms = median wall)`,
        ops: runs,
        ms: r.node22!.loadMs,
        opsPerSec: 0,
        note: `CPU ${r.node22!.loadCpuMs} ms, then aerospike (node-v127 binding) ${r.node22!.aerospikeMs ?? 'n/a'} ms`,
      })),
  ];
}

registerBench('cold start (bundled functions)', benchColdStartSection);

if (require.main === module) void benchColdStartSection();
