/**
 * The guard's cluster view on Aerospike (lib/engine/aerospike/cluster-state.ts clusterView): one info request per
 * node the client knows (cluster-stable and statistics); a node that answers an error is unstable, one that does not
 * answer is unreachable.
 */
import type { Client } from 'aerospike';
import { CLUSTER_VIEW_REQUEST, clusterView, isNoAnswer, parseNodeView } from '../../lib/engine/aerospike/cluster-state';

const stats = (key: string, size: number, member = true) =>
  `statistics\tfailed_best_practices=false;cluster_size=${size};cluster_key=${key};cluster_generation=5;cluster_integrity=true;cluster_is_member=${member};uptime=9`;
const answer = (key: string, size: number, member = true) =>
  `cluster-stable:ignore-migrations=true\t${key}\n${stats(key, size, member)}\n`;

test('a member names its key and size; an orphan or a node not a member of the key it names is unstable', () => {
  expect(CLUSTER_VIEW_REQUEST).toBe('cluster-stable:ignore-migrations=true\nstatistics');
  expect(parseNodeView('A', answer('K2', 2))).toEqual({ node: 'A', state: 'member', key: 'K2', size: 2 });
  expect(parseNodeView('A', answer('K2', 2, false))).toMatchObject({
    state: 'unstable',
    detail: /cluster_is_member=false/,
  });
  expect(parseNodeView('A', `cluster-stable:ignore-migrations=true\tK2\n${stats('K1', 3)}`)).toMatchObject({
    state: 'unstable',
  });
  expect(parseNodeView('A', 'cluster-stable:ignore-migrations=true\tERROR:7:unstable cluster')).toMatchObject({
    state: 'unstable',
  });
  expect(parseNodeView('A', 'garbage')).toMatchObject({ state: 'unstable' });
  expect(
    parseNodeView('A', `cluster-stable:ignore-migrations=true\tK1\nstatistics\tcluster_key=K1;cluster_is_member=true`),
  ).toEqual({
    node: 'A',
    state: 'member',
    key: 'K1',
    size: undefined,
  });
});

test('no answer is a timeout or a client-side error; a server error (an orphan answers 7) is an answer', () => {
  expect(isNoAnswer({ code: 9 })).toBe(true);
  expect(isNoAnswer({ code: -10 })).toBe(true);
  expect(isNoAnswer({ code: -14 })).toBe(true);
  expect(isNoAnswer({ code: 7 })).toBe(false);
  expect(isNoAnswer(new Error('no code'))).toBe(false);
});

test('every known node asked with a deadline; a silent node is unreachable, an erroring one unstable', async () => {
  const asked: { request: string; node: string; policy: unknown }[] = [];
  const client = {
    getNodes: () => [{ name: 'A' }, { name: 'B' }, { name: 'C' }, { name: 'D' }],
    infoNode: async (request: string, node: { name: string }, policy: unknown) => {
      asked.push({ request, node: node.name, policy });
      if (node.name === 'C') throw Object.assign(new Error('Timeout'), { code: 9 });
      if (node.name === 'D') throw Object.assign(new Error('unstable cluster\ncluster-stable from D'), { code: 7 });
      return answer('K2', 2);
    },
  } as unknown as Client;
  const v = await clusterView(client);
  expect(v.nodes).toEqual([
    { node: 'A', state: 'member', key: 'K2', size: 2 },
    { node: 'B', state: 'member', key: 'K2', size: 2 },
    { node: 'C', state: 'unreachable', detail: 'Timeout' },
    { node: 'D', state: 'unstable', detail: 'unstable cluster' },
  ]);
  expect(asked.map((a) => [a.node, a.request])).toEqual(['A', 'B', 'C', 'D'].map((n) => [n, CLUSTER_VIEW_REQUEST]));
  expect(asked[0].policy).toMatchObject({ timeout: 1000 });
  const none = {
    getNodes: () => {
      throw new Error('closed');
    },
  } as unknown as Client;
  await expect(clusterView(none)).resolves.toEqual({ nodes: [] });
});
