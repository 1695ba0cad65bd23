/**
 * The infrastructure half of the security review (docs/security.md, one describe per threat, numbered as in the
 * review): who may assume the caller roles, the node role's reach, what a node executes, egress and endpoint
 * policies, backups, and the low findings (log groups, default group, public IPs, log-bucket ACLs, alarm key,
 * notification, temp files, ListBucket). Two syntheses: the default dev deployment and a hardened variant.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { loadConfig } from '../../cdk/config';
import { PIN_METADATA_KEY, pinOf } from '../../cdk/node-pins';
import { ACKNOWLEDGEMENTS } from '../../cdk/nag';
import { logicalId, resourcesOf, synth, type Synth } from './helpers';

const ARN = 'arn:aws:iam::123456789012:role';
const ASSUMERS = {
  validatorAssumers: `${ARN}/validator-*`,
  blockValidationAssumers: `${ARN}/block-validation`,
  adminAssumers: `${ARN}/ops-admin,${ARN}/break-glass`,
};

let s: Synth;
let hard: Synth;
beforeAll(() => {
  s = synth();
  hard = synth({
    ...ASSUMERS,
    alarmEmail: 'ops@example.com',
    backupObjectLockDays: '7',
    natGateways: '0',
    aerospikePackageUrl: 's3://my-artifacts/aerospike/server.tgz',
    exporterPackageUrl: 's3://my-artifacts/aerospike/exporter.rpm',
    aerospikePackageSha256: 'a'.repeat(64),
    exporterPackageSha256: 'b'.repeat(64),
  });
});

type Statement = Record<string, unknown>;
const statements = (x: Synth['clusterTemplate']): Statement[] =>
  Object.values(resourcesOf(x, 'AWS::IAM::Policy')).flatMap(
    (p) => (p.Properties!.PolicyDocument as { Statement: Statement[] }).Statement,
  );
const actionsOf = (st: Statement): string[] =>
  Array.isArray(st.Action) ? (st.Action as string[]) : [String(st.Action)];
const ctx = (values: Record<string, unknown>) => ({ tryGetContext: (k: string) => values[k] });
const roleOf = (x: Synth, prefix: string) =>
  resourcesOf(x.template, 'AWS::IAM::Role')[logicalId(x.template, 'AWS::IAM::Role', prefix)].Properties!;

describe('#3 caller roles: who may assume them', () => {
  test('each role trusts the account only for its configured principals (aws:PrincipalArn); admin sessions last 1 h', () => {
    for (const [prefix, patterns, hours] of [
      ['ApiValidatorRole', [`${ARN}/validator-*`], 12],
      ['ApiBlockValidationRole', [`${ARN}/block-validation`], 12],
      ['ApiAdminRole', [`${ARN}/ops-admin`, `${ARN}/break-glass`], 1],
    ] as const) {
      const role = roleOf(hard, prefix);
      const [statement] = (role.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement;
      expect(statement).toMatchObject({
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Condition: { ArnLike: { 'aws:PrincipalArn': patterns } },
      });
      expect(role.MaxSessionDuration).toBe(hours * 3600);
    }
    expect(roleOf(s, 'ApiAdminRole').MaxSessionDuration).toBe(3600);
  });

  test('outside dev the assumers are required, and must be IAM principal ARN patterns', () => {
    const prod = { stage: 'prod', alarmEmail: 'ops@example.com' };
    expect(() => loadConfig(ctx(prod))).toThrow(/"validatorAssumers": required outside stage dev/);
    expect(() => loadConfig(ctx({ ...prod, ...ASSUMERS, adminAssumers: '' }))).toThrow(
      /"adminAssumers": required outside stage dev/,
    );
    expect(loadConfig(ctx({ ...prod, ...ASSUMERS })).roleAssumers.admin).toHaveLength(2);
    expect(() => loadConfig(ctx({ adminAssumers: '123456789012' }))).toThrow(
      /"adminAssumers": "123456789012" is not an IAM role or user ARN pattern/,
    );
  });

  test('N10: a pattern matching every role or user of the account, or naming another account, stops synthesis', () => {
    for (const wide of [`${ARN}/*`, `${ARN}/**`, `${ARN}/?*`, 'arn:aws:iam::123456789012:user/*', `${ARN}/*/*`])
      expect(() => loadConfig(ctx({ validatorAssumers: wide }))).toThrow(
        /"validatorAssumers": ".*" matches every (role|user) of the account/,
      );
    // a path or a prefix is still a name
    expect(loadConfig(ctx({ validatorAssumers: `${ARN}/services/*` })).roleAssumers.validator).toHaveLength(1);
    expect(() =>
      loadConfig(ctx({ account: '111111111111', adminAssumers: 'arn:aws:iam::222222222222:role/ops' })),
    ).toThrow(/"adminAssumers": .*names account 222222222222, but the role trusts only this account \(111111111111\)/);
    expect(
      loadConfig(ctx({ account: '111111111111', adminAssumers: 'arn:aws:iam::111111111111:role/ops' })).roleAssumers
        .admin,
    ).toEqual(['arn:aws:iam::111111111111:role/ops']);
    // the account unknown at synth: the patterns must at least name one account
    expect(() =>
      loadConfig(ctx({ adminAssumers: 'arn:aws:iam::111111111111:role/a,arn:aws:iam::222222222222:role/b' })),
    ).toThrow(/"adminAssumers": the patterns name 2 accounts/);
  });

  test('an alarm on every assumption of the admin role (CloudTrail event through EventBridge)', () => {
    const adminRole = logicalId(s.template, 'AWS::IAM::Role', 'ApiAdminRole');
    const rule = logicalId(s.template, 'AWS::Events::Rule', 'AdminRoleAssumed');
    s.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.sts'],
        'detail-type': ['AWS API Call via CloudTrail'],
        detail: {
          eventSource: ['sts.amazonaws.com'],
          eventName: ['AssumeRole'],
          requestParameters: { roleArn: [{ 'Fn::GetAtt': [adminRole, 'Arn'] }] },
        },
      },
    });
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Events',
      MetricName: 'MatchedEvents',
      Dimensions: [{ Name: 'RuleName', Value: { Ref: rule } }],
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
    });
  });
});

describe('#4 the node role reaches only its own settings, log groups and metric namespace', () => {
  test('no AWS-managed policy; no ssm:GetParameter beyond its settings; no log-group creation or retention change', () => {
    const role = Object.values(resourcesOf(s.clusterTemplate, 'AWS::IAM::Role')).find((r) =>
      JSON.stringify(r.Properties!.AssumeRolePolicyDocument).includes('ec2.amazonaws.com'),
    )!;
    expect(role.Properties!.ManagedPolicyArns).toBeUndefined();
    const all = statements(s.clusterTemplate);
    // ssm:GetParameter only on the node settings' own parameters (each a Ref of one of them)
    for (const st of all.filter((x) => actionsOf(x).some((a) => /^ssm:GetParameter/.test(a)))) {
      const resources = st.Resource as unknown[];
      expect(resources).toHaveLength(8);
      for (const r of resources) expect(JSON.stringify(r)).toMatch(/:parameter","?,?\{"Ref":"AerospikeParam/);
    }
    const actions = all.flatMap(actionsOf);
    for (const never of ['logs:PutRetentionPolicy', 'logs:CreateLogGroup', 'ssm:GetParameters', 'logs:*', 'ssm:*'])
      expect(actions).not.toContain(never);
    const logsSt = all.find((x) => x.Sid === 'AgentLogs')!;
    const groups = Object.keys(resourcesOf(s.clusterTemplate, 'AWS::Logs::LogGroup')).filter((id) =>
      /^Aerospike(Logs|PrometheusLogs)/.test(id),
    );
    expect(logsSt.Resource).toEqual(groups.map((g) => ({ 'Fn::GetAtt': [g, 'Arn'] })));
    expect(all.find((x) => x.Sid === 'AgentMetrics')).toMatchObject({
      Action: 'cloudwatch:PutMetricData',
      Resource: '*',
      Condition: { StringEquals: { 'cloudwatch:namespace': 'BsvUtxoStore/Aerospike' } },
    });
  });

  test("the agent's two log groups exist in the template, with retention", () => {
    for (const name of [
      '/bsv-utxo-store/bsv-utxo-store-dev/aerospike',
      '/bsv-utxo-store/bsv-utxo-store-dev/aerospike/prometheus',
    ])
      s.clusterTemplate.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: name, RetentionInDays: 30 });
  });

  test('no cdk-nag acknowledgement of an AWS-managed policy on the node role remains', () => {
    const acks = ACKNOWLEDGEMENTS.get(s.cluster.cluster.role.node.path) ?? [];
    expect(acks.map((a) => a.id).filter((id) => id.startsWith('AwsSolutions-IAM4'))).toEqual([]);
    expect(acks.map((a) => a.id)).toContain('AwsSolutions-IAM5[Resource::*]');
  });
});

describe('#5 what a node executes is pinned in the stack, not in a writable parameter', () => {
  test("every node setting's resource carries the SHA-256 a node accepts (packages: their own checksum)", () => {
    const params = Object.values(resourcesOf(hard.clusterTemplate, 'AWS::SSM::Parameter'));
    expect(params).toHaveLength(8);
    for (const p of params) {
      const name = p.Properties!.Name as string;
      const pin = (p.Metadata as Record<string, string>)[PIN_METADATA_KEY];
      if (name.endsWith('/package')) expect(pin).toBe('a'.repeat(64));
      else if (name.endsWith('/exporter-package')) expect(pin).toBe('b'.repeat(64));
      else expect(pin).toBe(pinOf(p.Properties!.Value as string));
    }
  });

  test('the user data checks the bootstrap against the pin before exec; the node may read its stack resources', () => {
    for (const node of Object.values(resourcesOf(s.clusterTemplate, 'AWS::EC2::Instance'))) {
      const text = JSON.stringify(node.Properties!.UserData);
      const check = text.indexOf("fetch_pinned '/bsv-utxo-store/dev/aerospike/bootstrap' bootstrap");
      expect(check).toBeGreaterThan(0);
      expect(text.indexOf('exec /usr/local/sbin/aerospike-bootstrap')).toBeGreaterThan(check);
      expect(text).toContain('describe-stack-resource');
      expect(text).not.toContain("--name '/bsv-utxo-store/dev/aerospike/bootstrap' --query");
    }
    expect(statements(s.clusterTemplate).find((x) => x.Sid === 'NodeSettingPins')).toMatchObject({
      Action: 'cloudformation:DescribeStackResource',
    });
  });

  test('an alarm on writes to the node settings other than CloudFormation', () => {
    const rule = logicalId(s.clusterTemplate, 'AWS::Events::Rule', 'NodeSettingsWritten');
    s.clusterTemplate.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ssm'],
        detail: {
          eventName: ['PutParameter', 'DeleteParameter', 'LabelParameterVersion'],
          requestParameters: { name: [{ prefix: '/bsv-utxo-store/dev/aerospike/' }] },
          sourceIPAddress: [{ 'anything-but': 'cloudformation.amazonaws.com' }],
        },
      },
    });
    s.clusterTemplate.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'MatchedEvents',
      Dimensions: [{ Name: 'RuleName', Value: { Ref: rule } }],
    });
  });
});

describe('#6 egress and endpoint policies', () => {
  const egressOf = (x: Synth['clusterTemplate'], sgPrefix: string): Statement[] => {
    const sg = logicalId(x, 'AWS::EC2::SecurityGroup', sgPrefix);
    const inline = (resourcesOf(x, 'AWS::EC2::SecurityGroup')[sg].Properties!.SecurityGroupEgress ?? []) as Statement[];
    const separate = Object.values(resourcesOf(x, 'AWS::EC2::SecurityGroupEgress'))
      .filter((r) => JSON.stringify(r.Properties!.GroupId).includes(sg))
      .map((r) => r.Properties!);
    return [...inline, ...separate];
  };

  test('nodes: HTTPS to the endpoints, S3 and (with NAT) the internet; Aerospike ports only to the nodes', () => {
    for (const [x, internet] of [
      [s, true],
      [hard, false],
    ] as const) {
      const rules = egressOf(x.clusterTemplate, 'AerospikeSg');
      expect(rules.every((r) => r.IpProtocol === 'tcp')).toBe(true);
      const open = rules.filter((r) => r.CidrIp === '0.0.0.0/0');
      expect(open.map((r) => [r.FromPort, r.ToPort])).toEqual(internet ? [[443, 443]] : []);
      expect(rules.some((r) => r.DestinationPrefixListId !== undefined && r.FromPort === 443)).toBe(true);
      expect(rules.filter((r) => r.FromPort === 3000).every((r) => r.DestinationSecurityGroupId !== undefined)).toBe(
        true,
      );
    }
  });

  test('with NAT but every package staged in S3 the nodes get no internet egress, and reach CloudFormation by endpoint', () => {
    const staged = synth({
      aerospikePackageUrl: 's3://my-artifacts/aerospike/server.tgz',
      exporterPackageUrl: 's3://my-artifacts/aerospike/exporter.rpm',
    }).clusterTemplate;
    staged.resourceCountIs('AWS::EC2::NatGateway', 1);
    expect(egressOf(staged, 'AerospikeSg').filter((r) => r.CidrIp === '0.0.0.0/0')).toEqual([]);
    const services = Object.values(resourcesOf(staged, 'AWS::EC2::VPCEndpoint')).map((e) =>
      JSON.stringify(e.Properties!.ServiceName),
    );
    expect(services.some((n) => n.includes('.cloudformation"'))).toBe(true);
    // with an https:// package (the default) the NAT path stays, and CloudFormation is reached through it
    const dev = Object.values(resourcesOf(s.clusterTemplate, 'AWS::EC2::VPCEndpoint')).map((e) =>
      JSON.stringify(e.Properties!.ServiceName),
    );
    expect(dev.some((n) => n.includes('.cloudformation"'))).toBe(false);
  });

  test('functions: HTTPS only to the interface endpoints and the S3 prefix list', () => {
    const rules = egressOf(s.clusterTemplate, 'NetworkFunctionsSg');
    expect(rules.filter((r) => r.CidrIp !== undefined)).toEqual([]);
    expect(rules.filter((r) => r.FromPort === 443)).toHaveLength(2);
  });

  test("every endpoint has a policy: this account's principals, and for S3/SQS/Logs this account's resources", () => {
    const endpoints = Object.values(resourcesOf(hard.clusterTemplate, 'AWS::EC2::VPCEndpoint'));
    expect(endpoints.length).toBeGreaterThanOrEqual(8);
    for (const e of endpoints) {
      const text = JSON.stringify(e.Properties!.PolicyDocument);
      expect(text).toContain('aws:PrincipalAccount');
      const service = JSON.stringify(e.Properties!.ServiceName);
      if (/\.s3"|\.sqs"|\.logs"/.test(service)) expect(text).toContain('aws:ResourceAccount');
    }
  });
});

describe('N1 the AWS-owned buckets a node reads anonymously', () => {
  const s3Policy = (x: Synth): Statement[] => {
    const endpoint = Object.values(resourcesOf(x.clusterTemplate, 'AWS::EC2::VPCEndpoint')).find((e) =>
      JSON.stringify(e.Properties!.ServiceName).includes('.s3"'),
    )!;
    return (endpoint.Properties!.PolicyDocument as { Statement: Statement[] }).Statement;
  };
  /** a resource of the policy as text, the pseudo parameters written as ${...} */
  const text = (r: unknown): string =>
    typeof r === 'string'
      ? r
      : ((r as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1] as unknown[])
          .map((p) => (typeof p === 'string' ? p : `\${${(p as { Ref: string }).Ref}}`))
          .join('');

  test('exact bucket names, GetObject only, no principal condition (anonymous dnf carries no aws:PrincipalAccount)', () => {
    const st = s3Policy(s).find((x) => x.Sid === 'AwsOwnedBuckets')!;
    expect(st).toMatchObject({ Effect: 'Allow', Principal: { AWS: '*' }, Action: 's3:GetObject' });
    expect(st.Condition).toBeUndefined();
    const buckets = [st.Resource].flat().map(text);
    expect(buckets).toContain('arn:${AWS::Partition}:s3:::al2023-repos-${AWS::Region}-de612dc2/*');
    // no pattern anyone could register a bucket under: the only * is the object key
    for (const b of buckets) expect(b.replace(/\/\*$/, '')).not.toMatch(/[*?]/);
  });

  test("staged packages are read by this account's principals only; without them no such statement", () => {
    const staged = s3Policy(hard).find((x) => x.Sid === 'StagedPackages')!;
    expect(staged.Condition).toEqual({ StringEquals: { 'aws:PrincipalAccount': { Ref: 'AWS::AccountId' } } });
    expect([staged.Resource].flat().map(text).sort()).toEqual([
      'arn:${AWS::Partition}:s3:::my-artifacts/aerospike/exporter.rpm',
      'arn:${AWS::Partition}:s3:::my-artifacts/aerospike/server.tgz',
    ]);
    expect(s3Policy(s).find((x) => x.Sid === 'StagedPackages')).toBeUndefined();
  });
});

