/**
 * The RecordEngine contract (test/engine/engine-contract.ts) against a real Aerospike cluster when AEROSPIKE_HOSTS
 * is set ("h1:3000,h2:3000"; AEROSPIKE_NAMESPACE optional, default "test"). Each run uses its own set.
 */
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

  afterAll(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('aerospike').releaseEventLoop();
  });

  describeEngineContract(`Aerospike ${hosts}/${namespace}`, async () => {
    const client = await connectAerospike({ hosts, namespace });
    const set = `e${process.pid % 10000}_${Date.now() % 1_000_000}`;
    const engine = new AerospikeEngine({ client, namespace, set, ownsClient: true });
    return { engine, close: () => engine.close() };
  });
}
