/**
 * The guard's cluster view on Aerospike (lib/engine/aerospike/cluster-state.ts clusterView): one info request per
 * node the client knows, each node's key and cluster size read from `cluster-stable` answers; a node that answers
 * ERROR is unstable, one that does not answer is unreachable.
 */
import type { Client } from 'aerospike';
import { clusterView, clusterViewRequest, parseNodeView } from '../../lib/engine/aerospike/cluster-state';

/** The server's answer to clusterViewRequest for a node in a cluster of `size` with key `key` (null: orphan). */
function answer(known: number, key: string | null, size: number): string {
  return clusterViewRequest(known)
    .split('\n')
    .map((cmd) => {
      const asked = /size=(\d+)/.exec(cmd);
      const ok = key !== null && (!asked || Number(asked[1]) === size);
      return `${cmd}\t${ok ? key : key === null ? 'ERROR:5:unstable cluster' : 'ERROR:5:cluster not specified size'}`;
    })
    .join('\n');
}

test('the request asks the key and every size up to the nodes the client knows', () => {
  expect(clusterViewRequest(2).split('\n')).toEqual([
    'cluster-stable:ignore-migrations=true',
    'cluster-stable:size=1;ignore-migrations=true',
    'cluster-stable:size=2;ignore-migrations=true',
  ]);
});

test('a member names its key and size; an orphan is unstable; a size beyond the known nodes is undefined', () => {
  expect(parseNodeView('A', answer(3, 'K2', 2), 3)).toEqual({ node: 'A', state: 'member', key: 'K2', size: 2 });
  expect(parseNodeView('A', answer(3, null, 0), 3)).toMatchObject({ state: 'unstable', detail: /unstable cluster/ });
  expect(parseNodeView('A', answer(2, 'K1', 3), 2)).toEqual({ node: 'A', state: 'member', key: 'K1', size: undefined });
  expect(parseNodeView('A', 'garbage', 3)).toMatchObject({ state: 'unstable' });
});

test('every known node asked with a deadline; a node that throws is unreachable, not a failed view', async () => {
  const asked: { request: string; node: string; policy: unknown }[] = [];
  const client = {
    getNodes: () => [{ name: 'A' }, { name: 'B' }, { name: 'C' }],
    infoNode: async (request: string, node: { name: string }, policy: unknown) => {
      asked.push({ request, node: node.name, policy });
      if (node.name === 'C') throw new Error('Timeout');
      return answer(3, 'K2', 2);
    },
  } as unknown as Client;
  const v = await clusterView(client);
  expect(v.nodes).toEqual([
    { node: 'A', state: 'member', key: 'K2', size: 2 },
    { node: 'B', state: 'member', key: 'K2', size: 2 },
    { node: 'C', state: 'unreachable', detail: 'Timeout' },
  ]);
  expect(asked.map((a) => a.node)).toEqual(['A', 'B', 'C']);
  expect(asked[0].policy).toMatchObject({ timeout: 1000 });
  const none = {
    getNodes: () => {
      throw new Error('closed');
    },
  } as unknown as Client;
  await expect(clusterView(none)).resolves.toEqual({ nodes: [] });
});
