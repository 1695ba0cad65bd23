/**
 * The cluster check behind the spend acknowledgement guard (SPEND_ACK_GUARD, AEROSPIKE_CLUSTER_SIZE;
 * docs/decisions/0006-partitions-on-community-edition.md): is the cluster settled, every node agreeing?
 */
import type { Client } from 'aerospike';
import type { ClusterState, ClusterView, NodeView } from '../port';
import type { InfoSockets } from './info-socket';

/** ms a cluster-state check waits for the nodes' answers (a node that does not answer in time: unstable) */
export const CLUSTER_STATE_TIMEOUT_MS = 1000;

/** Kept info sockets carry the guard's view unless the client talks TLS or logs in (the raw protocol does neither). */
export function rawInfoAllowed(client: Client): boolean {
  const config = (client as unknown as { config?: { user?: unknown; tls?: unknown } }).config;
  return !config?.user && !config?.tls;
}

/**
 * `cluster-stable` on every node the client knows (aerospike.com/docs/database/reference/info, cluster-stable:
 * the cluster key when the node's cluster has `size` nodes, all agree and, with ignore-migrations=false, no
 * migration is pending; an ERROR otherwise). Stable when every node answers the same key. A node cut off from the
 * others, but still reachable by the client, answers another key or an error: unstable.
 */
export async function clusterState(client: Client, expectedSize?: number): Promise<ClusterState> {
  const command = `cluster-stable:${expectedSize ? `size=${expectedSize};` : ''}ignore-migrations=false`;
  let answers: { host?: unknown; info?: string; error?: unknown }[];
  try {
    answers = await client.infoAll(command, { timeout: CLUSTER_STATE_TIMEOUT_MS } as never);
  } catch (err) {
    return { stable: false, detail: `cluster-stable: ${err instanceof Error ? err.message : String(err)}` };
  }
  const keys = answers.map((a) => (a.error ? 'ERROR' : (a.info ?? '').split('\t')[1]?.trim() || 'ERROR'));
  const stable = keys.length > 0 && keys.every((k) => !k.startsWith('ERROR') && k === keys[0]);
  return { stable, detail: `cluster-stable on ${keys.length} node(s): ${keys.join(', ')}` };
}

/**
 * One node's view: `cluster-stable:ignore-migrations=true` answers the cluster key unless the node is an orphan or
 * between two clusters (the server then disallows migrations: thr_info.c cmd_cluster_stable, exchange.c
 * exchange_orphaned_handle), and then the request fails with the server's error (7, "unstable cluster").
 */
export const CLUSTER_VIEW_REQUEST = 'cluster-stable:ignore-migrations=true';

/** One node's answer to CLUSTER_VIEW_REQUEST (the client returns `<command>\t<answer>`). */
export function parseNodeView(node: string, response: string): NodeView {
  const tab = response.indexOf('\t');
  const key = (tab >= 0 ? response.slice(tab + 1) : response).trim();
  if (key === '' || key.startsWith('ERROR') || /\s/.test(key))
    return { node, state: 'unstable', detail: key || 'no cluster-stable answer' };
  return { node, state: 'member', key };
}

/**
 * Whether a failed request means the node did not answer (a timeout, a client-side connection error: negative codes)
 * rather than answered an error (an orphan's cluster-stable ERROR, code 7). Only a node that did not answer may be
 * tolerated by the guard; anything else counts as unstable.
 */
export function isNoAnswer(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && (code < 0 || code === 9);
}

/** The state of a node whose request failed: down (connection refused), unreachable (no answer) or unstable. */
export function failedState(err: unknown): 'down' | 'unreachable' | 'unstable' {
  if ((err as { refused?: unknown } | null)?.refused === true) return 'down';
  return isNoAnswer(err) ? 'unreachable' : 'unstable';
}

/** A seed's request: its node id and its view in one round trip (the info protocol answers each line in order). */
export const SEED_VIEW_REQUEST = `node\n${CLUSTER_VIEW_REQUEST}`;

