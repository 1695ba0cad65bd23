/** Configuration (context -> typed props, validation naming the key) and the rendered Aerospike boot script. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { renderAerospikeConf, renderUserData } from '../../cdk/aerospike-cluster';
import { standaloneContext } from '../../cdk/app';
import { defaultConfig, loadConfig, maxRecordSizeBytes } from '../../cdk/config';

const ctx = (values: Record<string, unknown>) => ({ tryGetContext: (k: string) => values[k] });

test('defaults: 3 x i4i.large, B = 20000, retention 288, dev stage', () => {
  const c = loadConfig(ctx({}));
  expect(c).toMatchObject({ stage: 'dev', natGateways: 1, maxAzs: 2 });
  expect(c.aerospike).toMatchObject({ nodeCount: 3, instanceType: 'i4i.large', namespace: 'utxo', set: 'utxos' });
  expect(c.store).toMatchObject({ utxoBatchSize: 20000, blockHeightRetention: 288, maxTxSizeInStore: 1048576 });
});

test('stages object from cdk.json, then -c keys on top (strings coerced)', () => {
  const c = loadConfig(
    ctx({
      stage: 'prod',
      stages: { prod: { aerospike: { nodeCount: 6 }, functions: { cleanup: { reservedConcurrency: 1 } } } },
      nodeCount: '4',
      externalizeAll: 'true',
      availabilityZones: 'eu-west-1a, eu-west-1b',
      region: 'eu-west-1',
      provisionedConcurrency: 'spend:3,create:1',
    }),
  );
  expect(c.aerospike.nodeCount).toBe(4);
  expect(c.aerospike.terminationProtection).toBe(true);
  expect(c.store.externalizeAll).toBe(true);
  expect(c.availabilityZones).toEqual(['eu-west-1a', 'eu-west-1b']);
  expect(c.functions.cleanup.reservedConcurrency).toBe(1);
  expect(c.functions.spend.provisionedConcurrency).toBe(3);
  expect(c.functions.create.provisionedConcurrency).toBe(1);
});

test.each([
  [{ instanceType: 't3.large' }, /instanceType.*not an x86_64 NVMe instance-store type/],
  [{ nodeCount: 'three' }, /nodeCount.*expected a number/],
  [{ maxAzs: '1' }, /maxAzs/],
  [{ natGateways: '0' }, /aerospikePackageUrl.*s3:\/\//],
  [{ logRetentionDays: '8' }, /logRetentionDays/],
  [{ provisionedConcurrency: 'nope:1' }, /provisionedConcurrency.*unknown function/],
  [{ stages: { dev: { bogus: 1 } } }, /stages\.dev\.bogus.*unknown setting/],
  [{ utxoBatchSize: '200000' }, /utxoBatchSize/],
  [{ availabilityZones: 'a,b' }, /availabilityZones.*region/],
])('invalid context %j is refused, naming the key', (values, message) => {
  expect(() => loadConfig(ctx(values))).toThrow(message);
});

test('max-record-size covers B x 68-byte slots plus the in-record tx, in whole MiB, at most 8 MiB', () => {
  const d = defaultConfig().store;
  const size = maxRecordSizeBytes(d);
  expect(size % (1024 * 1024)).toBe(0);
  expect(size).toBeGreaterThanOrEqual(d.utxoBatchSize * 68 + d.maxTxSizeInStore);
  expect(size).toBe(3 * 1024 * 1024);
  expect(() => maxRecordSizeBytes({ utxoBatchSize: 120000, maxTxSizeInStore: 1048576 })).toThrow(/8 MiB/);
});

test('the boot script puts one device line per NVMe instance-store device into aerospike.conf', () => {
  const config = defaultConfig();
  const conf = renderAerospikeConf({
    clusterName: 'c',
    seeds: ['a.zone', 'b.zone'],
    aerospike: config.aerospike,
    maxRecordSize: 3145728,
  });
  const script = renderUserData({ packageUrl: config.aerospike.packageUrl, conf });
  // run only the config-writing part, with two fake devices and a temporary /etc/aerospike
  const start = script.findIndex((l) => l.startsWith('cat > /etc/aerospike/aerospike.conf.template'));
  const end = script.findIndex((l) => l.includes('< /etc/aerospike/aerospike.conf.template'));
  const dir = mkdtempSync(path.join(tmpdir(), 'aerospike-conf-'));
  const part = script
    .slice(start, end + 1)
    .join('\n')
    .split('/etc/aerospike')
    .join(dir);
  writeFileSync(path.join(dir, 'run.sh'), `set -euo pipefail\nDEVICES="/dev/nvme1n1 /dev/nvme2n1"\n${part}\n`);
  execFileSync('bash', [path.join(dir, 'run.sh')]);
  const written = readFileSync(path.join(dir, 'aerospike.conf'), 'utf8');
  expect(written).toContain('        device /dev/nvme1n1\n        device /dev/nvme2n1\n');
  expect(written).not.toContain('@DEVICES@');
  expect(written).toContain('mesh-seed-address-port a.zone 3002');
  expect(written).toContain('replication-factor 2');
  expect(written).toContain('max-record-size 3145728');
});

test('standalone runs read cdk.json context and -c key=value arguments', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cdkjson-'));
  const file = path.join(dir, 'cdk.json');
  writeFileSync(file, JSON.stringify({ app: 'x', context: { stage: 'dev', nodeCount: 3 } }));
  expect(standaloneContext(['-c', 'stage=prod', '--context=alarmEmail=a@b.c'], file)).toEqual({
    stage: 'prod',
    nodeCount: 3,
    alarmEmail: 'a@b.c',
  });
  expect(() => standaloneContext(['-c', 'novalue'], file)).toThrow(/key=value/);
});