describe('N12 a node boots only once what its first boot reaches exists', () => {
  test('each instance depends on its egress rules, settings, log groups, the NAT routes and every endpoint', () => {
    for (const [x, nat] of [
      [s, true],
      [hard, false],
    ] as const) {
      const t = x.clusterTemplate;
      const ids = (type: string, filter: (r: Statement) => boolean = () => true) =>
        Object.entries(resourcesOf(t, type))
          .filter(([, r]) => filter(r as Statement))
          .map(([id]) => id);
      const sg = logicalId(t, 'AWS::EC2::SecurityGroup', 'AerospikeSg');
      const needed = [
        sg,
        ...ids('AWS::EC2::SecurityGroupEgress', (r) =>
          JSON.stringify((r.Properties as Statement).GroupId).includes(`"${sg}"`),
        ),
        ...ids('AWS::SSM::Parameter'),
        ...ids('AWS::Logs::LogGroup').filter(
          (id) => id.startsWith('AerospikeLogs') || id.startsWith('AerospikePrometheusLogs'),
        ),
        ...ids('AWS::EC2::VPCEndpoint'),
        // the cluster subnets' NAT default routes
        ...ids('AWS::EC2::Route', (r) => JSON.stringify(r.Properties).includes('NatGatewayId')),
      ];
      expect(ids('AWS::EC2::Route', (r) => JSON.stringify(r.Properties).includes('NatGatewayId')).length > 0).toBe(nat);
      for (const [id, node] of Object.entries(resourcesOf(t, 'AWS::EC2::Instance'))) {
        const dependsOn = (node as { DependsOn?: string[] }).DependsOn ?? [];
        expect([id, needed.filter((n) => !dependsOn.includes(n))]).toEqual([id, []]);
      }
    }
  });
});

