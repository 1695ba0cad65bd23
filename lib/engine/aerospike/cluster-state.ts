/**
 * The cluster check behind the spend acknowledgement guard (SPEND_ACK_GUARD, AEROSPIKE_CLUSTER_SIZE;
 * docs/decisions/0006-partitions-on-community-edition.md): is the cluster settled, every node agreeing?
 */
import type { Client } from 'aerospike';
import type { ClusterState } from '../port';

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
