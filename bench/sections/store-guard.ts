/**
 * The acknowledgement guard's cost (SPEND_ACK_GUARD, docs/decisions/0007), `refuse` beside `off` on the same engine,
 * GUARD_ROUNDS interleaved rounds (a busy machine drifts between rounds; each mode's best round is kept):
 *   - sequential single spends: every spend waits for its own view (one info round trip per node after its writes);
 *   - single spends with BENCH_GUARD_IN_FLIGHT (default 16,64) in flight, as node services call (many validators at
 *     once): spends whose writes were answered while a view was in flight share the next one;
 *   - spendMany of GUARD_BATCH txs, sequential: one view per request, whatever its size;
 *   - with Aerospike: sequential single spends as a node service sends them, the typed client's `spend` through HTTP
 *     to the local server (`npm start`'s server, the functions' handlers in process), a server per mode and round.
 * `refuse` asks every node cluster-stable (migrations ignored) once a request's outcomes are judged. (`settled`, the
 * rule of decision 0006, refuses while any migration is pending, which a shared cluster often has.)
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import type { BlobStore } from '../../lib/blob/port';
import type { RecordEngine } from '../../lib/engine/port';
import type { UtxoStore } from '../../lib/store/types';
import { createUtxoStore } from '../../lib/store/utxo-store';
import type { UtxoStoreError } from '../../lib/domain/errors';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import type { BenchRow } from '../registry';
import { BENCH_SETTINGS, nullQueue } from '../store-settings';

const N = Number(process.env.BENCH_OPS ?? 3000);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 4000);
const IN_FLIGHT = (process.env.BENCH_GUARD_IN_FLIGHT ?? '16,64').split(',').map(Number);
const GUARD_ROUNDS = 3;
const GUARD_BATCH = 100;
const MODES = ['refuse', 'off'] as const;

interface Shape {
  measure: string;
  /** txs per request */
  batch: number;
  inFlight: number;
}

/** What the rows spend through: the store itself, or the typed client over HTTP. */
interface SpendTarget {
  /** creates `parents` (one request per 500) */
  createAll(parents: Fixture[]): Promise<void>;
  /** one request of `txs`: an error per failed tx */
  spend(txs: string[]): Promise<(string | undefined)[]>;
}

function storeTarget(store: UtxoStore): SpendTarget {
  return {
    createAll: async (parents) => {
      for (let i = 0; i < parents.length; i += 500) await createAll(store, parents.slice(i, i + 500));
    },
    spend: async (txs) => {
      if (txs.length === 1)
        return [
          await store.spend({ tx: txs[0] }).then(
            () => undefined,
            (error: UtxoStoreError) => `${error.code} ${error.message}`,
          ),
        ];
      const results = await store.spendMany(txs.map((tx) => ({ tx })));
      return results.map((r) => (r.ok ? undefined : `${r.error.code} ${r.error.message}`));
    },
  };
}

type Client = ReturnType<typeof import('@bsv-utxo-store/client').localClient>;

function httpTarget(client: Client): SpendTarget {
  return {
    createAll: async (parents) => {
      for (let i = 0; i < parents.length; i += 500) {
        const results = await client.createMany(parents.slice(i, i + 500).map((p) => ({ tx: p.hex })));
        const failed = results.find((r) => !r.ok);
        if (failed && !failed.ok) throw new Error(`bench guard HTTP createMany: ${JSON.stringify(failed.error)}`);
      }
    },
    spend: async (txs) => {
      if (txs.length !== 1) throw new Error('bench guard HTTP: single spends only');
      return [
        await client.spend(txs[0]).then(
          () => undefined,
          (err: Error) => String(err.message),
        ),
      ];
    },
  };
}

