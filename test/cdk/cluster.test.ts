/**
 * The cluster stack of the default deployment (and of a pinned one), synthesised once each: its own stack with
 * termination protection and a stack policy refusing node updates, pinned AMI, 3-AZ placement, settings in SSM and a
 * user data that never changes, stable by-id devices, checksum-verified packages, backups, exporter/agent, alarms;
 * the API roles per route and the connection budget.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AEROSPIKE_METRICS } from '../../cdk/aerospike-scripts';
import { arnPath, ROUTES } from '../../cdk/api';
import { connectionBudget, defaultConfig, FUNCTION_NAMES, maxRecordSizeBytes } from '../../cdk/config';
import { clusterStackPolicy } from '../../cdk/stack-policy';
import { REFILL_ALARM_MINUTES } from '../../cdk/cluster-alarms';
import { API_ROLES, roleAllows } from '../../lib/http/roles';
import { logicalId, resourcesOf, synth, type Synth } from './helpers';

let s: Synth;
let pinned: Synth;
beforeAll(() => {
  s = synth();
  pinned = synth({
    region: 'eu-west-1',
    availabilityZones: 'eu-west-1a,eu-west-1b,eu-west-1c',
    aerospikeAmi: 'ami-0123456789abcdef0',
    aerospikePackageSha256: 'a'.repeat(64),
    exporterPackageSha256: 'b'.repeat(64),
  });
});

const nodesOf = (x: Synth) => Object.values(resourcesOf(x.clusterTemplate, 'AWS::EC2::Instance'));
const param = (x: Synth, name: string): string => {
  const p = Object.values(resourcesOf(x.clusterTemplate, 'AWS::SSM::Parameter')).find(
    (r) => r.Properties!.Name === name,
  );
  if (!p) throw new Error(`no SSM parameter ${name}`);
  const v = p.Properties!.Value;
  return typeof v === 'string' ? v : JSON.stringify(v);
};
const PREFIX = '/bsv-utxo-store/dev/aerospike';

describe('cluster stack', () => {
  test('its own stack, with termination protection; the service stack holds no node and depends on it', () => {
    expect(s.cluster.stackName).toBe('BsvUtxoStore-dev-Cluster');
    expect(s.cluster.terminationProtection).toBe(true);
    expect(nodesOf(s)).toHaveLength(3);
    s.template.resourceCountIs('AWS::EC2::Instance', 0);
    expect(s.stack.dependencies.map((d) => d.stackName)).toContain(s.cluster.stackName);
    expect(s.cluster.dependencies).toEqual([]);
  });

  test('stack policy: no update of any node, no replacement or deletion of buckets, zone, VPC; set on the cluster stack', () => {
    const policy = clusterStackPolicy() as { Statement: Record<string, unknown>[] };
    expect(policy.Statement[0]).toEqual({
      Effect: 'Deny',
      Principal: '*',
      Action: 'Update:*',
      Resource: '*',
      Condition: { StringEquals: { ResourceType: ['AWS::EC2::Instance'] } },
    });
    expect(policy.Statement[1]).toMatchObject({
      Effect: 'Deny',
      Action: ['Update:Replace', 'Update:Delete'],
      Condition: { StringEquals: { ResourceType: expect.arrayContaining(['AWS::S3::Bucket', 'AWS::EC2::VPC']) } },
    });
    const setter = Object.values(resourcesOf(s.policyTemplate, 'Custom::AWS'))[0].Properties!;
    const create = JSON.parse(setter.Create as string) as { action: string; parameters: Record<string, string> };
    expect(create.action).toBe('setStackPolicy');
    expect(create.parameters.StackName).toBe('BsvUtxoStore-dev-Cluster');
    expect(JSON.parse(create.parameters.StackPolicyBody)).toEqual(policy);
    expect(s.policy.dependencies.map((d) => d.stackName)).toEqual(['BsvUtxoStore-dev-Cluster']);
    s.policyTemplate.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [Match.objectLike({ Action: 'cloudformation:SetStackPolicy' })],
      },
    });
  });

  test('pinned AMI: from the aerospikeAmi context, or a stack parameter (kept across updates), never "latest"', () => {
    for (const n of nodesOf(pinned)) expect(n.Properties!.ImageId).toBe('ami-0123456789abcdef0');
    const params = s.clusterTemplate.toJSON().Parameters as Record<string, { Type: string; AllowedPattern?: string }>;
    expect(params.AerospikeAmiId.Type).toBe('AWS::EC2::Image::Id');
    expect(params.AerospikePackageSha256.AllowedPattern).toBe('^[0-9a-f]{64}$');
    expect(params.ExporterPackageSha256.AllowedPattern).toBe('^[0-9a-f]{64}$');
    for (const n of nodesOf(s)) expect(n.Properties!.ImageId).toEqual({ Ref: 'AerospikeAmiId' });
    // no SSM "latest" lookup anywhere
    expect(JSON.stringify(s.clusterTemplate.toJSON())).not.toContain('ami-amazon-linux-latest');
    expect(pinned.clusterTemplate.toJSON().Parameters ?? {}).not.toHaveProperty('AerospikeAmiId');
  });

  test('3 AZs: one node in each (env-agnostic: the first 3 AZs of the region; pinned: the named ones)', () => {
    const azOf = (x: Synth) => {
      const subnets = resourcesOf(x.clusterTemplate, 'AWS::EC2::Subnet');
      return nodesOf(x).map((n) =>
        JSON.stringify(subnets[(n.Properties!.SubnetId as { Ref: string }).Ref].Properties!.AvailabilityZone),
      );
    };
    expect(new Set(azOf(s)).size).toBe(3);
    expect(azOf(pinned).sort()).toEqual(['"eu-west-1a"', '"eu-west-1b"', '"eu-west-1c"']);
  });

  test('user data only fetches and runs the bootstrap: the same text for a new conf, package or node count', () => {
    const ud = (x: Synth) => nodesOf(x).map((n) => JSON.stringify(n.Properties!.UserData));
    const other = synth({
      nodeCount: '2',
      protoFdMax: '20000',
      aerospikePackageUrl: 'https://example.com/aerospike-server-community_7.2.0.7_tools_amzn2023_x86_64.tgz',
      nsupPeriod: '60',
    });
    expect(ud(other)).toEqual(ud(s).slice(0, 2));
    for (const text of ud(s)) {
      expect(text).toContain(`${PREFIX}/bootstrap`);
      expect(text).not.toContain('namespace utxo');
      expect(text).not.toContain('asinstall');
    }
  });

  test('conf in SSM: replication 3, min-cluster-size 2 (a majority), proto-fd-max, mesh seeds, log file', () => {
    const conf = param(s, `${PREFIX}/conf`);
    expect(conf).toContain('replication-factor 3');
    expect(conf).toContain('min-cluster-size 2');
    expect(conf).toContain('proto-fd-max 15000');
    expect(conf).toContain(
      `max-record-size ${maxRecordSizeBytes({ utxoBatchSize: 20000, maxTxSizeInStore: 1048576 })}`,
    );
    for (let i = 1; i <= 3; i++)
      expect(conf).toContain(`mesh-seed-address-port aerospike-${i}.aerospike.dev.utxo.internal 3002`);
    expect(conf).toContain('file /var/log/aerospike/aerospike.log');
    expect(conf).toContain('@DEVICES@');
    expect(conf).toContain('evict-used-pct 0');
    // hot records queue (fan-out parents) instead of answering KEY_BUSY at the server default of 20
    expect(conf).toMatch(/^namespace utxo \{[^}]*\n {4}transaction-pending-limit 256\n/m);
  });

  test('watchdog: check-start finds the other nodes in the conf apply-config writes (mesh seeds at the service port)', () => {
    const watchdog = param(s, `${PREFIX}/aerospike-watchdog`);
    expect(watchdog).toContain('CONF=${CONF:-/etc/aerospike/aerospike.conf}');
    expect(watchdog).toContain(`-v d=${3002 - 3000} '$1 == "mesh-seed-address-port"`);
    expect(param(s, `${PREFIX}/aerospike-apply-config`)).toContain('CONF_DIR=${CONF_DIR:-/etc/aerospike}');
    expect(param(s, `${PREFIX}/aerospike-apply-config`)).toContain('> "$CONF_DIR/aerospike.conf.new"');
  });

  test('bootstrap: verifies both packages against their pinned SHA-256 before installing; devices by-id', () => {
    const boot = param(s, `${PREFIX}/bootstrap`);
    expect(boot).toMatch(/verify \/tmp\/aerospike\.tgz "\$PKG_SHA"[\s\S]*asinstall/);
    expect(boot).toMatch(/verify \/tmp\/aerospike-prometheus-exporter\.rpm "\$EXP_SHA"[\s\S]*rpm -Uvh/);
    expect(boot).toContain('sha256sum -c -');
    expect(boot).toContain('aerospike-devices record');
    expect(boot).toContain('ExecStartPre=/usr/local/sbin/aerospike-devices check');
    expect(boot).not.toMatch(/\/dev\/nvme\d/);
    expect(param(s, `${PREFIX}/aerospike-devices`)).toContain('nvme-Amazon_EC2_NVMe_Instance_Storage_');
    // the checksum next to the URL: a stack parameter by default, the context value when pinned
    expect(param(s, `${PREFIX}/package`)).toContain('AerospikePackageSha256');
    expect(param(pinned, `${PREFIX}/package`)).toMatch(/aerospike-server-community_8\.1\.2\.\S+\.tgz a{64}$/);
    expect(param(pinned, `${PREFIX}/exporter-package`)).toMatch(/\.rpm b{64}$/);
  });

  test('node role: its own SSM parameters, the CloudWatch agent, the backup prefix; nothing else of S3', () => {
    const t = s.clusterTemplate;
    const statements = Object.values(resourcesOf(t, 'AWS::IAM::Policy')).flatMap(
      (p) => (p.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
    );
    const sids = statements.map((st) => st.Sid);
    expect(sids).toEqual(expect.arrayContaining(['NodeSettings', 'BackupObjects', 'BackupBucket']));
    const settings = statements.find((st) => st.Sid === 'NodeSettings')!;
    expect(settings.Action).toBe('ssm:GetParameter');
    // conf, package, exporter package, bootstrap, device check, apply-config, watchdog, agent config
    expect((settings.Resource as unknown[]).length).toBe(8);
  });
});

describe('backups', () => {
  test('bucket: versioned, encrypted, TLS only, retained, lifecycle on the backup prefix', () => {
    const t = s.clusterTemplate;
    const id = logicalId(t, 'AWS::S3::Bucket', 'BackupBucket');
    const bucket = t.toJSON().Resources[id];
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.Properties.BucketEncryption).toBeDefined();
    // superseded backups expire (the newest complete ones are never tagged: test/cdk/security.test.ts)
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual([
      expect.objectContaining({ Prefix: 'aerospike/', ExpirationInDays: 7 }),
      expect.objectContaining({ Prefix: 'aerospike/', NoncurrentVersionExpiration: { NoncurrentDays: 7 } }),
    ]);
    t.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: id },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  test('schedule: the backup script on every node by tag every 24 hours; a restore document', () => {
    const t = s.clusterTemplate;
    const assoc = Object.values(resourcesOf(t, 'AWS::SSM::Association'))[0].Properties!;
    expect(assoc.Name).toBe('AWS-RunShellScript');
    expect(assoc.ScheduleExpression).toBe('rate(24 hours)');
    expect(assoc.Targets).toEqual([{ Key: 'tag:bsv-utxo-store:aerospike-cluster', Values: ['bsv-utxo-store-dev'] }]);
    const commands = JSON.stringify((assoc.Parameters as { commands: unknown }).commands);
    expect(commands).toContain('asbackup --namespace');
    expect(commands).toContain('cluster_principal');
    for (const n of nodesOf(s))
      expect(n.Properties!.Tags).toEqual(
        expect.arrayContaining([{ Key: 'bsv-utxo-store:aerospike-cluster', Value: 'bsv-utxo-store-dev' }]),
      );
    const doc = Object.values(resourcesOf(t, 'AWS::SSM::Document'))[0].Properties!;
    expect(doc.DocumentType).toBe('Command');
    expect(JSON.stringify(doc.Content)).toContain('asrestore --namespace');
    expect(JSON.stringify(doc.Content)).toContain('BACKUP_COMPLETE');
  });
});

describe('cluster monitoring', () => {
  test('agent config scrapes the exporter into CloudWatch and ships the Aerospike log', () => {
    const agent = JSON.parse(param(s, `${PREFIX}/cloudwatch-agent`)) as {
      logs: {
        logs_collected: { files: { collect_list: { file_path: string }[] } };
        metrics_collected: { prometheus: { emf_processor: { metric_namespace: string } } };
      };
    };
    expect(agent.logs.logs_collected.files.collect_list.map((f) => f.file_path)).toContain(
      '/var/log/aerospike/aerospike.log',
    );
    expect(agent.logs.metrics_collected.prometheus.emf_processor.metric_namespace).toBe('BsvUtxoStore/Aerospike');
  });

  test('alarms: cluster size < nodeCount, stop-writes, device use, connections near proto-fd-max, status checks', () => {
    const alarms = Object.values(resourcesOf(s.clusterTemplate, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties!);
    const by = (metric: string) => alarms.find((a) => a.MetricName === metric)!;
    expect(by(AEROSPIKE_METRICS.clusterSize)).toMatchObject({
      Threshold: 3,
      ComparisonOperator: 'LessThanThreshold',
      Statistic: 'Minimum',
      TreatMissingData: 'breaching',
      Dimensions: [{ Name: 'cluster_name', Value: 'bsv-utxo-store-dev' }],
    });
    expect(by(AEROSPIKE_METRICS.stopWrites)).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(by(AEROSPIKE_METRICS.deviceUsedPct)).toMatchObject({ Threshold: 70 });
    expect(by(AEROSPIKE_METRICS.clientConnections)).toMatchObject({ Threshold: 13500 });
    expect(alarms.filter((a) => a.MetricName === 'StatusCheckFailed')).toHaveLength(3);
  });

  test('refill alarm: migrations pending on some node for REFILL_ALARM_MINUTES (a node refilling), with its runbook', () => {
    const alarms = Object.values(resourcesOf(s.clusterTemplate, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties!);
    const refill = alarms.filter((a) => a.MetricName === AEROSPIKE_METRICS.migrateRx);
    expect(refill).toHaveLength(1);
    expect(refill[0]).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      Statistic: 'Maximum',
      Period: 60,
      EvaluationPeriods: REFILL_ALARM_MINUTES,
      TreatMissingData: 'notBreaching',
      Dimensions: expect.arrayContaining([{ Name: 'ns', Value: 'utxo' }]) as unknown,
    });
    expect(REFILL_ALARM_MINUTES).toBeGreaterThanOrEqual(5);
    expect(refill[0].AlarmDescription).toMatch(/replication-factor 3.*docs\/runbook\.md/);
  });
});

describe('API roles', () => {
  test('three roles; each may invoke exactly the routes of its rank and below, by method and path', () => {
    const t = s.template;
    const apiId = logicalId(t, 'AWS::ApiGateway::RestApi', 'Api');
    for (const role of API_ROLES) {
      const roleId = logicalId(t, 'AWS::IAM::Role', `Api${role.charAt(0).toUpperCase()}${role.slice(1)}Role`);
      const policy = Object.values(resourcesOf(t, 'AWS::IAM::Policy')).find((p) =>
        (p.Properties!.Roles as { Ref: string }[]).some((r) => r.Ref === roleId),
      )!;
      const [statement] = (policy.Properties!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
      expect(statement.Action).toBe('execute-api:Invoke');
      const allowed = (statement.Resource as { 'Fn::Join': [string, unknown[]] }[]).map((r) => {
        const parts = r['Fn::Join'][1];
        expect(JSON.stringify(parts)).toContain(apiId);
        return String(parts[parts.length - 1]);
      });
      const expected = ROUTES.filter((r) => roleAllows(role, r.role)).map((r) => `/dev/${r.method}${arnPath(r.path)}`);
      expect(allowed.sort()).toEqual(expected.sort());
    }
    // validators cannot move the tip, delete, freeze or force; blockValidation cannot force, delete or freeze
    const routesOf = (role: (typeof API_ROLES)[number]) =>
      ROUTES.filter((r) => roleAllows(role, r.role)).map((r) => `${r.method} ${r.path}`);
    expect(routesOf('validator')).not.toContain('PUT /v1/chain/tip');
    expect(routesOf('blockValidation')).toContain('PUT /v1/chain/tip');
    expect(routesOf('blockValidation')).not.toContain('PUT /v1/chain/tip/force');
    expect(routesOf('blockValidation')).not.toContain('DELETE /v1/txs/{txid}');
    expect(routesOf('admin')).toContain('PUT /v1/chain/tip/force');
  });

  test('resource policy: Deny every principal that is not one of the three roles', () => {
    const api = Object.values(resourcesOf(s.template, 'AWS::ApiGateway::RestApi'))[0].Properties!;
    const [statement] = (api.Policy as { Statement: Record<string, unknown>[] }).Statement;
    expect(statement).toMatchObject({ Effect: 'Deny', Action: 'execute-api:Invoke', Principal: { AWS: '*' } });
    expect(
      (statement.Condition as { ArnNotEquals: { 'aws:PrincipalArn': unknown[] } }).ArnNotEquals['aws:PrincipalArn'],
    ).toHaveLength(3);
  });
});

describe('connection budget', () => {
  test('every function has reserved concurrency; the SQS source caps its consumers; env sets the pool size', () => {
    const fns = Object.values(resourcesOf(s.template, 'AWS::Lambda::Function'));
    const reserved = fns.map((f) => f.Properties!.ReservedConcurrentExecutions as number);
    expect(reserved.every((r) => r > 0)).toBe(true);
    const budget = connectionBudget(defaultConfig());
    expect(reserved.reduce((a, b) => a + b, 0) * 33 + 256).toBe(budget.total);
    expect(budget.total).toBeLessThanOrEqual(budget.limit);
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 10 } });
    for (const f of fns)
      expect((f.Properties!.Environment as { Variables: Record<string, string> }).Variables).toMatchObject({
        AEROSPIKE_MAX_CONNS_PER_NODE: '32',
        MAX_TIP_ADVANCE: '10',
      });
  });

  test('refused at synth when the sum does not fit under proto-fd-max, naming the key', () => {
    expect(() => synth({ reservedConcurrency: 'spend:400' })).toThrow(
      /reservedConcurrency.*over 80% of proto-fd-max 15000/,
    );
    expect(() => synth({ clientMaxConnsPerNode: '100' })).toThrow(/proto-fd-max/);
    // raising proto-fd-max makes room
    expect(() => synth({ reservedConcurrency: 'spend:400', protoFdMax: '40000' })).not.toThrow();
    for (const name of FUNCTION_NAMES) expect(defaultConfig().functions[name].reservedConcurrency).toBeGreaterThan(0);
  });
});

describe('a disposable stage (terminationProtection=false)', () => {
  test('no termination protection on the stack or the nodes; cdk-nag passes with the acknowledged EC29', () => {
    const d = synth({ terminationProtection: 'false' });
    expect(d.cluster.terminationProtection).toBe(false);
    for (const n of nodesOf(d)) expect(n.Properties!.DisableApiTermination).toBe(false);
    const report = new AwsSolutionsChecks(d.app).validateScope(d.cluster);
    expect(report.violations.map((v) => `${v.severity} ${v.ruleName}`)).toEqual([]);
  });
});
