/**
 * The settings profiles the experiment compares: the cluster conf lines and client environment added to the
 * deployment's (cdk/aerospike-scripts.ts renders the deployed conf; these are applied on top of it).
 *  - baseline: the deployment as it was before the partition experiment (issue 19);
 *  - deployed: the deployment as it is now (nothing added: the conf as rendered).
 */
export type SettingsProfile = 'baseline' | 'deployed';

export interface ProfileSettings {
  conf: { service?: string[]; namespace?: string[]; heartbeat?: string[] };
  clientEnv: Record<string, string>;
}

export function clusterSettings(profile: SettingsProfile): ProfileSettings {
  if (profile === 'baseline') return { conf: {}, clientEnv: {} };
  return { conf: {}, clientEnv: {} };
}