/** `ops` spend requests of `shape.batch` fresh one-input txs each, run `shape.inFlight` at a time within `budgetMs`. */
async function run(
  target: SpendTarget,
  section: string,
  shape: Shape,
  ops: number,
  budgetMs: number,
): Promise<BenchRow> {
  const parents = Array.from({ length: ops * shape.batch }, () => rootTx(2));
  await target.createAll(parents);
  const hexes = parents.map((p) => makeTx({ inputs: [{ parent: p, vout: 0 }] }).hex);
  let next = 0;
  let done = 0;
  let failed = 0;
  let firstError = '';
  const start = performance.now();
  const worker = async () => {
    while (next < ops && performance.now() - start < budgetMs) {
      const i = next++;
      for (const error of await target.spend(hexes.slice(i * shape.batch, (i + 1) * shape.batch))) {
        if (error === undefined) done++;
        else {
          failed++;
          firstError ||= error.slice(0, 120);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: shape.inFlight }, worker));
  const ms = performance.now() - start;
  return {
    section,
    measure: shape.measure,
    ops: done,
    ms: Math.round(ms),
    opsPerSec: Math.round((done * 1000) / ms),
    // a loaded machine times requests out: they are counted, not timed as spends
    note: failed ? `${failed} failed (${firstError})` : undefined,
  };
}

/** Creates `parents`, again for those whose create failed (timeouts on a loaded machine), up to 5 times. */
async function createAll(store: UtxoStore, parents: Fixture[]): Promise<void> {
  let left = parents;
  for (let attempt = 0; left.length > 0; attempt++) {
    const results = await store.createMany(left.map((p) => ({ tx: p.hex })));
    const failed = results.flatMap((r, i) => (r.ok || r.error.code === 'TX_EXISTS' ? [] : [i]));
    if (failed.length > 0 && attempt === 4) {
      const r = results[failed[0]];
      throw new Error(`bench createMany: ${r.ok ? '' : `${r.error.code} ${r.error.message}`}`);
    }
    left = failed.map((i) => left[i]);
  }
}

/**
 * A shape's rows, `refuse` beside `off`: GUARD_ROUNDS interleaved rounds, `targetOf` the target of a mode for a round
 * (and what to close after it), each mode's best round.
 */
async function interleaved(
  section: string,
  shape: Shape,
  ops: number,
  targetOf: (guard: (typeof MODES)[number]) => Promise<{ target: SpendTarget; close?: () => Promise<void> }>,
): Promise<BenchRow[]> {
  const best = new Map<string, BenchRow>();
  for (let round = 0; round < GUARD_ROUNDS; round++) {
    for (const guard of MODES) {
      const { target, close } = await targetOf(guard);
      try {
        const row = await run(
          target,
          section,
          { ...shape, measure: `${shape.measure}, guard ${guard}` },
          ops,
          BUDGET_MS / GUARD_ROUNDS,
        );
        if ((best.get(guard)?.opsPerSec ?? -1) < row.opsPerSec) best.set(guard, row);
      } finally {
        await close?.();
      }
    }
  }
  const [on, off] = MODES.map((m) => best.get(m)!);
  on.note = `${on.note ? `${on.note}; ` : ''}best of ${GUARD_ROUNDS} interleaved rounds; refuse/off = ${(on.opsPerSec / Math.max(off.opsPerSec, 1)).toFixed(2)}`;
  return [on, off];
}

/** Where the HTTP rows' local servers keep their records: an Aerospike cluster's hosts and namespace. */
export interface GuardHttpTarget {
  hosts: string;
  namespace: string;
}

/** Sequential single spends through HTTP: the typed client against a fresh local server on `http` per mode and round. */
async function benchGuardHttp(section: string, http: GuardHttpTarget): Promise<BenchRow[]> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { startServer } = require('../../server/local-server') as typeof import('../../server/local-server');
  const { localClient } = require('@bsv-utxo-store/client') as typeof import('@bsv-utxo-store/client');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-guard-'));
  try {
    const shape = {
      measure: 'HTTP spend (1 input, EF, the typed client to the local server), sequential',
      batch: 1,
      inFlight: 1,
    };
    return await interleaved(section, shape, Math.ceil(N / GUARD_ROUNDS), async (guard) => {
      const server = await startServer({
        env: {
          UTXO_STORE: `aerospike://${http.hosts}/${http.namespace}?set=guard_http_${Date.now() % 1_000_000}`,
          BLOB_STORE: `file:${dir}`,
          SIGNAL_QUEUE: 'inline',
          SPEND_ACK_GUARD: guard,
        },
        port: 0,
        log: () => undefined,
        cleanupIntervalSeconds: 0,
      });
      const client = localClient(server.url);
      return {
        target: httpTarget(client),
        close: async () => {
          await client.close();
          await server.close();
        },
      };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchGuard(
  section: string,
  engine: RecordEngine,
  blobs: BlobStore,
  http?: GuardHttpTarget,
): Promise<BenchRow[]> {
  const shapes: Shape[] = [
    { measure: 'store spend (1 input, EF), sequential', batch: 1, inFlight: 1 },
    ...IN_FLIGHT.map((k) => ({ measure: `store spend (1 input, EF), ${k} in flight`, batch: 1, inFlight: k })),
    { measure: `store spendMany (${GUARD_BATCH} txs), sequential`, batch: GUARD_BATCH, inFlight: 1 },
  ];
  const stores = new Map<string, UtxoStore>();
  for (const guard of MODES)
    stores.set(
      guard,
      await createUtxoStore({
        engine,
        blobs,
        signals: nullQueue,
        settings: { ...BENCH_SETTINGS, spendAckGuard: guard },
      }),
    );
  const rows: BenchRow[] = [];
  for (const shape of shapes) {
    const ops = Math.ceil(N / GUARD_ROUNDS / shape.batch) * (shape.batch === 1 ? 1 : 4);
    rows.push(
      ...(await interleaved(section, shape, ops, async (guard) => ({ target: storeTarget(stores.get(guard)!) }))),
    );
  }
  if (http) rows.push(...(await benchGuardHttp(section, http)));
  return rows;
}