describe('#8 backups', () => {
  test('a backup-age alarm: no BackupCompleted for twice the interval (missing data breaches)', () => {
    s.clusterTemplate.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'BsvUtxoStore/Aerospike',
      MetricName: 'BackupCompleted',
      Dimensions: [{ Name: 'cluster_name', Value: 'bsv-utxo-store-dev' }],
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 48,
      DatapointsToAlarm: 48,
      Period: 3600,
      TreatMissingData: 'breaching',
    });
  });

  test('the association fails on any error; the scripts run from a fresh root-only directory', () => {
    const assoc = Object.values(resourcesOf(s.clusterTemplate, 'AWS::SSM::Association'))[0].Properties!;
    expect(assoc.MaxErrors).toBe('0');
    const doc = Object.values(resourcesOf(s.clusterTemplate, 'AWS::SSM::Document'))[0].Properties!;
    for (const text of [JSON.stringify(assoc.Parameters), JSON.stringify(doc.Content)]) {
      expect(text).not.toMatch(/\/tmp\/aerospike-(backup|restore)/);
      expect(text).toContain('umask 077; d=$(mktemp -d /root/aerospike-');
    }
  });

  test('the newest backups never expire: the lifecycle expires only objects the backup tagged as superseded', () => {
    const id = logicalId(s.clusterTemplate, 'AWS::S3::Bucket', 'BackupBucket');
    const rules = (
      resourcesOf(s.clusterTemplate, 'AWS::S3::Bucket')[id].Properties!.LifecycleConfiguration as { Rules: Statement[] }
    ).Rules;
    for (const rule of rules.filter((r) => r.ExpirationInDays !== undefined))
      expect(rule).toMatchObject({
        Prefix: 'aerospike/',
        TagFilters: [{ Key: 'bsv-utxo-store-superseded', Value: 'true' }],
      });
    expect(rules.some((r) => r.ExpirationInDays !== undefined)).toBe(true);
    expect(statements(s.clusterTemplate).find((x) => x.Sid === 'BackupObjects')!.Action).toContain(
      's3:PutObjectTagging',
    );
  });

  test('Object Lock (governance) on every backup version when backupObjectLockDays is set', () => {
    const id = logicalId(hard.clusterTemplate, 'AWS::S3::Bucket', 'BackupBucket');
    expect(resourcesOf(hard.clusterTemplate, 'AWS::S3::Bucket')[id].Properties).toMatchObject({
      ObjectLockEnabled: true,
      ObjectLockConfiguration: {
        ObjectLockEnabled: 'Enabled',
        Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 7 } },
      },
    });
    expect(() => loadConfig(ctx({ backupObjectLockDays: '8' }))).toThrow(/"backupObjectLockDays"/);
  });
});

