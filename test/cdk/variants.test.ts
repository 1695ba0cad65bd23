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
    instanceType: 'i4i.xlarge',
    natGateways: '0',
    aerospikePackageUrl: 's3://my-artifacts/aerospike/aerospike-server-community_7.2.0.6_amzn2023_x86_64.tgz',
    utxoBatchSize: '40000',
    blockHeightRetention: '100',
    xrayTracing: 'true',
    alarmEmail: 'ops@example.com',
    provisionedConcurrency: 'spend:4',
    reservedConcurrency: 'cleanup:1,signals:5',
    cleanupScheduleMinutes: '5',
    apiThrottleRateLimit: '50',
  });
});

test('cluster props: node count, instance type, termination protection in prod, package from S3', () => {
  const nodes = Object.values(resourcesOf(s.template, 'AWS::EC2::Instance'));
  expect(nodes).toHaveLength(5);
  for (const n of nodes) {
    expect(n.Properties!.InstanceType).toBe('i4i.xlarge');
    expect(n.Properties!.DisableApiTermination).toBe(true);
    const ud = JSON.stringify(n.Properties!.UserData);
    expect(ud).toContain("aws s3 cp 's3://my-artifacts/aerospike/");
    // 40000 x 71 + 1 MiB + 64 KiB -> 4 MiB
    expect(ud).toContain(`max-record-size ${4 * 1024 * 1024}`);
  }
  s.template.resourceCountIs('AWS::EC2::NatGateway', 0);
  s.template.hasResourceProperties('AWS::IAM::Policy', {
    PolicyDocument: {
      Statement: [
        {
          Action: 's3:GetObject',
          Effect: 'Allow',
          Resource: {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':s3:::my-artifacts/aerospike/aerospike-server-community_7.2.0.6_amzn2023_x86_64.tgz',
              ],
            ],
          },
        },
      ],
    },
  });
});

test('function props: X-Ray, provisioned concurrency alias used by the API, reserved concurrency, env', () => {
  const t = s.template;
  const fns = appFunctions(t);
  for (const fn of Object.values(fns)) expect(fn.Properties!.TracingConfig).toEqual({ Mode: 'Active' });
  const spend = logicalId(t, 'AWS::Lambda::Function', 'FunctionsSpend');
  t.hasResourceProperties('AWS::Lambda::Alias', {
    Name: 'live',
    FunctionName: { Ref: spend },
    ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 4 },
  });
  const alias = logicalId(t, 'AWS::Lambda::Alias', 'FunctionsSpendLive');
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
  const endpoints = Object.values(resourcesOf(t, 'AWS::EC2::VPCEndpoint')).map((e) =>
    JSON.stringify(e.Properties!.ServiceName),
  );
  expect(endpoints.some((n) => n.includes('.xray"'))).toBe(true);
  // X-Ray is the only wildcard resource
  const xray = statementsOf(t, 'FunctionsSpend').filter((st) => JSON.stringify(st.Action).includes('xray:'));
  expect(xray).toHaveLength(1);
  expect(xray[0].Resource).toBe('*');
});

test('schedule, throttling and the alarm topic (encrypted, email subscription, alarm actions)', () => {
  const t = s.template;
  t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
  t.hasResourceProperties('AWS::ApiGateway::Stage', {
    StageName: 'prod',
    TracingEnabled: true,
    MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 50 })],
  });
  const topic = logicalId(t, 'AWS::SNS::Topic', 'ObservabilityAlarmTopic');
  expect(resourcesOf(t, 'AWS::SNS::Topic')[topic].Properties!.KmsMasterKeyId).toBeDefined();
  t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  for (const alarm of Object.values(resourcesOf(t, 'AWS::CloudWatch::Alarm')))
    expect(alarm.Properties!.AlarmActions).toEqual([{ Ref: topic }]);
  t.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
});

test('data is retained in prod', () => {
  const buckets = s.template.findResources('AWS::S3::Bucket');
  for (const b of Object.values(buckets)) expect(b.DeletionPolicy).toBe('Retain');
});

test('cdk-nag AwsSolutions: nothing unacknowledged with every optional feature on', () => {
  const report = new AwsSolutionsChecks(s.app).validateScope(s.stack);
  expect(report.violations.map((v) => `${v.severity} ${v.ruleName}`)).toEqual([]);
});
