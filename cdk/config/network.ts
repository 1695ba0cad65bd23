/** Configuration area: the stage, account/region and the VPC. */
import { ConfigurationError, int, type ContextSpec } from './errors';

export interface NetworkSettings {
  /** explicit account/region; unset -> an environment-agnostic stack (deploys to the CLI's account/region) */
  account?: string;
  region?: string;
  /** explicit AZ names (requires region); unset -> the first `maxAzs` AZs of the region (Fn::GetAZs) */
  availabilityZones?: string[];
  vpcCidr: string;
  /** AZs used (>= 2) */
  maxAzs: number;
  /** NAT gateways for the Aerospike nodes' egress (package download, OS updates); 0 -> nodes in isolated subnets */
  natGateways: number;
}

export function networkDefaults(): NetworkSettings {
  return { vpcCidr: '10.40.0.0/16', maxAzs: 3, natGateways: 1 };
}

export const NETWORK_CONTEXT: ContextSpec = {
  keys: {
    account: 'account',
    region: 'region',
    availabilityZones: 'availabilityZones',
    vpcCidr: 'vpcCidr',
    maxAzs: 'maxAzs',
    natGateways: 'natGateways',
  },
  optional: ['account', 'region', 'availabilityZones'],
  listPaths: ['availabilityZones'],
};

export function validateStage(stage: string): void {
  if (!/^[a-z][a-z0-9-]{0,20}$/.test(stage)) throw new ConfigurationError('stage', 'expected [a-z][a-z0-9-]{0,20}');
}

export function validateNetwork(c: NetworkSettings): void {
  int('maxAzs', c.maxAzs, 2, 6);
  int('natGateways', c.natGateways, 0, c.maxAzs);
  if (c.availabilityZones !== undefined) {
    if (!c.region) throw new ConfigurationError('availabilityZones', 'needs an explicit region');
    if (c.availabilityZones.length < 2) throw new ConfigurationError('availabilityZones', 'needs at least 2 AZs');
  }
  if (!/^\d+\.\d+\.\d+\.\d+\/(1[6-9]|2[0-2])$/.test(c.vpcCidr))
    throw new ConfigurationError('vpcCidr', 'expected an IPv4 CIDR from /16 to /22');
}
