/**
 * The start-up checks' infoAll (lib/engine/aerospike/info-all.ts) against a double of the client: the node client
 * fails the whole call when one node fails (a node lost during the start); the checks ask again until their deadline
 * instead of failing the start, and fail with the last error once it has passed. The UDF registration is sent again
 * while the server answers error=timeout (its metadata not agreed: a cluster still forming).
 */
import { checkClusterSize, checkNamespace } from '../../lib/engine/aerospike';
import { infoAllRetrying } from '../../lib/engine/aerospike/info-all';
import { registerModule } from '../../lib/engine/aerospike/schema';
import { asError, fakeClient } from './fake-client';

/** answers `good` from the `failures + 1`-th call on; before, fails as a lost node does */
function flaky<T>(failures: number, good: (command: string) => T) {
  let calls = 0;
  return (command: string) => {
    if (calls++ < failures) throw asError(-8, 'Node not found for partition / connection refused');
    return good(command);
  };
}

test('a failing call is sent again until it answers', async () => {
  const { client, callsOf } = fakeClient({ infoAll: flaky(2, () => [{ host: {}, info: 'x\ty\n' }]) });
  await expect(infoAllRetrying(client, 'x', 2000, 10)).resolves.toEqual([{ host: {}, info: 'x\ty\n' }]);
  expect(callsOf('infoAll')).toHaveLength(3);
});

test('a call that keeps failing throws its last error once the deadline has passed', async () => {
  const { client, callsOf } = fakeClient({ infoAll: flaky(1000, () => []) });
  const started = Date.now();
  await expect(infoAllRetrying(client, 'x', 200, 20)).rejects.toThrow(/Node not found/);
  expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  expect(callsOf('infoAll').length).toBeGreaterThan(2);
});

test('the namespace, cluster-size and UDF module checks pass once the lost node is dropped', async () => {
  const ns = fakeClient({
    infoAll: flaky(2, () => [{ host: {}, info: 'namespace/test\tnsup-period=120;strong-consistency=false\n' }]),
  });
  await checkNamespace(ns.client, 'test', { strongConsistency: false });
  expect(ns.callsOf('infoAll').length).toBe(3);

  const size = fakeClient({
    infoAll: flaky(1, (command: string) =>
      command === 'statistics'
        ? [{ host: {}, info: 'statistics\tcluster_size=2\n' }]
        : [{ host: {}, info: 'get-config:context=service\tmin-cluster-size=2\n' }],
    ),
  });
  await checkClusterSize(size.client, 3, 'h1:3000');

  // the server's own answer while its cluster metadata cannot be agreed (a cluster still forming): sent again
  let puts = 0;
  const forming = fakeClient({
    infoAll: () => [{ host: {}, info: `udf-list\t${puts > 2 ? 'filename=utxo_1.lua,hash=1,type=LUA' : ''}` }],
    udfRegister: () => {
      if (++puts <= 2) throw asError(100, 'error=timeout\n from 127.0.0.1:3800');
      return { wait: () => undefined };
    },
  });
  await registerModule({ client: forming.client, pollMs: 10, deadlineMs: 2000 }, 'utxo_1', '-- lua');
  expect(puts).toBe(3);
  // any other failure is not sent again
  const refused = fakeClient({
    infoAll: () => [{ host: {}, info: 'udf-list\t' }],
    udfRegister: asError(100, 'error=compile'),
  });
  await expect(
    registerModule({ client: refused.client, pollMs: 10, deadlineMs: 2000 }, 'utxo_1', '--'),
  ).rejects.toThrow(/compile/);
  expect(refused.callsOf('udfRegister')).toHaveLength(1);

  const udf = fakeClient({
    infoAll: flaky(2, () => [{ host: {}, info: 'udf-list\tfilename=utxo_1.lua,hash=1,type=LUA' }]),
  });
  await registerModule({ client: udf.client, pollMs: 10, deadlineMs: 2000 }, 'utxo_1', '-- lua');
  expect(udf.callsOf('udfRegister')).toHaveLength(0);
});
