/**
 * Local HTTP throughput: the local server (the Lambda handlers behind node:http, embedded engine ':memory:', file
 * blobs, inline queue) driven by 32 concurrent keep-alive clients. Rows: creates (POST /v1/txs) and spends
 * (POST /v1/spends with a 1-input EF tx), requests per second.
 */
import { mkdtempSync, rmSync } from 'fs';
import * as http from 'http';
import { tmpdir } from 'os';
import * as path from 'path';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import { registerBench, type BenchRow } from '../registry';

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
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const ms = performance.now() - start;
  const done = Math.min(next, bodies.length);
  return {
    section: 'http (local server)',
    measure,
    ops: done,
    ms: Math.round(ms),
    opsPerSec: Math.round((done * 1000) / ms),
    note: `${CLIENTS} clients${failed > 0 ? `, ${failed} unexpected statuses` : ''}`,
    done,
  };
}

export async function benchHttp(): Promise<BenchRow[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startServer } = require('../../lib/http/local-server') as typeof import('../../lib/http/local-server');
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-http-'));
  const server = await startServer({
    env: { UTXO_STORE: 'embedded::memory:', BLOB_STORE: `file:${dir}`, SIGNAL_QUEUE: 'inline' },
    port: 0,
    log: () => undefined,
    cleanupIntervalSeconds: 0,
  });
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
    return [creates, spendRow].map(({ done: _done, ...row }) => row);
  } finally {
    agent.destroy();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

registerBench('http (local server, 32 clients)', benchHttp);
