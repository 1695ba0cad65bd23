/**
 * Local HTTP throughput: the local server (the Lambda handlers behind node:http, embedded engine ':memory:', file
 * blobs, inline queue) driven by 32 concurrent keep-alive clients. Rows: creates (POST /v1/txs) and spends
 * (POST /v1/spends with a 1-input EF tx), requests per second; POST /v1/batch/spends (100 txs a request, 8 clients)
 * in txs per second beside the store's batched rate; and, each in its own process, the handler time and peak RSS of
 * create + spend batches of 1, 100 and 1000 txs with the dollars per million txs they imply.
 */
import * as http from 'http';
import * as path from 'path';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import { execFileSync } from 'child_process';
import { registerBench, type BenchRow } from '../registry';
import { measured } from './store-batched';

const N = Number(process.env.BENCH_OPS ?? 3000);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 4000);
export const CLIENTS = 32;

function post(agent: http.Agent, port: number, p: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `bodies.length` POSTs (or as many as fit in the budget) from `clients` concurrent clients; one row. */
async function drive(
  measure: string,
  agent: http.Agent,
  port: number,
  p: string,
  bodies: string[],
  expected: number,
  clients = CLIENTS,
): Promise<BenchRow & { done: number }> {
  let next = 0;
  let failed = 0;
  const start = performance.now();
  const client = async () => {
    while (next < bodies.length && performance.now() - start < BUDGET_MS) {
      const i = next++;
      if ((await post(agent, port, p, bodies[i])) !== expected) failed++;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const ms = performance.now() - start;
  const done = Math.min(next, bodies.length);
  return {
    section: 'http (local server)',
    measure,
    ops: done,
    ms: Math.round(ms),
    opsPerSec: Math.round((done * 1000) / ms),
    note: `${clients} clients${failed > 0 ? `, ${failed} unexpected statuses` : ''}`,
    done,
  };
}

const BATCH = 100;
const BATCH_CLIENTS = 8;

/** POST /v1/batch/spends, 100 txs a request, 8 concurrent clients; txs/s beside the store's batched rate. */
async function batchSpends(agent: http.Agent, port: number): Promise<BenchRow & { done: number }> {
  const requests = Math.max(1, Math.floor(N / BATCH));
  const parents: Fixture[] = Array.from({ length: requests * BATCH }, () => rootTx(1));
  for (let i = 0; i < parents.length; i += BATCH) {
    const body = JSON.stringify({ txs: parents.slice(i, i + BATCH).map((f) => ({ tx: f.hex })) });
    if ((await post(agent, port, '/v1/batch/txs', body)) !== 200) throw new Error('batch create failed');
  }
  const bodies: string[] = [];
  for (let i = 0; i < parents.length; i += BATCH) {
    const txs = parents.slice(i, i + BATCH).map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex);
    bodies.push(JSON.stringify({ txs }));
  }
  const row = await drive(
    `POST /v1/batch/spends (${BATCH} txs a request)`,
    agent,
    port,
    '/v1/batch/spends',
    bodies,
    200,
    BATCH_CLIENTS,
  );
  const txsPerSec = Math.round(row.opsPerSec * BATCH);
  const store = measured.embeddedSpendBatch100;
  const ratio = store ? `; x${(txsPerSec / store).toFixed(2)} vs store spendMany batch 100 (${store} txs/s)` : '';
  return {
    ...row,
    measure: `${row.measure}, txs/s`,
    ops: row.done * BATCH,
    opsPerSec: txsPerSec,
    note: `${row.note}${ratio}`,
  };
}

/** Lambda list prices, us-east-1, x86 (see README Performance for the sources and date). */
const PRICE = { apiPerMillion: 3.5, lambdaPerMillion: 0.2, gbSecond: 0.0000166667 };
const MEMORY_GB = 1024 / 1024; // cdk/config.ts API_TUNING.memoryMb

/** Handler time per batch and peak RSS, each batch size in its own process; dollars per million txs. */
export function handlerRows(): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const size of [1, 100, 1000]) {
    const batches = size === 1 ? 50 : size === 100 ? 5 : 2;
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'handler-batch.ts'), String(size), String(batches)],
      {
        encoding: 'utf8',
      },
    );
    const r = JSON.parse(out.trim().split('\n').pop()!) as {
      createMs: number;
      spendMs: number;
      rssBeforeMb: number;
      peakRssMb: number;
    };
    const invocations = (2 * 1e6) / size;
    const billedMs = Math.ceil(r.createMs) + Math.ceil(r.spendMs);
    const lambda =
      invocations * (PRICE.lambdaPerMillion / 1e6) + (billedMs / 1000) * MEMORY_GB * (1e6 / size) * PRICE.gbSecond;
    const api = invocations * (PRICE.apiPerMillion / 1e6);
    rows.push({
      section: 'handler (one process per size)',
      measure: `create + spend batch of ${size} through the handlers`,
      ops: 2,
      ms: Math.round(r.createMs + r.spendMs),
      opsPerSec: Math.round((size * 1000) / Math.max(r.createMs + r.spendMs, 0.001)),
      note: `create ${r.createMs.toFixed(1)} ms, spend ${r.spendMs.toFixed(1)} ms; RSS ${r.rssBeforeMb.toFixed(0)} MB before, peak ${r.peakRssMb.toFixed(0)} MB; $/M txs: API Gateway ${(lambda + api).toFixed(3)}, direct ${lambda.toFixed(3)}`,
    });
  }
  return rows;
}

export async function benchHttp(): Promise<BenchRow[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startScratchServer } = require('../../server/scratch-server') as typeof import('../../server/scratch-server');
  const server = await startScratchServer('bench-http-');
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  try {
    // warm-up (JIT, connections): creates of throwaway txs, not measured
    const warm = Array.from({ length: Math.min(300, N) }, () => JSON.stringify({ tx: rootTx(1).hex }));
    await drive('warm-up', agent, server.port, '/v1/txs', warm, 201);
    const parents: Fixture[] = Array.from({ length: N }, () => rootTx(2));
    const creates = await drive(
      'POST /v1/txs (2 outputs)',
      agent,
      server.port,
      '/v1/txs',
      parents.map((f) => JSON.stringify({ tx: f.hex })),
      201,
    );
    const spends = parents
      .slice(0, creates.done)
      .map((p) => JSON.stringify({ tx: makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex }));
    const spendRow = await drive('POST /v1/spends (1 input, EF)', agent, server.port, '/v1/spends', spends, 200);
    const batchRow = await batchSpends(agent, server.port);
    return [creates, spendRow, batchRow].map(({ done: _done, ...row }) => row);
  } finally {
    agent.destroy();
    await server.close();
  }
}

registerBench('http (local server, 32 clients)', benchHttp);
registerBench('handler batches (time, memory, cost)', async () => handlerRows());
