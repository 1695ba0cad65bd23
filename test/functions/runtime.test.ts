/**
 * lib/runtime.ts with UTXO_STORE=aerospike://...: the shared client is obtained once per execution environment and
 * never closed by a handler or by resetRuntime. The Aerospike engine module is replaced by a stand-in (kind
 * 'aerospike') over an in-memory embedded engine: no network.
 */

import { handler as status } from '../../functions/status';
import { getRuntime, resetRuntime } from '../../lib/runtime';
import { RECORD_OPERATIONS } from '../../lib/engine/port';
import { rootTx } from '../fixtures/txs';
import { apiEvent, captureStdout, lambdaContext } from './events';
import { useTestRuntime } from './runtime-env';

interface MockState {
  clients: { hosts: string; namespace: string }[];
  engines: { options: unknown; closed: number }[];
  clusterChecks: { configured: number; hosts: string }[];
}

jest.mock('../../lib/engine/aerospike', () => {
  const state: MockState = { clients: [], engines: [], clusterChecks: [] };
  class StandIn {
    readonly kind = 'aerospike';
    closed = 0;
    private readonly inner: Promise<Record<string, (...args: unknown[]) => Promise<unknown>>>;
    constructor(readonly options: unknown) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { openEmbeddedEngine } = require('../../lib/engine/embedded');
      this.inner = openEmbeddedEngine({ path: ':memory:' });
      state.engines.push(this);
      for (const m of ['ensureModule', ...RECORD_OPERATIONS, 'ping']) {
        (this as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => this.inner.then((e) => e[m](...args));
      }
    }
    async close(): Promise<void> {
      this.closed++;
    }
  }
  return {
    mockState: state,
    getSharedAerospikeClient: async (options: { hosts: string; namespace: string }) => {
      state.clients.push(options);
      return { shared: true };
    },
    AerospikeEngine: StandIn,
    // the namespace check at start-up (lib/engine/aerospike/namespace-check.ts; its own tests in test/engine-aerospike)
    checkNamespace: async () => undefined,
    // and of AEROSPIKE_CLUSTER_SIZE against the cluster (cluster-size-check.ts; also tested there)
    checkClusterSize: async (_client: unknown, configured: number, hosts: string) => {
      state.clusterChecks.push({ configured, hosts });
    },
  };
});

// eslint-disable-next-line @typescript-eslint/no-require-imports
const mockState: MockState = require('../../lib/engine/aerospike').mockState;

useTestRuntime('fn-runtime', 'aerospike://10.0.1.5:3000,10.0.2.5:3000/utxo?set=txs');

async function health() {
  const { result } = await captureStdout(() =>
    status(apiEvent({ method: 'GET', resource: '/v1/health' }), lambdaContext()),
  );
  return { status: result.statusCode, body: JSON.parse(result.body) };
}

test('the shared Aerospike client is obtained once and never closed', async () => {
  const first = await health();
  expect(first.status).toBe(200);
  expect(first.body.engine).toBe('aerospike: ok');
  for (let i = 0; i < 5; i++) expect((await health()).status).toBe(200);
  // the connection pool and command queue from the settings (defaults here)
  expect(mockState.clients).toEqual([
    {
      hosts: '10.0.1.5:3000,10.0.2.5:3000',
      namespace: 'utxo',
      maxConnsPerNode: 32,
      // linearizable reads only on an Enterprise strong-consistency namespace (AEROSPIKE_STRONG_CONSISTENCY)
      strongConsistency: false,
      commandQueue: { maxCommandsInProcess: 32, maxCommandsInQueue: 4096 },
      timeouts: { commandMs: 1000, batchMs: 5000 },
    },
  ]);
  // AEROSPIKE_CLUSTER_SIZE is checked against the cluster once, when the engine opens (0 here: unset)
  expect(mockState.clusterChecks).toEqual([{ configured: 0, hosts: '10.0.1.5:3000,10.0.2.5:3000' }]);
  expect(mockState.engines).toHaveLength(1);
  expect(mockState.engines[0].options).toEqual({
    client: { shared: true },
    namespace: 'utxo',
    seeds: '10.0.1.5:3000,10.0.2.5:3000',
    set: 'txs',
    tombstoneTtlSeconds: 30 * 24 * 3600,
  });

  const { store } = await getRuntime();
  const f = rootTx(1);
  await store.create(f.hex);
  await expect(store.get(f.txid)).resolves.toMatchObject({ txid: f.txid });

  await resetRuntime();
  expect(mockState.engines[0].closed).toBe(0);
});
