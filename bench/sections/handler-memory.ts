/**
 * A function's memory as Lambda runs it (issue 21: peak RSS of any handler under 256 MB at 1M txs). The app is
 * synthesised with real bundling; each probe is a fresh process of the bundled handler on the Lambda runtime's Node 22
 * line with the deployed layer laid out as the runtime lays it out (bench/sections/cold-start.ts) and the runtime's
 * heap flags for the function's memory size (e2e/functions.ts nodeArguments). The probe invokes the handler the way
 * its trigger does and reports the process's peak RSS (VmHWM; what Lambda reports as "Max Memory Used"):
 * - `get`: GET /v1/unmined/txs, every page of the iteration (one invocation per page, the cursor of the previous);
 * - `cleanup`: one scheduled pass.
 * Run by the scale section (BENCH_SCALE_PARTS=handler) on a store it filled, or standalone on any store URL.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { synthesizeBundled } from '../../cdk/asset-report';
import { defaultConfig } from '../../cdk/config';
import { scheduledEvent, toProxyEvent } from '../../server/local-server';
import { nodeArguments } from '../../scripts/e2e/functions';
import { findNode22 } from '../../scripts/e2e/node22';
import { lambdaLayoutEnv } from './cold-start';

const PROBE = `
const { handler } = require(process.env.PROBE_HANDLER);
const context = (timeoutMs) => {
  const started = Date.now();
  return {
    callbackWaitsForEmptyEventLoop: false, functionName: 'probe', functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:probe', memoryLimitInMB: process.env.PROBE_MEMORY_MB,
    awsRequestId: String(Date.now()), logGroupName: '/aws/lambda/probe', logStreamName: 'probe',
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
    done() {}, fail() {}, succeed() {},
  };
};
(async () => {
  const event = JSON.parse(process.env.PROBE_EVENT);
  const timeoutMs = Number(process.env.PROBE_TIMEOUT_MS);
  const out = { invocations: 0, txs: 0, slowestMs: 0, largestBody: 0 };
  if (process.env.PROBE_KIND === 'pages') {
    let cursor;
    do {
      const e = JSON.parse(process.env.PROBE_EVENT);
      if (cursor) { e.queryStringParameters.cursor = cursor; e.multiValueQueryStringParameters.cursor = [cursor]; }
      const t = performance.now();
      const res = await handler(e, context(timeoutMs));
      out.slowestMs = Math.max(out.slowestMs, performance.now() - t);
      if (res.statusCode !== 200) throw new Error('page ' + out.invocations + ' answered ' + res.statusCode + ': ' + res.body);
      out.largestBody = Math.max(out.largestBody, Buffer.byteLength(res.body));
      const body = JSON.parse(res.body);
      out.invocations++;
      out.txs += body.txs.length;
      cursor = body.cursor;
    } while (cursor);
  } else {
    const t = performance.now();
    out.report = await handler(event, context(timeoutMs));
    out.slowestMs = performance.now() - t;
    out.invocations = 1;
  }
  // VmHWM: this process image's own peak (getrusage's maxRSS also counts the parent's pages it was forked with)
  const hwm = /VmHWM:\\s+(\\d+) kB/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'));
  out.maxRssMb = Math.round(Number(hwm[1]) / 1024);
  console.log('PROBE ' + JSON.stringify(out));
  process.exit(0);
})().catch((err) => { console.error(err); process.exit(1); });
`;

export interface HandlerMemoryRun {
  fn: 'get' | 'cleanup';
  what: string;
  memoryMb: number;
  maxRssMb: number;
  invocations: number;
  txs: number;
  slowestMs: number;
  largestBody: number;
  report?: Record<string, unknown>;
  /** what beforeCleanup prepared */
  prepared?: string;
}

export interface HandlerMemoryOptions {
  /** the store the functions open (UTXO_STORE) */
  storeUrl: string;
  /** environment every function gets besides the store (BLOB_STORE, UTXO_BATCH_SIZE, ...) */
  env: Record<string, string>;
  /** page sizes of the unmined iteration */
  limits: number[];
  /** function memory sizes to run at; the configured size first */
  memorySizes?: number[];
  /** run before each cleanup probe (e.g. makes a block's worth of txs deletable); its answer is reported */
  beforeCleanup?: () => Promise<string>;
}

