/**
 * The same store contract against a real Aerospike cluster when AEROSPIKE_HOSTS is set (AEROSPIKE_NAMESPACE
 * optional, default "test"); every harness gets its own set, so B can differ between them. The harnesses share one
 * client, connected on first use and closed in afterAll.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import type { Client } from 'aerospike';

const hosts = process.env.AEROSPIKE_HOSTS;

if (!hosts) {
  const reason = 'AEROSPIKE_HOSTS is not set: the store contract against a real Aerospike cluster is skipped';
  console.log(reason);
  test(`store contract on Aerospike: skipped (${reason})`, () => {
    expect(process.env.AEROSPIKE_HOSTS).toBeUndefined();
  });
} else {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { connectAerospike, AerospikeEngine } =
    require('../../lib/engine/aerospike') as typeof import('../../lib/engine/aerospike');
  const { FileBlobStore } = require('../../lib/blob') as typeof import('../../lib/blob');
  const { InlineQueue } = require('../../lib/signals') as typeof import('../../lib/signals');
  const { describeStoreContract } = require('./store-contract') as typeof import('./store-contract');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const namespace = process.env.AEROSPIKE_NAMESPACE ?? 'test';

  let connecting: Promise<Client> | undefined;
  const client = (): Promise<Client> => {
    if (!connecting) {
      const attempt = connectAerospike({ hosts, namespace });
      connecting = attempt;
      // a failed connection is not kept: the next harness tries again (connectAerospike closed that client)
      attempt.catch(() => {
        if (connecting === attempt) connecting = undefined;
      });
    }
    return connecting;
  };

  // Runs after the contract's afterAll hooks (the harnesses' engines do not own the client). The close unreferences
  // the client's event loop, so jest can exit; the loop is not released (Aerospike.releaseEventLoop()): after a
  // release, a later test file that connects in the same jest worker crashes the worker.
  afterAll(async () => {
    const open = await connecting?.catch(() => undefined);
    connecting = undefined;
    open?.close();
  });

  let sets = 0;
  describeStoreContract(`Aerospike ${hosts}/${namespace}`, async () => {
    const set = `c${process.pid % 10000}_${Date.now() % 1_000_000}_${sets++}`;
    const engine = new AerospikeEngine({ client: await client(), namespace, set });
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
