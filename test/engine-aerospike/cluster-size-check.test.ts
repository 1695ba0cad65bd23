/**
 * AEROSPIKE_CLUSTER_SIZE against the cluster at start-up (lib/engine/aerospike/cluster-size-check.ts,
 * docs/decisions/0008-cluster-size-checked-at-start-up.md), against a double of the client. Regression of the
 * settings check on a 2-node CE 8.1.2 cluster (issue 31): AEROSPIKE_CLUSTER_SIZE=7 started, and then every spend
 * answered 503 (the guard wants 4 nodes agreeing).
 */
import { ConfigError } from '../../lib/domain/config';
import { checkClusterSize, clusterSizeProblem } from '../../lib/engine/aerospike';
import { fakeClient } from './fake-client';

/** A cluster whose reachable nodes report `sizes` (cluster_size each) and `min-cluster-size` `min`. */
function cluster(sizes: number[], min = 1) {
  return fakeClient({
    infoAll: (command: string) =>
      command === 'statistics'
        ? sizes.map((n) => ({ host: {}, info: `statistics\tcluster_size=${n};cluster_key=ABC;uptime=10\n` }))
        : sizes.map(() => ({
            host: {},
            info: `get-config:context=service\tmin-cluster-size=${min};proto-fd-max=15000\n`,
          })),
  });
}

const refusal = async (sizes: number[], configured: number, min = 1) =>
  checkClusterSize(cluster(sizes, min).client, configured, 'h1:3000,h2:3000').then(
    () => undefined,
    (e: unknown) => e,
  );

test('a size larger than the cluster is refused at start-up naming AEROSPIKE_CLUSTER_SIZE and what was seen', async () => {
  const err = await refusal([2, 2], 7);
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).variable).toBe('AEROSPIKE_CLUSTER_SIZE');
  expect((err as Error).message).toBe(
    'AEROSPIKE_CLUSTER_SIZE: 7 nodes, so a spend is acknowledged only when a majority of 4 agree on one cluster, but ' +
      'the cluster at h1:3000,h2:3000 reports cluster_size 2 (largest of 2 node(s) answering) and min-cluster-size 1: ' +
      'every spend would answer 503. Set it to the number of nodes the cluster has (the CDK sets nodeCount), or 0',
  );
  expect(await refusal([2, 2], 4)).toBeInstanceOf(ConfigError);
  expect(await refusal([2, 2], 8)).toBeInstanceOf(ConfigError);
});

test('a size whose majority the cluster holds starts: the whole cluster, or a node down at start-up', async () => {
  for (const configured of [1, 2, 3]) expect(await refusal([2, 2], configured)).toBeUndefined();
  // 3 nodes configured, one of them down: the other two report cluster_size 2, a majority
  expect(await refusal([2, 2], 3)).toBeUndefined();
  // 5 configured, 2 down
  expect(await refusal([3, 3, 3], 5)).toBeUndefined();
});

test('a cluster below its majority whose min-cluster-size is that majority starts (an outage, not a setting)', async () => {
  // 5 nodes deployed with min-cluster-size 3 (cdk minClusterSize), 3 of them down: the two left report 2
  expect(await refusal([2, 2], 5, 3)).toBeUndefined();
  expect(await refusal([2, 2], 5, 2)).toBeInstanceOf(ConfigError);
});

test('0 is not checked; the nodes are asked with deadlines', async () => {
  const silent = fakeClient({ infoAll: () => new Promise(() => undefined) });
  await checkClusterSize(silent.client, 0, 'h1');
  expect(silent.callsOf('infoAll')).toHaveLength(0);
  await expect(checkClusterSize(silent.client, 3, 'h1', 30)).rejects.toMatchObject({
    name: 'DeadlineError',
    operation: 'aerospike read the cluster size (statistics)',
  });
  const { client, callsOf } = cluster([3, 3, 3]);
  await checkClusterSize(client, 3, 'h1');
  expect(callsOf('infoAll').map((c) => c.args[0])).toEqual(['statistics', 'get-config:context=service']);
});

test('clusterSizeProblem: nodes that answer nothing count as size 0', () => {
  expect(clusterSizeProblem(3, { nodes: 0, clusterSize: 0, minClusterSize: 0 }, 'h1')).toBeInstanceOf(ConfigError);
  expect(clusterSizeProblem(0, { nodes: 0, clusterSize: 0, minClusterSize: 0 }, 'h1')).toBeUndefined();
});
