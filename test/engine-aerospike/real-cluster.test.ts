/**
 * Everything that connects the native `aerospike` client, in one test file:
 *  - an unreachable cluster (always: no server needed);
 *  - the RecordEngine contract (test/engine/engine-contract.ts) and the UtxoStore contract (test/store/store-contract.ts)
 *    against a real cluster when AEROSPIKE_HOSTS is set ("h1:3000,h2:3000"; AEROSPIKE_NAMESPACE optional, default
 *    "test"). Every harness gets its own set, so B can differ between them.
 *
 * Why one file: jest re-evaluates the client's JavaScript for every test file but the native addon stays loaded in
 * the worker process, so a second test file that connects in the same worker finds the addon's event loop in a state
 * its fresh JavaScript does not know ("Event loop is not initialized right now", or a crash after a release). Here
 * one module instance makes every connection; clients are closed without releasing the loop (the close of the last
 * one unreferences it, so jest exits).
 */
import type { Client } from 'aerospike';
import {
  AerospikeEngine,
  checkClusterSize,
  connectAerospike,
  getSharedAerospikeClient,
  closeSharedAerospikeClients,
  indexName,
  legacyIndexName,
  parseSindexList,
} from '../../lib/engine/aerospike';
import { INDEXED_BINS } from '../../lib/domain/bins';
import { describeEngineContract } from '../engine/engine-contract';
import { describeReorgContract } from '../store/reorg-contract';
import { contractTarget } from '../store/contract-target';
import { describeStoreContract } from '../store/store-contract';
import { describeBatchContract } from '../store/batch-contract';
import { loadUdfSource, udfModuleName } from '../../lib/store/udf-module';
import { acquireRangeLocks } from '../../lib/cleanup/pass-lock';
import { splitPartitions } from '../../lib/engine/port';

describe('connecting', () => {
  test('an unreachable cluster is UNAVAILABLE, and the shared client is retried on the next call', async () => {
    const options = { hosts: '127.0.0.1:1', namespace: 'test', timeouts: { connectMs: 200 } };
    const first = getSharedAerospikeClient(options);
    await expect(first).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const second = getSharedAerospikeClient(options);
    expect(second).not.toBe(first);
    await expect(second).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  }, 20000);
});

const hosts = process.env.AEROSPIKE_HOSTS;

