/**
 * A production-like configuration from context (as `-c key=value` gives it), synthesised once: the props reach the
 * resources, the optional features appear (X-Ray, alarm topic, provisioned/reserved concurrency, no NAT) and
 * cdk-nag still passes.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { appFunctions, logicalId, resourcesOf, statementsOf, synth, type Synth } from './helpers';

let s: Synth;
beforeAll(() => {
  s = synth({
    stage: 'prod',
    nodeCount: '5',
    // 5 nodes over 3 AZs put 2 in one AZ: 3 copies keep one outside it (no rack awareness in CE)
    replicationFactor: '3',
    instanceType: 'i3.large',
    natGateways: '0',
    aerospikePackageUrl: 's3://my-artifacts/aerospike/aerospike-server-community_7.2.0.6_amzn2023_x86_64.tgz',
    exporterPackageUrl: 's3://my-artifacts/aerospike/aerospike-prometheus-exporter-1.9.0.x86_64.rpm',
    signalMaxConcurrency: '5',
    utxoBatchSize: '40000',
    blockHeightRetention: '100',
    xrayTracing: 'true',
    alarmEmail: 'ops@example.com',
    validatorAssumers: 'arn:aws:iam::123456789012:role/validator-*',
    blockValidationAssumers: 'arn:aws:iam::123456789012:role/block-validation',
    adminAssumers: 'arn:aws:iam::123456789012:role/ops-admin',
    provisionedConcurrency: 'spend:4',
    reservedConcurrency: 'cleanup:1,signals:5',
    cleanupScheduleMinutes: '5',
    apiThrottleRateLimit: '50',
  });
});

test('cluster props: node count, instance type, termination protection in prod, packages from S3', () => {
  const t = s.clusterTemplate;
  const nodes = Object.values(resourcesOf(t, 'AWS::EC2::Instance'));
  expect(nodes).toHaveLength(5);
  expect(s.cluster.terminationProtection).toBe(true);
  for (const n of nodes) {
    expect(n.Properties!.InstanceType).toBe('i3.large');
    expect(n.Properties!.DisableApiTermination).toBe(true);
  }
  const params = Object.values(resourcesOf(t, 'AWS::SSM::Parameter')).map((p) => JSON.stringify(p.Properties!.Value));
  expect(params.some((v) => v.includes('s3://my-artifacts/aerospike/aerospike-server-community_7.2.0.6'))).toBe(true);
  // 40000 x 71 + 1 MiB + 64 KiB -> 4 MiB; 3 copies; a majority of 5 is 3
  const conf = params.find((v) => v.includes('namespace utxo'))!;
  expect(conf).toContain(`max-record-size ${4 * 1024 * 1024}`);
  expect(conf).toContain('replication-factor 3');
  expect(conf).toContain('min-cluster-size 3');
  t.resourceCountIs('AWS::EC2::NatGateway', 0);
  const statements = Object.values(resourcesOf(t, 'AWS::IAM::Policy')).flatMap(
    (p) => (p.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
  );
  for (const key of [
    'aerospike-server-community_7.2.0.6_amzn2023_x86_64.tgz',
    'aerospike-prometheus-exporter-1.9.0.x86_64.rpm',
  ])
    expect(
      statements.some(
        (st) => st.Action === 's3:GetObject' && JSON.stringify(st.Resource).includes(`my-artifacts/aerospike/${key}`),
      ),
    ).toBe(true);
});

test('function props: X-Ray, provisioned concurrency on the gateway alias the API invokes, reserved concurrency, env', () => {
  const t = s.template;
  const fns = appFunctions(t);
  for (const fn of Object.values(fns)) expect(fn.Properties!.TracingConfig).toEqual({ Mode: 'Active' });
  const spend = logicalId(t, 'AWS::Lambda::Function', 'FunctionsSpend');
  t.hasResourceProperties('AWS::Lambda::Alias', {
    Name: 'api',
    FunctionName: { Ref: spend },
    ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 4 },
  });
  const alias = logicalId(t, 'AWS::Lambda::Alias', 'FunctionsGatewayAliasSpend');
  const spendMethod = Object.values(resourcesOf(t, 'AWS::ApiGateway::Method')).find((m) =>
    JSON.stringify(m.Properties!.Integration).includes(alias),
  );
  expect(spendMethod?.Properties!.HttpMethod).toBe('POST');
  expect(fns[logicalId(t, 'AWS::Lambda::Function', 'FunctionsCleanup')].Properties!.ReservedConcurrentExecutions).toBe(
    1,
  );
  expect(fns[logicalId(t, 'AWS::Lambda::Function', 'FunctionsSignals')].Properties!.ReservedConcurrentExecutions).toBe(
    5,
  );
  const env = (fns[spend].Properties!.Environment as { Variables: Record<string, string> }).Variables;
  expect(env.UTXO_STORE.split(',')).toHaveLength(5);
  expect(env).toMatchObject({ UTXO_BATCH_SIZE: '40000', BLOCK_HEIGHT_RETENTION: '100', CLEANUP_SAFETY_WINDOW: '100' });
  // X-Ray endpoint for isolated subnets
  const endpoints = Object.values(resourcesOf(s.clusterTemplate, 'AWS::EC2::VPCEndpoint')).map((e) =>
    JSON.stringify(e.Properties!.ServiceName),
  );
  expect(endpoints.some((n) => n.includes('.xray"'))).toBe(true);
  // X-Ray is the only wildcard resource
  const xray = statementsOf(t, 'FunctionsSpend').filter((st) => JSON.stringify(st.Action).includes('xray:'));
  expect(xray).toHaveLength(1);
  expect(xray[0].Resource).toBe('*');
});

test('schedule, throttling and the alarm topic (encrypted, email subscription, alarm actions in both stacks)', () => {
  const t = s.template;
  t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
  t.hasResourceProperties('AWS::ApiGateway::Stage', {
    StageName: 'prod',
    TracingEnabled: true,
    MethodSettings: Match.arrayWith([Match.objectLike({ ResourcePath: '/*', ThrottlingRateLimit: 50 })]),
  });
  const c = s.clusterTemplate;
  const topic = logicalId(c, 'AWS::SNS::Topic', 'AlarmTopic');
  expect(resourcesOf(c, 'AWS::SNS::Topic')[topic].Properties!.KmsMasterKeyId).toBeDefined();
  c.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  c.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  for (const alarm of Object.values(resourcesOf(c, 'AWS::CloudWatch::Alarm')))
    expect(alarm.Properties!.AlarmActions).toEqual([{ Ref: topic }]);
  for (const alarm of Object.values(resourcesOf(t, 'AWS::CloudWatch::Alarm')))
    expect(JSON.stringify(alarm.Properties!.AlarmActions)).toContain(topic);
});

test('data is retained in prod', () => {
  for (const t of [s.template, s.clusterTemplate]) {
    const buckets = t.findResources('AWS::S3::Bucket');
    for (const b of Object.values(buckets)) expect(b.DeletionPolicy).toBe('Retain');
  }
});

test('cdk-nag AwsSolutions: nothing unacknowledged with every optional feature on', () => {
  for (const stack of [s.cluster, s.policy, s.stack]) {
    const report = new AwsSolutionsChecks(s.app).validateScope(stack);
    expect([stack.stackName, report.violations.map((v) => `${v.severity} ${v.ruleName}`)]).toEqual([
      stack.stackName,
      [],
    ]);
  }
});
