/**
 * The settings profiles the experiment compares: cluster conf lines and client environment applied on top of the
 * deployment's (cdk/aerospike-scripts.ts renders the deployed conf; the store reads its environment with loadConfig).
 *  - baseline: the deployment as it was before the partition experiment (issue 19): no acknowledgement guard;
 *  - settled: the guard of decision 0006 (SPEND_ACK_GUARD=settled: whole cluster, no migration pending);
 *  - deployed: the deployment as it is now (the conf as rendered; the functions' environment as the CDK sets it:
 *    SPEND_ACK_GUARD=refuse, decision 0007), with the node watchdog the harness always runs.
 */
import { defaultConfig } from '../../cdk/config';
import type { UtxoStoreConfig } from '../../cdk/config';

export type SettingsProfile = 'baseline' | 'settled' | 'deployed';

export interface ProfileSettings {
  conf: { service?: string[]; namespace?: string[]; heartbeat?: string[] };
  clientEnv: Record<string, string>;
}

export function clusterSettings(profile: SettingsProfile, nodeCount: number): ProfileSettings {
  if (profile === 'baseline') return { conf: {}, clientEnv: { SPEND_ACK_GUARD: 'off' } };
  if (profile === 'settled')
    return { conf: {}, clientEnv: { SPEND_ACK_GUARD: 'settled', AEROSPIKE_CLUSTER_SIZE: String(nodeCount) } };
  return { conf: {}, clientEnv: { SPEND_ACK_GUARD: 'refuse', AEROSPIKE_CLUSTER_SIZE: String(nodeCount) } };
}

/**
 * The deployment the harness runs (cdk/config.ts defaultConfig), with `--rf`: the replication factor (1 to the node
 * count; 2 by default, not the deployment's 3: issue 27's figures are stated on RF 2, the case in which a wiped or
 * restarted node leaves one copy of some partitions; `min-cluster-size` stays the majority of the nodes).
 */
export function harnessDeployment(rf = 2): UtxoStoreConfig {
  const d = defaultConfig('partition');
  if (!Number.isInteger(rf) || rf < 1 || rf > d.aerospike.nodeCount)
    throw new Error(`--rf: expected an integer from 1 to ${d.aerospike.nodeCount} (the node count), got ${rf}`);
  return { ...d, aerospike: { ...d.aerospike, replicationFactor: rf } };
}
