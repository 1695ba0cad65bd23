/**
 * The cluster check behind the spend acknowledgement guard (SPEND_ACK_GUARD, AEROSPIKE_CLUSTER_SIZE;
 * docs/decisions/0006-partitions-on-community-edition.md): is the cluster settled, every node agreeing?
 */
import type { Client } from 'aerospike';
import type { ClusterState, ClusterView, NodeView } from '../port';

/** ms a cluster-state check waits for the nodes' answers (a node that does not answer in time: unstable) */
export const CLUSTER_STATE_TIMEOUT_MS = 1000;

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

/** The commands of one node's view: its key when it is a settled member, and its cluster size as the size asked. */
export function clusterViewRequest(knownNodes: number): string {
  const sizes = Array.from({ length: Math.max(1, knownNodes) }, (_, i) => i + 1);
  return ['cluster-stable:ignore-migrations=true', ...sizes.map((k) => sizeCommand(k))].join('\n');
}

const sizeCommand = (k: number) => `cluster-stable:size=${k};ignore-migrations=true`;

/**
 * One node's answer to clusterViewRequest. `cluster-stable` with ignore-migrations=true answers the cluster key
 * unless the node is an orphan or between two clusters (the server then disallows migrations: thr_info.c
 * cmd_cluster_stable, exchange.c exchange_orphaned_handle): ERROR otherwise; with size=k it answers the key only
 * when the node's cluster has k nodes.
 */
export function parseNodeView(node: string, response: string, knownNodes: number): NodeView {
  const answers = new Map<string, string>();
  for (const line of response.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab > 0) answers.set(line.slice(0, tab), line.slice(tab + 1).trim());
  }
  const key = answers.get('cluster-stable:ignore-migrations=true');
  if (key === undefined)
    return { node, state: 'unstable', detail: `no cluster-stable answer (${response.slice(0, 80)})` };
  if (key === '' || key.startsWith('ERROR')) return { node, state: 'unstable', detail: key || 'empty answer' };
  let size: number | undefined;
  for (let k = 1; k <= Math.max(1, knownNodes); k++) if (answers.get(sizeCommand(k)) === key) size = k;
  return { node, state: 'member', key, size };
}

/**
 * The guard's view (SPEND_ACK_GUARD=refuse, lib/store/ack-guard.ts): every node the client knows asked at once,
 * each with its own deadline; a node that does not answer is `unreachable`, never an error of the whole view.
 */
export async function clusterView(client: Client): Promise<ClusterView> {
  let nodes: { name: string }[];
  try {
    nodes = client.getNodes();
  } catch {
    return { nodes: [] };
  }
  const request = clusterViewRequest(nodes.length);
  const views = await Promise.all(
    nodes.map(async (n): Promise<NodeView> => {
      try {
        const response = await client.infoNode(request, n, { timeout: CLUSTER_STATE_TIMEOUT_MS } as never);
        return parseNodeView(n.name, String(response), nodes.length);
      } catch (err) {
        return { node: n.name, state: 'unreachable', detail: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
  return { nodes: views };
}
