/**
 * The RecordEngine contract (test/engine/engine-contract.ts) against a real Aerospike cluster when AEROSPIKE_HOSTS
 * is set ("h1:3000,h2:3000"; AEROSPIKE_NAMESPACE optional, default "test"). Each run uses its own set.
 */
import type { Client } from 'aerospike';

const hosts = process.env.AEROSPIKE_HOSTS;

if (!hosts) {
  const reason = 'AEROSPIKE_HOSTS is not set: the RecordEngine contract against a real Aerospike cluster is skipped';
  console.log(reason);
  test(`RecordEngine contract on Aerospike: skipped (${reason})`, () => {
    expect(process.env.AEROSPIKE_HOSTS).toBeUndefined();
  });
} else {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { connectAerospike, AerospikeEngine } =
    require('../../lib/engine/aerospike') as typeof import('../../lib/engine/aerospike');
  const { describeEngineContract } = require('../engine/engine-contract') as typeof import('../engine/engine-contract');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const namespace = process.env.AEROSPIKE_NAMESPACE ?? 'test';
  const clients: Client[] = [];

  // Runs after the contract's own afterAll (engine.close() closes the client it owns). Every client this file
  // connected is closed here too, so that one is closed even when the engine was never built or closed (a failed
  // beforeAll). Closing twice is harmless. The last close unreferences the client's event loop, so jest can exit;
  // the loop is not released (Aerospike.releaseEventLoop()): after a release, a later test file that connects in the
  // same jest worker crashes the worker (the native module outlives jest's per-file module registry).
  afterAll(() => {
    for (const client of clients.splice(0)) client.close();
  });

  describeEngineContract(`Aerospike ${hosts}/${namespace}`, async () => {
    const client = await connectAerospike({ hosts, namespace });
    clients.push(client);
    const set = `e${process.pid % 10000}_${Date.now() % 1_000_000}`;
    const engine = new AerospikeEngine({ client, namespace, set, ownsClient: true });
    return { engine, close: () => engine.close() };
  });
}
