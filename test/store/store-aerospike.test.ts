/**
 * The same store contract against a real Aerospike cluster when AEROSPIKE_HOSTS is set (AEROSPIKE_NAMESPACE
 * optional, default "test"); every harness gets its own set, so B can differ between them.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';

const hosts = process.env.AEROSPIKE_HOSTS;

if (!hosts) {
  const reason = 'AEROSPIKE_HOSTS is not set: the store contract against a real Aerospike cluster is skipped';
  console.log(reason);
  test(`store contract on Aerospike: skipped (${reason})`, () => {
    expect(process.env.AEROSPIKE_HOSTS).toBeUndefined();
  });
} else {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { connectAerospike, AerospikeEngine } = require('../../lib/engine/aerospike');
  const { FileBlobStore } = require('../../lib/blob');
  const { InlineQueue } = require('../../lib/signals');
  const { describeStoreContract } = require('./store-contract') as typeof import('./store-contract');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const namespace = process.env.AEROSPIKE_NAMESPACE ?? 'test';
  let sets = 0;
  describeStoreContract(`Aerospike ${hosts}/${namespace}`, async () => {
    const client = await connectAerospike({ hosts, namespace });
    const set = `c${process.pid % 10000}_${Date.now() % 1_000_000}_${sets++}`;
    const engine = new AerospikeEngine({ client, namespace, set });
    const dir = mkdtempSync(path.join(tmpdir(), 'store-contract-'));
    return {
      engine,
      blobs: new FileBlobStore({ dir }),
      signals: new InlineQueue(),
      close: async () => {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
}
