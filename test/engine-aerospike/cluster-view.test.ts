/**
 * The guard's cluster view on Aerospike (lib/engine/aerospike/cluster-state.ts clusterView): one info request per
 * node the client knows (cluster-stable, migrations ignored); a node that answers an error is unstable, one that does
 * not answer is unreachable.
 */
import type { Client } from 'aerospike';
import {
  CLUSTER_VIEW_REQUEST,
  clusterView,
  failedState,
  isNoAnswer,
  parseNodeView,
  parseSeedView,
  rawInfoAllowed,
  SEED_VIEW_REQUEST,
  Seeds,
} from '../../lib/engine/aerospike/cluster-state';
import { InfoSocketError, type InfoSockets } from '../../lib/engine/aerospike/info-socket';

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

describe("the deployment's seeds (decision 0009): a node the client does not know is still asked", () => {
  const answers: Record<string, string> = {
    'aerospike-1:3000': `node\tA\n${CLUSTER_VIEW_REQUEST}\tK2\n`,
    'aerospike-2:3000': `node\tB\n${CLUSTER_VIEW_REQUEST}\tERROR:7:unstable cluster\n`,
  };
  function setup(known: string[]) {
    const asked: string[] = [];
    const client = {
      getNodes: () => known.map((name, i) => ({ name, address: `10.0.0.${i + 1}:3000` })),
    } as unknown as Client;
    const sockets = {
      request: async (address: string, command: string) => {
        asked.push(`${address} ${command}`);
        if (address.startsWith('10.')) return `${command}\tK2\n`;
        const answer = answers[address];
        if (!answer) throw Object.assign(new Error('timeout'), { code: 9 });
        return answer;
      },
    } as unknown as InfoSockets;
    return { client, sockets, asked };
  }

  test('a seed answers its node id and view in one request; an ERROR is unstable', () => {
    expect(SEED_VIEW_REQUEST).toBe(`node\n${CLUSTER_VIEW_REQUEST}`);
    expect(parseSeedView('h:3000', answers['aerospike-1:3000'])).toEqual({
      id: 'A',
      view: { node: 'A', state: 'member', key: 'K2' },
    });
    expect(parseSeedView('h:3000', answers['aerospike-2:3000']).view).toMatchObject({ node: 'B', state: 'unstable' });
    expect(parseSeedView('h:3000', '').view).toMatchObject({ node: 'seed h:3000', state: 'unstable' });
  });

  test('a client that knows only the majority (A, C) still hears the orphan B through its seed; a seed of a known node is asked once', async () => {
    const seeds = new Seeds(['aerospike-1:3000', 'aerospike-2:3000', 'aerospike-3:3000']);
    const { client, sockets, asked } = setup(['A', 'C']);
    const first = await clusterView(client, sockets, seeds);
    expect(first.nodes).toEqual([
      { node: 'A', state: 'member', key: 'K2' },
      { node: 'C', state: 'member', key: 'K2' },
      { node: 'B', state: 'unstable', detail: 'ERROR:7:unstable cluster' },
      { node: 'seed aerospike-3:3000', state: 'unreachable', detail: 'timeout' },
    ]);
    expect(asked.filter((a) => a.startsWith('aerospike'))).toHaveLength(3);
    // seed 1 named node A, which the client knows: not asked again through its seed
    asked.length = 0;
    await clusterView(client, sockets, seeds);
    expect(asked.some((a) => a.startsWith('aerospike-1'))).toBe(false);
    expect(asked.filter((a) => a.startsWith('aerospike'))).toEqual([
      `aerospike-2:3000 ${SEED_VIEW_REQUEST}`,
      `aerospike-3:3000 ${SEED_VIEW_REQUEST}`,
    ]);
  });

  test('without kept sockets (TLS or login) the seeds are not asked', async () => {
    const seeds = new Seeds(['aerospike-2:3000']);
    const client = {
      getNodes: () => [{ name: 'A' }],
      infoNode: async (request: string) => `${request}\tK2\n`,
    } as unknown as Client;
    expect((await clusterView(client, undefined, seeds)).nodes).toEqual([{ node: 'A', state: 'member', key: 'K2' }]);
  });
});

test('a refused connection is a node that is down; a timeout unreachable; a server error unstable', () => {
  expect(failedState(new InfoSocketError('connect ECONNREFUSED 10.0.0.3:3000', -10, true))).toBe('down');
  expect(failedState(new InfoSocketError('timeout', 9))).toBe('unreachable');
  expect(failedState(new InfoSocketError('connection closed', -10))).toBe('unreachable');
  expect(failedState({ code: 7 })).toBe('unstable');
});
