/**
 * The typed client against the local server (embedded engine ':memory:', file blobs, inline queue): 1,000 concurrent
 * single `spend(tx)` calls (1-input EF txs), sent unbatched (one POST /v1/spends each) and with automatic batching
 * (2 ms linger, 100 a batch, 8 batches in flight: POST /v1/batch/spends). Rows: spends per second, and the ratio
 * batched / unbatched (goal >= 5).
 *
 * The batched row needs the server's POST /v1/batch/spends; a server without it answers ROUTE_NOT_FOUND, and the
 * row says so instead of a number.
 */
import { isApiError, localClient, type UtxoStoreClient } from '@bsv-utxo-store/client';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import { registerBench, type BenchRow } from '../registry';

const CALLS = Math.min(1000, Number(process.env.BENCH_OPS ?? 1000));
const SECTION = 'client (local server)';

async function createParents(client: UtxoStoreClient, n: number): Promise<Fixture[]> {
  const parents = Array.from({ length: n }, () => rootTx(1));
  for (let i = 0; i < parents.length; i += 32) {
    await Promise.all(parents.slice(i, i + 32).map((p) => client.createTx(p.hex)));
  }
  return parents;
}

/** `CALLS` concurrent spend(tx) calls; one row. */
async function spendAll(client: UtxoStoreClient, parents: Fixture[], measure: string): Promise<BenchRow> {
  const txs = parents.map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex);
  const start = performance.now();
  const settled = await Promise.allSettled(txs.map((tx) => client.spend(tx)));
  const ms = performance.now() - start;
  const failed = settled.filter((s) => s.status === 'rejected') as PromiseRejectedResult[];
  if (failed.length > 0 && failed.every((f) => isApiError(f.reason, 'ROUTE_NOT_FOUND'))) {
    return {
      section: SECTION,
      measure,
      ops: 0,
      ms: Math.round(ms),
      opsPerSec: 0,
      note: 'the server has no POST /v1/batch/spends (issue 11): not measured',
    };
  }
  const done = settled.length - failed.length;
  return {
    section: SECTION,
    measure,
    ops: done,
    ms: Math.round(ms),
    opsPerSec: Math.round((done * 1000) / ms),
    note: `${CALLS} concurrent calls${failed.length > 0 ? `, ${failed.length} failed` : ''}`,
  };
}

export async function benchClient(): Promise<BenchRow[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startScratchServer } = require('../../server/scratch-server') as typeof import('../../server/scratch-server');
  const server = await startScratchServer('bench-client-');
  const plain = localClient(server.url, { batching: false });
  const batched = localClient(server.url, { batching: { lingerMs: 2, maxBatchSize: 100, maxInFlight: 8 } });
  try {
    await spendAll(plain, await createParents(plain, Math.min(100, CALLS)), 'warm-up');
    const unbatchedRow = await spendAll(plain, await createParents(plain, CALLS), 'spend(tx), unbatched');
    const batchedRow = await spendAll(batched, await createParents(plain, CALLS), 'spend(tx), auto-batched (100)');
    const rows = [unbatchedRow, batchedRow];
    if (batchedRow.opsPerSec > 0 && unbatchedRow.opsPerSec > 0) {
      const ratio = batchedRow.opsPerSec / unbatchedRow.opsPerSec;
      rows.push({
        section: SECTION,
        measure: 'ratio batched / unbatched',
        ops: 0,
        ms: 0,
        opsPerSec: 0,
        note: `${ratio.toFixed(2)} x (goal >= 5)`,
      });
    }
    return rows;
  } finally {
    await batched.close();
    await plain.close();
    await server.close();
  }
}

registerBench(SECTION, benchClient);
