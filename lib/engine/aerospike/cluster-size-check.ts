/**
 * AEROSPIKE_CLUSTER_SIZE against the cluster, checked when the engine opens (start-up;
 * docs/decisions/0008-cluster-size-checked-at-start-up.md). The spend guard acknowledges a spend only when a majority
 * of that size agree on one cluster (lib/store/ack-guard.ts), so a size larger than the cluster makes every spend
 * answer 503 for as long as the service runs. Refused, naming the setting, when its majority is more than both the
 * largest `cluster_size` a reachable node reports and the cluster's own `min-cluster-size`: no cluster this
 * deployment has formed, or is configured to form, could ever satisfy it. A node down at start-up is not refused as
 * long as a majority is there (the guard tolerates it), and neither is a cluster below its majority whose
 * min-cluster-size is that majority (a transient outage of a deployment configured alike, not a wrong setting).
 */
import type { Client } from 'aerospike';
import { ConfigError } from '../../domain/config';
import { withDeadline } from '../deadline';
import { infoAllRetrying } from './info-all';
import { parseNamespaceInfo } from './namespace-check';

export const CLUSTER_SIZE_CHECK_DEADLINE_MS = 10_000;

/** What the reachable nodes report: the largest `cluster_size` and the largest `min-cluster-size` (0: unknown). */
export interface ClusterSizeFacts {
  nodes: number;
  clusterSize: number;
  minClusterSize: number;
}

const numberOf = (facts: Map<string, string>, key: string): number => {
  const n = Number(facts.get(key));
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
};

/** Why `configured` (AEROSPIKE_CLUSTER_SIZE) cannot work with the cluster seen, or undefined. 0 is never refused. */
export function clusterSizeProblem(configured: number, seen: ClusterSizeFacts, hosts: string): ConfigError | undefined {
  if (configured === 0) return undefined;
  const majority = Math.floor(configured / 2) + 1;
  if (majority <= Math.max(seen.clusterSize, seen.minClusterSize)) return undefined;
  return new ConfigError(
    'AEROSPIKE_CLUSTER_SIZE',
    `${configured} nodes, so a spend is acknowledged only when a majority of ${majority} agree on one cluster, but ` +
      `the cluster at ${hosts} reports cluster_size ${seen.clusterSize} (largest of ${seen.nodes} node(s) answering) ` +
      `and min-cluster-size ${seen.minClusterSize}: every spend would answer 503. Set it to the number of nodes the ` +
      'cluster has (the CDK sets nodeCount), or 0',
  );
}

/** Asks every node the client knows for its cluster size and min-cluster-size; throws the problem (a ConfigError). */
export async function checkClusterSize(
  client: Client,
  configured: number,
  hosts: string,
  deadlineMs = CLUSTER_SIZE_CHECK_DEADLINE_MS,
): Promise<void> {
  if (configured === 0) return;
  const ask = (command: string) =>
    withDeadline(
      infoAllRetrying(client, command, deadlineMs),
      deadlineMs,
      `aerospike read the cluster size (${command})`,
    );
  const [stats, service] = await Promise.all([ask('statistics'), ask('get-config:context=service')]);
  const largest = (answers: { info?: string }[], key: string) =>
    Math.max(0, ...answers.map((a) => numberOf(parseNamespaceInfo(a.info ?? ''), key)));
  const seen: ClusterSizeFacts = {
    nodes: stats.filter((a) => a.info).length,
    clusterSize: largest(stats, 'cluster_size'),
    minClusterSize: largest(service, 'min-cluster-size'),
  };
  const problem = clusterSizeProblem(configured, seen, hosts);
  if (problem) throw problem;
}