/** One probe in a fresh process (spawned, not spawnSync: the caller's own Aerospike client keeps its event loop). */
async function run(
  node: string,
  handler: string,
  layer: string,
  memoryMb: number,
  env: Record<string, string>,
  probe: { kind: 'pages' | 'once'; event: unknown; timeoutMs: number },
): Promise<Omit<HandlerMemoryRun, 'fn' | 'what' | 'memoryMb'>> {
  const child = spawn(node, [...nodeArguments(memoryMb), '-e', PROBE], {
    env: {
      ...lambdaLayoutEnv(handler, layer),
      ...env,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
      PROBE_HANDLER: handler,
      PROBE_MEMORY_MB: String(memoryMb),
      PROBE_KIND: probe.kind,
      PROBE_EVENT: JSON.stringify(probe.event),
      PROBE_TIMEOUT_MS: String(probe.timeoutMs),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let line: string | undefined;
  let stderr = '';
  let rest = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    line = lines.reverse().find((l) => l.startsWith('PROBE ')) ?? line;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr = (stderr + chunk).slice(-4000)));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (rest.startsWith('PROBE ')) line = rest;
  if (status !== 0 || line === undefined) {
    throw new Error(`handler probe ${handler} (${memoryMb} MB) failed: ${stderr.trim().slice(-2000)}`);
  }
  return JSON.parse(line.slice('PROBE '.length)) as Omit<HandlerMemoryRun, 'fn' | 'what' | 'memoryMb'>;
}

function unminedEvent(limit: number): unknown {
  const url = new URL(`http://local/v1/unmined/txs?limit=${limit}`);
  return toProxyEvent({
    method: 'GET',
    url,
    headers: { accept: 'application/json' },
    body: undefined,
    resource: '/v1/unmined/txs',
    pathParameters: null,
    requestId: 'probe',
    sourceIp: '127.0.0.1',
  });
}

/** Runs each probe in a fresh process; the configured memory size of each function first, then the smaller ones. */
export async function benchHandlerMemory(o: HandlerMemoryOptions): Promise<HandlerMemoryRun[]> {
  const node22 = findNode22({ install: true });
  if (!node22.ok) throw new Error(`handler memory needs the Lambda runtime's Node 22: ${node22.reason}`);
  const config = defaultConfig();
  const bundled = synthesizeBundled();
  const env = { ...o.env, UTXO_STORE: o.storeUrl };
  const runs: HandlerMemoryRun[] = [];
  try {
    const get = path.join(bundled.functions.get, 'index.js');
    const cleanup = path.join(bundled.functions.cleanup, 'index.js');
    const sizes = (configured: number) => [configured, ...(o.memorySizes ?? []).filter((m) => m !== configured)];
    for (const memoryMb of sizes(config.functions.get.memoryMb)) {
      for (const limit of o.limits) {
        const timeoutMs = config.functions.get.timeoutSeconds * 1000;
        const r = await run(node22.node, get, bundled.layer, memoryMb, env, {
          kind: 'pages',
          event: unminedEvent(limit),
          timeoutMs,
        });
        runs.push({ fn: 'get', what: `GET /v1/unmined/txs, every page, limit ${limit}`, memoryMb, ...r });
      }
    }
    for (const memoryMb of sizes(config.functions.cleanup.memoryMb)) {
      const prepared = o.beforeCleanup ? await o.beforeCleanup() : undefined;
      const r = await run(node22.node, cleanup, bundled.layer, memoryMb, env, {
        kind: 'once',
        event: scheduledEvent(),
        timeoutMs: config.functions.cleanup.timeoutSeconds * 1000,
      });
      runs.push({ fn: 'cleanup', what: 'one scheduled pass', memoryMb, prepared, ...r });
    }
    return runs;
  } finally {
    spawnSync('rm', ['-rf', bundled.outdir]);
  }
}

// standalone: HANDLER_STORE=aerospike://127.0.0.1:3100/utxo?set=<set> npx tsx bench/sections/handler-memory.ts
if (require.main === module) {
  void benchHandlerMemory({
    storeUrl: process.env.HANDLER_STORE ?? '',
    env: { BLOB_STORE: 'file:/tmp/handler-memory-blobs', SIGNAL_QUEUE: 'inline', UTXO_BATCH_SIZE: '8000' },
    limits: (process.env.HANDLER_LIMITS ?? '10000').split(',').map(Number),
    memorySizes: (process.env.HANDLER_MEMORY ?? '256').split(',').map(Number),
  }).then((runs) => console.table(runs.map(({ report, ...r }) => ({ ...r, report: JSON.stringify(report ?? '') }))));
}