describe('low findings (#11-#17)', () => {
  test("#11 API Gateway's execution log group is in the template with retention, before the stage", () => {
    const api = logicalId(s.template, 'AWS::ApiGateway::RestApi', 'Api');
    const id = logicalId(s.template, 'AWS::Logs::LogGroup', 'ApiExecutionLogs');
    s.template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: api }, '/dev']] },
      RetentionInDays: 30,
    });
    const stage = Object.values(s.template.findResources('AWS::ApiGateway::Stage'))[0] as { DependsOn?: string[] };
    expect(stage.DependsOn).toContain(id);
  });

  test('#12/#13 the default security group is emptied; the NAT subnets give no public IP', () => {
    s.clusterTemplate.resourceCountIs('Custom::VpcRestrictDefaultSG', 1);
    const publics = Object.values(resourcesOf(s.clusterTemplate, 'AWS::EC2::Subnet')).filter((r) =>
      JSON.stringify(r.Properties!.Tags).includes('"Public"'),
    );
    expect(publics.length).toBeGreaterThan(0);
    for (const p of publics) expect(p.Properties!.MapPublicIpOnLaunch).toBe(false);
  });

  test('#14 the access-log buckets use no ACL: bucket-owner enforced, log delivery by bucket policy', () => {
    for (const [t, prefix] of [
      [s.template, 'StorageAccessLogs'],
      [s.clusterTemplate, 'BackupAccessLogs'],
    ] as const) {
      const id = logicalId(t, 'AWS::S3::Bucket', prefix);
      const props = resourcesOf(t, 'AWS::S3::Bucket')[id].Properties!;
      expect(props.AccessControl).toBeUndefined();
      expect(props.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
      t.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Principal: { Service: 'logging.s3.amazonaws.com' }, Condition: Match.anyValue() }),
          ]),
        },
      });
    }
  });

  test("#15 the alarm key serves only this account's alarms; outside dev an alarm address is required", () => {
    hard.clusterTemplate.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } }, ArnLike: Match.anyValue() },
          }),
        ]),
      },
    });
    expect(() => loadConfig(ctx({ stage: 'prod', ...ASSUMERS }))).toThrow(/"alarmEmail": required outside stage dev/);
  });

  test('#17 the nodes may list only the backup prefix', () => {
    expect(statements(s.clusterTemplate).find((x) => x.Sid === 'BackupBucket')).toMatchObject({
      Action: 's3:ListBucket',
      Condition: { StringLike: { 's3:prefix': ['aerospike/', 'aerospike/*'] } },
    });
  });
});
