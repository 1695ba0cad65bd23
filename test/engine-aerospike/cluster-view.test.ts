/**
 * The guard's cluster view on Aerospike (lib/engine/aerospike/cluster-state.ts clusterView): one info request per
 * node the client knows (cluster-stable, migrations ignored); a node that answers an error is unstable, one that does
 * not answer is unreachable.
 */
import type { Client } from 'aerospike';
import {
  CLUSTER_VIEW_REQUEST,
  clusterView,
  isNoAnswer,
  parseNodeView,
  rawInfoAllowed,
} from '../../lib/engine/aerospike/cluster-state';
import type { InfoSockets } from '../../lib/engine/aerospike/info-socket';

test('a member names its key; an orphan (ERROR) or an empty answer is unstable', () => {
  expect(CLUSTER_VIEW_REQUEST).toBe('cluster-stable:ignore-migrations=true');
  expect(parseNodeView('A', 'cluster-stable:ignore-migrations=true\tDFB49E80A852\n')).toEqual({
    node: 'A',
    state: 'member',
    key: 'DFB49E80A852',
  });
  expect(parseNodeView('A', 'DFB49E80A852')).toMatchObject({ state: 'member', key: 'DFB49E80A852' });
  expect(parseNodeView('A', 'cluster-stable:ignore-migrations=true\tERROR:7:unstable cluster')).toMatchObject({
    state: 'unstable',
  });
  expect(parseNodeView('A', '')).toMatchObject({ state: 'unstable' });
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
      return `${request}\tK2\n`;
    },
  } as unknown as Client;
  const v = await clusterView(client);
  expect(v.nodes).toEqual([
    { node: 'A', state: 'member', key: 'K2' },
    { node: 'B', state: 'member', key: 'K2' },
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

test('over kept sockets when given: each node at its address; the client is not asked', async () => {
  const asked: string[] = [];
  const client = {
    getNodes: () => [
      { name: 'A', address: '10.0.0.1:3000' },
      { name: 'B', address: '10.0.0.2:3000' },
    ],
    infoNode: async () => {
      throw new Error('not used');
    },
  } as unknown as Client;
  const sockets = {
    request: async (address: string, command: string, timeout: number) => {
      asked.push(`${address} ${command} ${timeout}`);
      if (address.startsWith('10.0.0.2')) throw Object.assign(new Error('timeout'), { code: 9 });
      return `${command}\tK1\n`;
    },
  } as unknown as InfoSockets;
  expect((await clusterView(client, sockets)).nodes).toEqual([
    { node: 'A', state: 'member', key: 'K1' },
    { node: 'B', state: 'unreachable', detail: 'timeout' },
  ]);
  expect(asked).toEqual([`10.0.0.1:3000 ${CLUSTER_VIEW_REQUEST} 1000`, `10.0.0.2:3000 ${CLUSTER_VIEW_REQUEST} 1000`]);
  expect(rawInfoAllowed({ config: {} } as unknown as Client)).toBe(true);
  expect(rawInfoAllowed({ config: { user: 'u' } } as unknown as Client)).toBe(false);
  expect(rawInfoAllowed({ config: { tls: {} } } as unknown as Client)).toBe(false);
});
