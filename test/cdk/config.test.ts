/** Configuration (context -> typed props, validation naming the key). The node scripts: node-scripts.test.ts. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { standaloneContext } from '../../cdk/app';
import {
  connectionBudget,
  defaultConfig,
  effectiveReplication,
  loadConfig,
  maxRecordSizeBytes,
  minClusterSize,
} from '../../cdk/config';

const PROD_ASSUMERS = {
  validator: ['arn:aws:iam::123456789012:role/validator-*'],
  blockValidation: ['arn:aws:iam::123456789012:role/block-validation'],
  admin: ['arn:aws:iam::123456789012:role/ops-admin'],
};
const ctx = (values: Record<string, unknown>) => ({ tryGetContext: (k: string) => values[k] });

test('defaults: 3 x i4i.large in 3 AZs, replication 3, B = 20000, retention 288, dev stage', () => {
  const c = loadConfig(ctx({}));
  expect(c).toMatchObject({ stage: 'dev', natGateways: 1, maxAzs: 3 });
  expect(c.aerospike).toMatchObject({ replicationFactor: 3, terminationProtection: true, protoFdMax: 15000 });
  expect(c.aerospike).toMatchObject({ nodeCount: 3, instanceType: 'i4i.large', namespace: 'utxo', set: 'utxos' });
  expect(c.store).toMatchObject({ utxoBatchSize: 20000, blockHeightRetention: 288, maxTxSizeInStore: 1048576 });
});

test('replication: 3 copies by default where there are 3 nodes, capped at the node count; 2 only with the loss accepted', () => {
  const rf = (values: Record<string, unknown>) => {
    return effectiveReplication(loadConfig(ctx(values)).aerospike);
  };
  expect(rf({})).toBe(3);
  expect(rf({ nodeCount: '2' })).toBe(2);
  expect(rf({ nodeCount: '1' })).toBe(1);
  expect(rf({ nodeCount: '5' })).toBe(3);
  expect(rf({ replicationFactor: '2', acceptTwoNodeLoss: 'true' })).toBe(2);
  // Enterprise: strong consistency waits for the device (commit-to-device), no write buffer to lose
  expect(rf({ replicationFactor: '2', aerospikeStrongConsistency: 'true' })).toBe(2);
});

test('cleanupShards: 1 by default; up to the partition ranges with the reserved concurrency to run them', () => {
  expect(loadConfig(ctx({})).cleanupShards).toBe(1);
  expect(loadConfig(ctx({ cleanupShards: '2' })).cleanupShards).toBe(2);
  expect(loadConfig(ctx({ cleanupShards: '8', reservedConcurrency: 'cleanup:8' })).cleanupShards).toBe(8);
  expect(
    loadConfig(ctx({ stages: { dev: { cleanupShards: 4, functions: { cleanup: { reservedConcurrency: 4 } } } } })),
  ).toMatchObject({ cleanupShards: 4 });
});

test('stages object from cdk.json, then -c keys on top (strings coerced)', () => {
  const c = loadConfig(
    ctx({
      stage: 'prod',
      stages: {
        prod: {
          aerospike: { nodeCount: 6 },
          functions: { cleanup: { reservedConcurrency: 1 } },
          alarmEmail: 'ops@example.com',
          roleAssumers: PROD_ASSUMERS,
        },
      },
      nodeCount: '4',
      replicationFactor: '3',
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
  expect(c.aerospike.replicationFactor).toBe(3);
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
  // Community Edition: at most 8 nodes, 640 GB of data per node
  [{ nodeCount: '9', replicationFactor: '3' }, /nodeCount.*from 1 to 8/],
  [{ instanceType: 'i4i.xlarge' }, /instanceType.*640 GB/],
  // 4 nodes over 3 AZs: one AZ holds 2, so 2 copies could both be there
  [{ nodeCount: '4', replicationFactor: '2' }, /replicationFactor.*at least 3/],
  [{ nodeCount: '4', maxAzs: '2', replicationFactor: '2' }, /replicationFactor.*at least 3/],
  // Community Edition: two nodes killed within a second lose RF 2's write buffers (the two-kill nemesis)
  [{ replicationFactor: '2' }, /replicationFactor.*two nodes die within the same second.*acceptTwoNodeLoss=true/],
  [{ replicationFactor: '2', acceptTwoNodeLoss: 'maybe' }, /acceptTwoNodeLoss/],
  [{ aerospikeAmi: 'ami-0123456789abcdef0' }, /aerospikeAmi.*explicit region/],
  [{ aerospikeAmi: 'eu-west-1:ami-0123456789abcdef0', region: 'us-east-1' }, /aerospikeAmi.*us-east-1/],
  [{ aerospikeAmi: 'eu-west-1:nope' }, /aerospikeAmi.*region:ami-id/],
  [{ aerospikePackageSha256: 'abc' }, /aerospikePackageSha256.*SHA-256/],
  [{ exporterPackageUrl: 'https://x/y.tgz' }, /exporterPackageUrl.*rpm/],
  [{ signalMaxConcurrency: '11' }, /signalMaxConcurrency.*reserved concurrency 10/],
  [{ signalMaxConcurrency: '1' }, /signalMaxConcurrency/],
  [{ provisionedConcurrency: 'spend:101' }, /provisionedConcurrency\.spend.*above the reserved concurrency 100/],
  [{ reservedConcurrency: 'admin:0' }, /reservedConcurrency\.admin.*every function needs a reserved concurrency/],
  [{ maxTipAdvance: '0' }, /maxTipAdvance/],
  // cleanup shards: 1 to 16, at most the function's 8 partition ranges and its reserved concurrency (default 2)
  [{ cleanupShards: '0' }, /cleanupShards.*from 1 to 16/],
  [{ cleanupShards: '1.5' }, /cleanupShards.*from 1 to 16/],
  [{ cleanupShards: 'two' }, /cleanupShards.*expected a number/],
  [{ cleanupShards: '17', reservedConcurrency: 'cleanup:17' }, /cleanupShards.*from 1 to 16/],
  [{ cleanupShards: '9', reservedConcurrency: 'cleanup:9' }, /cleanupShards.*8 partition ranges/],
  [{ cleanupShards: '3' }, /cleanupShards.*reserved concurrency 2.*reservedConcurrency=cleanup:3/],
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

test('min-cluster-size is a majority; the AMI map and checksums are kept as given', () => {
  expect([1, 2, 3, 4, 5, 8].map(minClusterSize)).toEqual([1, 2, 2, 3, 3, 5]);
  const c = loadConfig(
    ctx({
      region: 'eu-west-1',
      aerospikeAmi: 'ami-0123456789abcdef0',
      aerospikePackageSha256: 'f'.repeat(64),
    }),
  );
  expect(c.aerospike.amiIds).toEqual({ 'eu-west-1': 'ami-0123456789abcdef0' });
  expect(c.aerospike.packageSha256).toBe('f'.repeat(64));
  const multi = loadConfig(ctx({ aerospikeAmi: 'eu-west-1:ami-0123456789abcdef0, us-east-1:ami-0fedcba9876543210' }));
  expect(multi.aerospike.amiIds).toEqual({
    'eu-west-1': 'ami-0123456789abcdef0',
    'us-east-1': 'ami-0fedcba9876543210',
  });
});

test('connection budget: reserved concurrency x (conns per node + 1) + tools, under 80% of proto-fd-max', () => {
  const b = connectionBudget(defaultConfig());
  expect(b.limit).toBe(12000);
  expect(b.perFunction.spend).toBe(100 * 33);
  expect(b.total).toBe(332 * 33 + 256);
  expect(() => loadConfig(ctx({ reservedConcurrency: 'spend:400' }))).toThrow(
    /reservedConcurrency.*may open 21112 connections.*over 80% of proto-fd-max 15000 \(12000\)/,
  );
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

test("N7: a config value that reaches the nodes' scripts must be in its character set; the key is named", () => {
  expect(() => loadConfig(ctx({ powertoolsMetricsNamespace: "Bsv'$(id>/tmp/pwn)'X" }))).toThrow(
    /"powertoolsMetricsNamespace": "'" is not allowed in a CloudWatch namespace/,
  );
  expect(() => loadConfig(ctx({ powertoolsMetricsNamespace: 'AWS/Lambda' }))).toThrow(/"powertoolsMetricsNamespace"/);
  expect(loadConfig(ctx({ powertoolsMetricsNamespace: 'Team/Bsv_Utxo-1.0#a:b' })).powertoolsMetricsNamespace).toBe(
    'Team/Bsv_Utxo-1.0#a:b',
  );
  expect(() => loadConfig(ctx({ powertoolsServiceName: 'a b' }))).toThrow(/"powertoolsServiceName": " "/);
  for (const bad of ["https://h/x'$(id).tgz", 'https://h/a;b.tgz', 'https://h/a*.tgz', 'https://h/a b.tgz'])
    expect(() => loadConfig(ctx({ aerospikePackageUrl: bad }))).toThrow(/"aerospikePackageUrl": ".*" is not allowed/);
  expect(() => loadConfig(ctx({ exporterPackageUrl: 's3://b/$(x).rpm' }))).toThrow(/"exporterPackageUrl"/);
});