/** A seed's answer to SEED_VIEW_REQUEST: its node id (when it said it) and its view, named by the id. */
export function parseSeedView(address: string, response: string): { id?: string; view: NodeView } {
  let id: string | undefined;
  let stable = '';
  for (const line of response.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const name = line.slice(0, tab);
    if (name === 'node') id = line.slice(tab + 1).trim() || undefined;
    else if (name === CLUSTER_VIEW_REQUEST) stable = line.slice(tab + 1);
  }
  return { ...(id ? { id } : {}), view: parseNodeView(id ?? `seed ${address}`, stable) };
}

/**
 * The deployment's nodes as the client was configured with them (AEROSPIKE_HOSTS: every node, in the CDK's
 * connection string), with the node id each answered last. A client that started while a node was outside the
 * majority discovers only the majority's members (their peer lists name the committed succession): the seeds are how
 * the guard still asks the node it does not know (decision 0009).
 */
export class Seeds {
  private readonly ids = new Map<string, string>();
  constructor(readonly addresses: readonly string[]) {}
  idOf(address: string): string | undefined {
    return this.ids.get(address);
  }
  answered(address: string, id: string): void {
    this.ids.set(address, id);
  }
}

/**
 * The guard's view (SPEND_ACK_GUARD=refuse, lib/store/ack-guard.ts): every node the client knows, and every seed of
 * the deployment that is not one of them (a seed whose node id is a known node's is not asked again), asked at once,
 * each with its own deadline; a node that does not answer is `unreachable`, never an error of the whole view. Over
 * the kept `sockets` when given (info-socket.ts), else through the client (the seeds then are not asked: only a
 * client without TLS or login has the raw sockets, which Community Edition always is).
 */
export function clusterView(client: Client, sockets?: InfoSockets, seeds?: Seeds): Promise<ClusterView> {
  let nodes: { name: string; address?: string }[];
  try {
    nodes = client.getNodes();
  } catch {
    return Promise.resolve({ nodes: [] });
  }
  const asked: Promise<NodeView | undefined>[] = nodes.map((n) => nodeView(client, n, sockets));
  if (sockets && seeds) {
    const known = new Set(nodes.map((n) => n.name));
    const addresses = new Set(nodes.map((n) => n.address));
    for (const address of seeds.addresses) {
      const id = seeds.idOf(address);
      if (addresses.has(address) || (id !== undefined && known.has(id))) continue;
      asked.push(seedView(address, id, sockets, seeds, known));
    }
  }
  return Promise.all(asked).then((views) => ({ nodes: views.filter((v): v is NodeView => v !== undefined) }));
}

/** A seed asked for its id and view; undefined when it turns out to be a node the client knows (asked already). */
function seedView(
  address: string,
  lastId: string | undefined,
  sockets: InfoSockets,
  seeds: Seeds,
  known: Set<string>,
): Promise<NodeView | undefined> {
  return sockets.request(address, SEED_VIEW_REQUEST, CLUSTER_STATE_TIMEOUT_MS).then(
    (response) => {
      const { id, view } = parseSeedView(address, response);
      if (id === undefined) return view;
      seeds.answered(address, id);
      return known.has(id) ? undefined : view;
    },
    (err: unknown): NodeView => {
      const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
      return { node: lastId ?? `seed ${address}`, state: failedState(err), detail };
    },
  );
}

/** One node asked (no async frame: the guard's only cost should be the round trip). */
function nodeView(client: Client, n: { name: string; address?: string }, sockets?: InfoSockets): Promise<NodeView> {
  const answered = (response: unknown): NodeView => parseNodeView(n.name, String(response));
  const failed = (err: unknown): NodeView => {
    const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { node: n.name, state: failedState(err), detail };
  };
  try {
    const response =
      sockets && n.address
        ? sockets.request(n.address, CLUSTER_VIEW_REQUEST, CLUSTER_STATE_TIMEOUT_MS)
        : client.infoNode(CLUSTER_VIEW_REQUEST, n, { timeout: CLUSTER_STATE_TIMEOUT_MS } as never);
    return Promise.resolve(response).then(answered, failed);
  } catch (err) {
    return Promise.resolve(failed(err));
  }
}
