/**
 * Run as its own process (bench/sections/http.ts starts it, one process per batch size, as one Lambda container
 * would be): creates and spends `size`-tx batches through the create and spend handlers (functions/*.ts, embedded
 * engine ':memory:'), and prints one JSON line: handler ms per batch for each, RSS before and peak RSS (maxRSS).
 * Batch size 1 uses the single routes (POST /v1/txs, POST /v1/spends), larger sizes the batch routes.
 */
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { apiEvent, lambdaContext } from '../../test/functions/events';
import { makeTx, rootTx } from '../../test/fixtures/txs';

async function main(): Promise<void> {
  const size = Number(process.argv[2] ?? 1000);
  const batches = Number(process.argv[3] ?? 3);
  Object.assign(process.env, {
    UTXO_STORE: 'embedded::memory:',
    BLOB_STORE: `file:${mkdtempSync(path.join(tmpdir(), 'bench-handler-'))}`,
    SIGNAL_QUEUE: 'inline',
    POWERTOOLS_METRICS_DISABLED: 'true',
    LOG_LEVEL: 'ERROR',
  });
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { handler: create } = require('../../functions/create') as typeof import('../../functions/create');
  const { handler: spend } = require('../../functions/spend') as typeof import('../../functions/spend');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const silence = process.stdout.write.bind(process.stdout);
  const call = async (h: typeof create, resource: string, body: unknown, status: number): Promise<number> => {
    process.stdout.write = () => true; // the handlers' log lines
    const t = performance.now();
    try {
      const r = await h(apiEvent({ method: 'POST', resource, body }), lambdaContext());
      if (r.statusCode !== status) throw new Error(`${resource}: ${r.statusCode} ${r.body.slice(0, 200)}`);
      return performance.now() - t;
    } finally {
      process.stdout.write = silence;
    }
  };
  // warm-up: runtime start, JIT
  for (let i = 0; i < 20; i++) await call(create, '/v1/txs', { tx: rootTx(1).hex }, 201);
  const rssBefore = process.memoryUsage().rss;
  let createMs = 0;
  let spendMs = 0;
  for (let b = 0; b < batches; b++) {
    const parents = Array.from({ length: size }, () => rootTx(1));
    const spenders = parents.map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex);
    if (size === 1) {
      createMs += await call(create, '/v1/txs', { tx: parents[0].hex }, 201);
      spendMs += await call(spend, '/v1/spends', { tx: spenders[0] }, 200);
    } else {
      createMs += await call(create, '/v1/batch/txs', { txs: parents.map((p) => ({ tx: p.hex })) }, 200);
      spendMs += await call(spend, '/v1/batch/spends', { txs: spenders }, 200);
    }
  }
  console.log(
    JSON.stringify({
      size,
      createMs: createMs / batches,
      spendMs: spendMs / batches,
      rssBeforeMb: rssBefore / 2 ** 20,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
