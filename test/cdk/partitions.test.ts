/**
 * The partition settings (docs/decisions/0006-partitions-on-community-edition.md, measured by `npm run partition`,
 * docs/reliability.md), pinned in the synthesized templates: the Community Edition deployment (default) and the
 * Enterprise path (`-c aerospikeStrongConsistency=true`).
 */
import { execFileSync } from 'child_process';
import { renderBootstrap } from '../../cdk/aerospike-scripts';
import type { Pins } from '../../cdk/node-pins';
import { appFunctions, resourcesOf, synth, type Synth } from './helpers';

const PREFIX = '/bsv-utxo-store/dev/aerospike';

let ce: Synth;
let ee: Synth;
beforeAll(() => {
  ce = synth();
  ee = synth({
    aerospikeStrongConsistency: 'true',
    aerospikePackageUrl: 'https://example.com/aerospike-server-enterprise_8.1.2.0_tools_amzn2023_x86_64.tgz',
  });
});

function param(x: Synth, name: string): string {
  const p = Object.values(resourcesOf(x.clusterTemplate, 'AWS::SSM::Parameter')).find(
    (r) => r.Properties!.Name === name,
  );
  if (!p) throw new Error(`no SSM parameter ${name}`);
  return p.Properties!.Value as string;
}

function envs(x: Synth): Record<string, string>[] {
  return Object.values(appFunctions(x.template)).map(
    (f) => (f.Properties!.Environment as { Variables: Record<string, string> }).Variables,
  );
}

function nodeStatements(x: Synth): Record<string, unknown>[] {
  return Object.values(resourcesOf(x.clusterTemplate, 'AWS::IAM::Policy')).flatMap(
    (p) => (p.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
  );
}

describe('Community Edition (default): what narrows the partition window', () => {
  test('conf: a majority min-cluster-size, RF 3, heartbeat 150 ms x 20, generation conflict resolution, AP', () => {
    const conf = param(ce, `${PREFIX}/conf`);
    expect(conf).toMatch(/^\s+min-cluster-size 2$/m);
    expect(conf).toMatch(/^\s+replication-factor 3$/m);
    expect(conf).toMatch(/^\s+interval 150$/m);
    expect(conf).toMatch(/^\s+timeout 20$/m);
    expect(conf).toMatch(/^\s+conflict-resolution-policy generation$/m);
    expect(conf).not.toContain('strong-consistency');
    expect(conf).not.toContain('feature-key-file');
  });

  test('every function: the acknowledgement guard refuses, against a whole cluster of nodeCount; AP reads', () => {
    for (const env of envs(ce)) {
      expect(env).toMatchObject({
        SPEND_ACK_GUARD: 'refuse',
        AEROSPIKE_CLUSTER_SIZE: '3',
        AEROSPIKE_STRONG_CONSISTENCY: 'false',
      });
    }
    expect(envs(synth({ nodeCount: '5', replicationFactor: '3' }))[0].AEROSPIKE_CLUSTER_SIZE).toBe('5');
    expect(envs(synth({ spendAckGuard: 'off' }))[0].SPEND_ACK_GUARD).toBe('off');
  });

  test('the bootstrap sets no roster and reads no feature key', () => {
    const bootstrap = param(ce, `${PREFIX}/bootstrap`);
    expect(bootstrap).not.toContain('roster-set');
    expect(bootstrap).not.toContain('feature-key');
    expect(nodeStatements(ce).some((st) => st.Sid === 'FeatureKey')).toBe(false);
  });

  test('a bad guard value is refused at synth, naming the key', () => {
    expect(() => synth({ spendAckGuard: 'sometimes' })).toThrow(/spendAckGuard/);
    expect(() => synth({ aerospikeStrongConsistency: 'perhaps' })).toThrow(/aerospikeStrongConsistency/);
  });
});

describe('Enterprise path (aerospike.strongConsistency): one setting', () => {
  test('conf: the namespace in strong-consistency mode, the feature key file; min-cluster-size and heartbeat kept', () => {
    const conf = param(ee, `${PREFIX}/conf`);
    expect(conf).toMatch(/^\s+strong-consistency true$/m);
    expect(conf).toMatch(/^\s+feature-key-file \/etc\/aerospike\/features\.conf$/m);
    expect(conf).not.toContain('conflict-resolution-policy');
    expect(conf).toMatch(/^\s+min-cluster-size 2$/m);
    expect(conf).toMatch(/^\s+timeout 20$/m);
  });

  test('the bootstrap fetches the feature key and the last node sets the roster to the observed nodes', () => {
    const bootstrap = param(ee, `${PREFIX}/bootstrap`);
    expect(bootstrap).toContain(`--with-decryption --name '${PREFIX}/feature-key'`);
    expect(bootstrap).toContain('if [ "$INDEX" = "3" ]; then');
    expect(bootstrap).toContain('roster:namespace=utxo');
    expect(bootstrap).toContain('asinfo -v "roster-set:namespace=utxo;nodes=$observed"');
    expect(bootstrap).toContain("asinfo -v 'recluster:'");
    // written before the first start (apply-config writes the conf that names it)
    expect(bootstrap).toContain('chmod 600 /etc/aerospike/features.conf\n/usr/local/sbin/aerospike-apply-config\n');
    const sid = nodeStatements(ee).find((st) => st.Sid === 'FeatureKey');
    expect(JSON.stringify(sid?.Resource)).toContain('parameter/bsv-utxo-store/dev/aerospike/feature-key');
  });

  test('every function: linearizable reads; the guard off (the engine refuses what it cannot make durable)', () => {
    for (const env of envs(ee)) {
      expect(env).toMatchObject({ AEROSPIKE_STRONG_CONSISTENCY: 'true', SPEND_ACK_GUARD: 'off' });
    }
  });
});

test('the roster step of the bootstrap runs as written (bash, stub asinfo)', () => {
  const script = renderBootstrap({
    prefix: PREFIX,
    logGroupName: 'g',
    strongConsistency: { namespace: 'utxo', nodeCount: 3 },
    pins: { stackName: 'S', logicalIds: {} as Pins['logicalIds'] },
  });
  const roster = script.slice(script.indexOf('if [ "$INDEX" = "3" ]'));
  const stub = [
    'asinfo() {',
    '  case "$2" in',
    "    statistics) echo 'cluster_size=3;cluster_key=X' ;;",
    "    roster:namespace=utxo) echo 'roster=null:pending_roster=null:observed_nodes=BB9A,BB9B,BB9C' ;;",
    '    *) echo "CALLED $2" ;;',
    '  esac',
    '}',
    'INDEX=3',
  ].join('\n');
  const out = execFileSync('bash', ['-c', `${stub}\n${roster}`], { encoding: 'utf8' });
  expect(out).toContain('CALLED roster-set:namespace=utxo;nodes=BB9A,BB9B,BB9C');
  expect(out).toContain('CALLED recluster:');
});