if (!hosts) {
  const reason = 'AEROSPIKE_HOSTS is not set: the engine and store contracts against a real Aerospike are skipped';
  console.log(reason);
  test(`contracts on Aerospike: skipped (${reason})`, () => {
    expect(process.env.AEROSPIKE_HOSTS).toBeUndefined();
  });
} else {
  const namespace = process.env.AEROSPIKE_NAMESPACE ?? 'test';

  // one client for the whole file, connected on first use; a failed attempt is forgotten so the next harness retries
  let connecting: Promise<Client> | undefined;
  const client = (): Promise<Client> => {
    if (!connecting) {
      const attempt = connectAerospike({ hosts, namespace });
      connecting = attempt;
      attempt.catch(() => {
        if (connecting === attempt) connecting = undefined;
      });
    }
    return connecting;
  };

  // runs after every describe's own afterAll; the engines never own the client
  afterAll(async () => {
    const open = await connecting?.catch(() => undefined);
    connecting = undefined;
    open?.close();
  });

  test(`the shared client on ${hosts}: one per process until closeSharedAerospikeClients closes and forgets it`, async () => {
    const options = { hosts, namespace };
    const first = await getSharedAerospikeClient(options);
    expect(await getSharedAerospikeClient(options)).toBe(first);
    await closeSharedAerospikeClients();
    expect(first.isConnected(false)).toBe(false);
    const second = await getSharedAerospikeClient(options);
    expect(second).not.toBe(first);
    expect(second.isConnected(false)).toBe(true);
    await closeSharedAerospikeClients();
  });

  let sets = 0;
  const nextSet = (prefix: string): string => `${prefix}${process.pid % 10000}_${Date.now() % 1_000_000}_${sets++}`;

  describeEngineContract(`Aerospike ${hosts}/${namespace}`, async () => {
    const engine = new AerospikeEngine({ client: await client(), namespace, set: nextSet('e') });
    return { engine, close: () => engine.close() };
  });

  describeStoreContract(`Aerospike ${hosts}/${namespace}`, async () =>
    contractTarget(
      new AerospikeEngine({ client: await client(), namespace, set: nextSet('c') }),
      'store-contract',
      false,
    ),
  );

  describeReorgContract(`Aerospike ${hosts}/${namespace}`, async () =>
    contractTarget(
      new AerospikeEngine({ client: await client(), namespace, set: nextSet('r') }),
      'reorg-contract',
      false,
    ),
  );

  // cleanup's marks: the generation check is the module's (record.gen), so that the marks are one batch command
  test(`markDeleting on Aerospike ${hosts}/${namespace}: the read generation marks, another is CHANGED and writes nothing`, async () => {
    const engine = new AerospikeEngine({ client: await client(), namespace, set: nextSet('m') });
    const source = loadUdfSource();
    const module = udfModuleName(source);
    await engine.ensureModule(module, source);
    const keys = [Buffer.alloc(32, 1), Buffer.alloc(32, 2), Buffer.alloc(32, 3)];
    for (const key of keys) await engine.create(key, { utxos: [] });
    await engine.update(keys[1], { spentUtxos: 0 }); // written since "read" at generation 1
    const answers = await engine.batchApply(keys.map((key) => ({ key, module, fn: 'markDeleting', args: [1] })));
    expect(answers.map((a) => (a.ok ? (a.result.errorCode ?? a.result.status) : a.error.code))).toEqual([
      'OK',
      'CHANGED',
      'OK',
    ]);
    const after = await engine.batchGet(keys);
    expect(after.map((r) => [r?.generation, r?.bins.deleting])).toEqual([
      [2, true],
      [2, undefined],
      [2, true],
    ]);
    await engine.batchRemove(keys.map((key) => ({ key })));
  });

  // cleanup's range locks on Community Edition: a released lock is a tombstone, which the next pass's batch takes over
  test(`cleanup range locks on Aerospike ${hosts}/${namespace}: busy while held, taken again after release`, async () => {
    const engine = new AerospikeEngine({ client: await client(), namespace, set: nextSet('l') });
    const ranges = splitPartitions(4);
    const first = await acquireRangeLocks(engine, ranges.slice(0, 2), 60);
    expect([first.held.length, first.busy.length, first.failed.length]).toEqual([2, 0, 0]);
    const second = await acquireRangeLocks(engine, ranges, 60);
    expect([second.held, second.busy, second.failed]).toEqual([ranges.slice(2), ranges.slice(0, 2), []]);
    await first.release();
    await second.release();
    const third = await acquireRangeLocks(engine, ranges, 60);
    expect([third.held, third.busy, third.failed]).toEqual([ranges, [], []]);
    await third.release();
  });

  // issue 31 (decision 0008): AEROSPIKE_CLUSTER_SIZE against what the nodes report; the cluster's size is the number of
  // hosts unless AEROSPIKE_CLUSTER_SIZE says otherwise
  test(`AEROSPIKE_CLUSTER_SIZE on Aerospike ${hosts}: a size whose majority the cluster holds starts, a larger is refused`, async () => {
    const c = await client();
    const nodes = Number(process.env.AEROSPIKE_CLUSTER_SIZE ?? hosts.split(',').length);
    await checkClusterSize(c, nodes, hosts);
    await checkClusterSize(c, 2 * nodes - 1, hosts);
    await expect(checkClusterSize(c, 2 * nodes, hosts)).rejects.toMatchObject({
      variable: 'AEROSPIKE_CLUSTER_SIZE',
      message: expect.stringContaining(`reports cluster_size ${nodes} `),
    });
  });

  // issue 31: index names that fit whatever the set, and the rename of an index under the old `<set>_<bin>` name
  test(`indexes on Aerospike ${hosts}/${namespace}: old-name indexes renamed in place; a 63-character set`, async () => {
    const c = await client();
    const listed = async (set: string) =>
      parseSindexList((await c.infoAny(`sindex-list:ns=${namespace}`)) as string).filter((i) => i.set === set);
    // a 24-character set: the old code created its indexes (then its job.wait failed: "Info request exceeds max.
    // length"); the old names of sets longer than 48 characters never fitted the server's 63
    const old = nextSet('ix').padEnd(24, 'x');
    for (const bin of INDEXED_BINS) {
      await c.createIntegerIndex({ ns: namespace, set: old, bin, index: legacyIndexName(old, bin) });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await listed(old)).map((i) => i.indexname).sort()).toEqual(
      INDEXED_BINS.map((b) => legacyIndexName(old, b)).sort(),
    );
    for (const set of [old, nextSet('ix').padEnd(63, 'x')]) {
      const engine = new AerospikeEngine({ client: c, namespace, set, schemaDeadlineMs: 30_000 });
      const started = Date.now();
      await engine.ensureIndexes();
      expect((await listed(set)).map((i) => [i.indexname, i.state]).sort()).toEqual(
        INDEXED_BINS.map((b) => [indexName(set, b), 'RW']).sort(),
      );
      const key = Buffer.alloc(32, 7);
      await engine.create(key, { deleteAtHeight: 5 });
      const page = await engine.queryRange({ bin: 'deleteAtHeight', min: 0, max: 10 });
      expect(page.records.map((r) => r.key)).toEqual([key]);
      console.log(`indexes of a ${set.length}-character set ready and queried in ${Date.now() - started} ms`);
      for (const bin of INDEXED_BINS) await c.indexRemove(namespace, indexName(set, bin));
    }
  }, 60_000);

  describeBatchContract(`Aerospike ${hosts}/${namespace}`, async () =>
    contractTarget(
      new AerospikeEngine({ client: await client(), namespace, set: nextSet('b') }),
      'batch-contract',
      false,
    ),
  );
}
