/**
 * The default deployment (`npm run synth` without context), synthesised once: the resources and properties issue 6
 * asks for (network, storage, functions, the API); alarms and cdk-nag are in stack-observability.test.ts.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { z } from 'zod';
import { ROUTES } from '../../cdk/api';
import { ROUTES as HTTP_ROUTES } from '../../lib/http/routes';
import { FUNCTION_NAMES } from '../../cdk/config';
import {
  actionsOf,
  appFunctions,
  FUNCTION_IDS,
  gatewayAliasId,
  logicalId,
  resourcesOf,
  statementsOf,
  synthBeforeAll,
} from './helpers';

const s = synthBeforeAll();

describe('network', () => {
  test('VPC with isolated function subnets in 3 AZs, S3 gateway and interface endpoints, flow logs', () => {
    const t = s.clusterTemplate;
    t.resourceCountIs('AWS::EC2::VPC', 1);
    const isolated = Object.values(resourcesOf(t, 'AWS::EC2::Subnet')).filter((sn) =>
      (sn.Properties!.Tags as { Key: string; Value: string }[]).some(
        (tag) => tag.Key === 'aws-cdk:subnet-name' && tag.Value === 'functions',
      ),
    );
    expect(isolated).toHaveLength(3);
    const azs = isolated.map((sn) => JSON.stringify(sn.Properties!.AvailabilityZone));
    expect(new Set(azs).size).toBe(3);
    t.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Gateway',
      ServiceName: Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith(['.s3'])]) }),
    });
    const interfaces = Object.values(resourcesOf(t, 'AWS::EC2::VPCEndpoint'))
      .filter((e) => e.Properties!.VpcEndpointType === 'Interface')
      .map((e) => JSON.stringify(e.Properties!.ServiceName));
    for (const svc of ['sqs', 'logs', 'monitoring', 'ssm', 'ssmmessages', 'ec2messages'])
      expect(interfaces.some((n) => n.includes(`.${svc}"`))).toBe(true);
    t.hasResourceProperties('AWS::EC2::FlowLog', { ResourceType: 'VPC', TrafficType: 'ALL' });
  });

  test('no NAT for the functions: their subnets have no default route (only the S3 gateway endpoint)', () => {
    const t = s.clusterTemplate;
    const subnets = resourcesOf(t, 'AWS::EC2::Subnet');
    const fnSubnets = Object.keys(subnets).filter((id) =>
      (subnets[id].Properties!.Tags as { Key: string; Value: string }[]).some(
        (tag) => tag.Key === 'aws-cdk:subnet-name' && tag.Value === 'functions',
      ),
    );
    expect(fnSubnets).toHaveLength(3);
    const associations = Object.values(resourcesOf(t, 'AWS::EC2::SubnetRouteTableAssociation')).map(
      (a) => a.Properties!,
    );
    const fnTables = associations
      .filter((a) => fnSubnets.includes((a.SubnetId as { Ref: string }).Ref))
      .map((a) => (a.RouteTableId as { Ref: string }).Ref);
    expect(fnTables).toHaveLength(3);
    const routes = Object.values(resourcesOf(t, 'AWS::EC2::Route')).map((r) => r.Properties!);
    for (const table of fnTables) {
      expect(routes.filter((r) => (r.RouteTableId as { Ref: string }).Ref === table)).toEqual([]);
    }
    // the S3 gateway endpoint is attached to the function subnets' route tables
    const gateway = Object.values(resourcesOf(t, 'AWS::EC2::VPCEndpoint')).find(
      (e) => e.Properties!.VpcEndpointType === 'Gateway',
    )!;
    const gatewayTables = (gateway.Properties!.RouteTableIds as { Ref: string }[]).map((r) => r.Ref);
    for (const table of fnTables) expect(gatewayTables).toContain(table);
    // the interface endpoints sit in the function subnets
    for (const e of Object.values(resourcesOf(t, 'AWS::EC2::VPCEndpoint')).filter(
      (e) => e.Properties!.VpcEndpointType === 'Interface',
    )) {
      expect((e.Properties!.SubnetIds as { Ref: string }[]).map((r) => r.Ref).sort()).toEqual([...fnSubnets].sort());
      expect(e.Properties!.PrivateDnsEnabled).toBe(true);
    }
  });
});

describe('storage', () => {
  test('blob bucket: versioned, public access blocked, encrypted, access logs, abort incomplete uploads, SSL only', () => {
    const t = s.template;
    const blobs = logicalId(t, 'AWS::S3::Bucket', 'StorageBlobs');
    const logs = logicalId(t, 'AWS::S3::Bucket', 'StorageAccessLogs');
    const p = resourcesOf(t, 'AWS::S3::Bucket')[blobs].Properties!;
    expect(p.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(p.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(p.LoggingConfiguration).toEqual({ DestinationBucketName: { Ref: logs }, LogFilePrefix: 'blobs-bucket/' });
    // the only copy of externally stored txs: versioned; a deleted or overwritten blob stays 30 days
    expect(p.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(p.LifecycleConfiguration).toEqual({
      Rules: [
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
        expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 30 } }),
      ],
    });
    t.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: blobs },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  test('signal queue: SSE, DLQ after 5 receives, visibility 6x the consumer timeout, SSL only', () => {
    const t = s.template;
    const dlq = logicalId(t, 'AWS::SQS::Queue', 'StorageSignalDlq');
    const queue = logicalId(t, 'AWS::SQS::Queue', 'StorageSignalQueue');
    const q = resourcesOf(t, 'AWS::SQS::Queue')[queue].Properties!;
    const consumer = appFunctions(t)[logicalId(t, 'AWS::Lambda::Function', 'FunctionsSignals')].Properties!;
    expect(q.SqsManagedSseEnabled).toBe(true);
    expect(q.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 5 });
    expect(q.VisibilityTimeout).toBeGreaterThanOrEqual(6 * (consumer.Timeout as number));
    for (const id of [queue, dlq])
      t.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    expect(resourcesOf(t, 'AWS::SQS::Queue')[dlq].Properties!.SqsManagedSseEnabled).toBe(true);
  });
});

describe('functions', () => {
  test('one function per handler: Node.js 22, x86_64, in the VPC with the functions SG', () => {
    const t = s.template;
    const fns = appFunctions(t);
    expect(Object.keys(fns)).toHaveLength(FUNCTION_NAMES.length);
    // the functions' security group and subnets come from the cluster stack (cross-stack imports)
    const fnSg = logicalId(s.clusterTemplate, 'AWS::EC2::SecurityGroup', 'NetworkFunctionsSg');
    for (const fn of Object.values(fns)) {
      const p = fn.Properties!;
      expect(p.Runtime).toBe('nodejs22.x');
      expect(p.Architectures).toEqual(['x86_64']);
      expect(p.Handler).toBe('index.handler');
      const sgs = (p.VpcConfig as { SecurityGroupIds: unknown[] }).SecurityGroupIds;
      expect(sgs).toHaveLength(1);
      expect(JSON.stringify(sgs)).toContain(fnSg);
      expect((p.VpcConfig as { SubnetIds: unknown[] }).SubnetIds).toHaveLength(3);
      // X-Ray is optional and off by default
      expect(p.TracingConfig).toBeUndefined();
      // every function has a reserved concurrency (the connection budget, test/cdk/cluster.test.ts)
      expect(p.ReservedConcurrentExecutions).toBeGreaterThan(0);
    }
    // one alias per API function, API Gateway's (`api`, review N9), without provisioned concurrency by default;
    // the signal consumer and cleanup have none
    const aliases = Object.values(resourcesOf(t, 'AWS::Lambda::Alias'));
    expect(aliases).toHaveLength(new Set(ROUTES.map((r) => r.fn)).size);
    for (const a of aliases)
      expect([a.Properties!.Name, a.Properties!.ProvisionedConcurrencyConfig]).toEqual(['api', undefined]);
    const endpoints = Object.values(resourcesOf(s.clusterTemplate, 'AWS::EC2::VPCEndpoint')).map((e) =>
      JSON.stringify(e.Properties!.ServiceName),
    );
    expect(endpoints.some((n) => n.includes('.xray"'))).toBe(false);
  });

  test('environment from the props (docs/settings.md)', () => {
    const t = s.template;
    const env = (
      appFunctions(t)[logicalId(t, 'AWS::Lambda::Function', 'FunctionsSpend')].Properties!.Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
    expect(env.UTXO_STORE).toBe(
      'aerospike://aerospike-1.aerospike.dev.utxo.internal:3000,aerospike-2.aerospike.dev.utxo.internal:3000,' +
        'aerospike-3.aerospike.dev.utxo.internal:3000/utxo?set=utxos',
    );
    const blobs = logicalId(t, 'AWS::S3::Bucket', 'StorageBlobs');
    expect(env.BLOB_STORE).toEqual({ 'Fn::Join': ['', ['s3://', { Ref: blobs }, '/blobs']] });
    expect(env.SIGNAL_QUEUE).toEqual({ Ref: logicalId(t, 'AWS::SQS::Queue', 'StorageSignalQueue') });
    expect(env).toMatchObject({
      UTXO_BATCH_SIZE: '20000',
      BLOCK_HEIGHT_RETENTION: '288',
      CLEANUP_SAFETY_WINDOW: '288',
      MAX_TX_SIZE_IN_STORE: '1048576',
      EXTERNALIZE_ALL: 'false',
      COINBASE_MATURITY: '100',
      POWERTOOLS_SERVICE_NAME: 'bsv-utxo-store',
      POWERTOOLS_METRICS_NAMESPACE: 'BsvUtxoStore',
    });
  });

  test('IAM: blob object actions only on <bucket>/blobs/*, only the actions each function needs', () => {
    const t = s.template;
    const blobs = logicalId(t, 'AWS::S3::Bucket', 'StorageBlobs');
    const expected: Record<string, string[]> = {
      create: ['s3:GetObject', 's3:PutObject', 's3:GetObjectTagging', 's3:PutObjectTagging'],
      get: ['s3:GetObject'],
      spend: [],
      unspend: [],
      setMined: [],
      getUtxo: [],
      status: [], // GET /v1/health's HeadBucket only (s3:ListBucket)
      admin: ['s3:GetObject', 's3:DeleteObject'],
      signals: ['s3:GetObject', 's3:GetObjectTagging', 's3:PutObjectTagging'],
      cleanup: ['s3:GetObject', 's3:DeleteObject'],
    };
    for (const [name, prefix] of Object.entries(FUNCTION_IDS)) {
      const statements = statementsOf(t, prefix);
      const s3Statements = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));
      const objectActions = s3Statements.filter((st) => st.Sid === 'BlobObjects').flatMap(actionsOf);
      expect([name, objectActions.sort()]).toEqual([name, [...expected[name]].sort()]);
      for (const st of s3Statements) {
        if (st.Sid === 'BlobObjects')
          expect(st.Resource).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [blobs, 'Arn'] }, '/blobs/*']] });
        else {
          expect(actionsOf(st)).toEqual(['s3:ListBucket']);
          expect(st.Resource).toEqual({ 'Fn::GetAtt': [blobs, 'Arn'] });
        }
      }
      // nothing anywhere with a wildcard action
      for (const st of statements) expect(actionsOf(st).some((a) => a.endsWith('*') && a !== 'xray:*')).toBe(false);
    }
  });

  test('IAM: send only where signals are sent, consume only for the consumer, both on the signal queue only', () => {
    const t = s.template;
    const queue = { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', 'StorageSignalQueue'), 'Arn'] };
    // cleanup sends the DAHSET signals of expirePreserve (external and paginated txs)
    const senders = ['create', 'spend', 'unspend', 'setMined', 'admin', 'cleanup'];
    for (const [name, prefix] of Object.entries(FUNCTION_IDS)) {
      const sqs = statementsOf(t, prefix).filter((st) => actionsOf(st).some((a) => a.startsWith('sqs:')));
      const sends = sqs.filter((st) => actionsOf(st).includes('sqs:SendMessage'));
      const receives = sqs.filter((st) => actionsOf(st).includes('sqs:ReceiveMessage'));
      if (name === 'cleanup') {
        // the signal queue, and its failure destination (the cleanup DLQ)
        expect(sends.map((st) => st.Resource)).toEqual(
          expect.arrayContaining([
            queue,
            { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', 'TriggersCleanupDlq'), 'Arn'] },
          ]),
        );
        expect(sends).toHaveLength(2);
      } else {
        expect([name, sends.length]).toEqual([name, senders.includes(name) ? 1 : 0]);
        if (senders.includes(name)) expect(sends[0].Resource).toEqual(queue);
      }
      expect([name, receives.length]).toEqual([name, name === 'signals' ? 1 : 0]);
      if (name === 'signals') expect(receives[0].Resource).toEqual(queue);
    }
  });

  test('SQS event source for the consumer reports batch item failures', () => {
    const t = s.template;
    t.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(t, 'AWS::Lambda::Function', 'FunctionsSignals') },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', 'StorageSignalQueue'), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
    });
  });

  test('cleanup schedule: rate 1 minute, DLQ and retry policy; async failures to the same DLQ', () => {
    const t = s.template;
    const dlq = { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', 'TriggersCleanupDlq'), 'Arn'] };
    t.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalId(t, 'AWS::Lambda::Function', 'FunctionsCleanup'), 'Arn'] },
          DeadLetterConfig: { Arn: dlq },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 300 },
        }),
      ],
    });
    // one shard (cleanupShards = 1): one rule, invoked with the scheduled event (no constant input)
    const rules = Object.values(resourcesOf(t, 'AWS::Events::Rule')).filter((r) => r.Properties!.ScheduleExpression);
    expect(rules).toHaveLength(1);
    expect((rules[0].Properties!.Targets as Record<string, unknown>[])[0].Input).toBeUndefined();
    t.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: dlq } },
    });
  });
});

describe('API', () => {
  test('the routes, their functions, roles and required fields are those of the route table (lib/http/route-table.ts)', () => {
    const camel = (fn: string) => fn.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    const required = (schema: z.ZodType | undefined): string[] =>
      schema
        ? (((z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { required?: string[] }).required ??
            []) as string[])
        : [];
    const props = (schema: z.ZodType | undefined): string[] =>
      schema
        ? Object.keys(
            (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: object }).properties ??
              {},
          )
        : [];
    const fromHandlers = HTTP_ROUTES.map((r) => ({
      route: `${r.method} ${r.path}`,
      fn: camel(r.fn),
      role: r.role,
      required: required(r.body).sort(),
      query: required(r.query).sort(),
      optionalQuery: props(r.query)
        .filter((q) => !required(r.query).includes(q))
        .sort(),
    })).sort((a, b) => a.route.localeCompare(b.route));
    const fromCdk = ROUTES.map((r) => ({
      route: `${r.method} ${r.path}`,
      fn: r.fn,
      role: r.role,
      required: [...(r.required ?? [])].sort(),
      query: [...(r.query ?? [])].sort(),
      optionalQuery: [...(r.optionalQuery ?? [])].sort(),
    })).sort((a, b) => a.route.localeCompare(b.route));
    expect(fromCdk).toEqual(fromHandlers);
  });

  test("unknown routes reach the admin function (404 ROUTE_NOT_FOUND), not API Gateway's 403", () => {
    const t = s.template;
    const admin = gatewayAliasId(t, 'admin');
    const proxy = Object.entries(resourcesOf(t, 'AWS::ApiGateway::Resource')).filter(
      ([, r]) => r.Properties!.PathPart === '{proxy+}',
    );
    expect(proxy).toHaveLength(1);
    const api = logicalId(t, 'AWS::ApiGateway::RestApi', 'Api');
    expect(proxy[0][1].Properties!.ParentId).toEqual({ 'Fn::GetAtt': [api, 'RootResourceId'] });
    for (const resourceId of [{ Ref: proxy[0][0] }, { 'Fn::GetAtt': [api, 'RootResourceId'] }]) {
      t.hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: 'ANY',
        ResourceId: resourceId,
        AuthorizationType: 'AWS_IAM',
        Integration: Match.objectLike({
          Type: 'AWS_PROXY',
          Uri: Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith([{ Ref: admin }])]) }),
        }),
      });
    }
  });

  test('every resource of the route tree has ANY to the admin function, so a wrong method is 405, not 403', () => {
    const t = s.template;
    const admin = logicalId(t, 'AWS::Lambda::Function', 'FunctionsAdmin');
    const adminAlias = gatewayAliasId(t, 'admin');
    const resources = resourcesOf(t, 'AWS::ApiGateway::Resource');
    const pathOf = (id: string): string => {
      const r = resources[id].Properties!;
      const parent = r.ParentId as { Ref?: string };
      return `${parent.Ref ? pathOf(parent.Ref) : ''}/${r.PathPart as string}`;
    };
    const anyTargets = new Map<string, unknown>();
    for (const m of Object.values(resourcesOf(t, 'AWS::ApiGateway::Method'))) {
      const p = m.Properties!;
      const ref = (p.ResourceId as { Ref?: string }).Ref;
      if (p.HttpMethod !== 'ANY' || !ref) continue;
      expect(p.AuthorizationType).toBe('AWS_IAM');
      anyTargets.set(pathOf(ref), JSON.stringify(p.Integration));
    }
    const tree = new Set<string>();
    for (const r of ROUTES) {
      const parts = r.path.split('/').filter(Boolean);
      parts.forEach((_, i) => tree.add('/' + parts.slice(0, i + 1).join('/')));
    }
    expect([...anyTargets.keys()].sort()).toEqual([...tree, '/{proxy+}'].sort());
    for (const integration of anyTargets.values()) expect(integration).toContain(`"${adminAlias}"`);

    // one source ARN (the whole stage) covers them all in the admin function's one resource policy, and no
    // AWS::Lambda::Permission is beside it (test/cdk/direct-invoke.test.ts)
    const adminPermissions = Object.values(resourcesOf(t, 'AWS::Lambda::Permission')).filter((p) =>
      JSON.stringify(p.Properties!.FunctionName).includes(admin),
    );
    expect(adminPermissions).toHaveLength(0);
  });

  test("API Gateway's own errors use the error envelope; 413 is PAYLOAD_TOO_LARGE", () => {
    const t = s.template;
    const responses = Object.values(resourcesOf(t, 'AWS::ApiGateway::GatewayResponse')).map((r) => r.Properties!);
    const byType = (type: string) => responses.find((r) => r.ResponseType === type);
    const template = (type: string) =>
      (byType(type)?.ResponseTemplates as Record<string, string> | undefined)?.['application/json'];
    expect(template('REQUEST_TOO_LARGE')).toMatch(/"code":"PAYLOAD_TOO_LARGE"/);
    expect(byType('REQUEST_TOO_LARGE')?.StatusCode ?? '413').toBe('413');
    for (const type of ['BAD_REQUEST_BODY', 'BAD_REQUEST_PARAMETERS'])
      expect(template(type)).toMatch(/^\{"error":\{"code":"INVALID_ARGUMENT","message":/);
    for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX'])
      expect(template(type)).toMatch(/^\{"error":\{"code":"\$context.error.responseType","message":/);
  });

  test('every route of docs/api.md, each with AWS_IAM authorization and the request validator', () => {
    const t = s.template;
    const methods = Object.values(resourcesOf(t, 'AWS::ApiGateway::Method'))
      .map((m) => m.Properties!)
      .filter((m) => m.HttpMethod !== 'ANY'); // the catch-all of unknown routes (next test)
    expect(methods).toHaveLength(ROUTES.length);
    const validator = logicalId(t, 'AWS::ApiGateway::RequestValidator', 'ApiValidator');
    for (const m of methods) {
      expect(m.AuthorizationType).toBe('AWS_IAM');
      expect(m.RequestValidatorId).toEqual({ Ref: validator });
      expect((m.Integration as { Type: string }).Type).toBe('AWS_PROXY');
    }
    t.hasResourceProperties('AWS::ApiGateway::RequestValidator', {
      ValidateRequestBody: true,
      ValidateRequestParameters: true,
    });
    const verbs = methods.map((m) => m.HttpMethod).sort();
    expect(verbs).toEqual(ROUTES.map((r) => r.method).sort());
    // path parameters are required
    t.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'GET',
      RequestParameters: {
        'method.request.path.txid': true,
        'method.request.path.vout': true,
        'method.request.querystring.utxoHash': false,
      },
    });
  });

  test('binary batch bodies pass as binary (binaryMediaTypes); only JSON bodies have a request model', () => {
    const t = s.template;
    t.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['application/octet-stream'] });
    // the body validator checks a body against the model of its content type: an octet-stream body has none
    const models = Object.values(resourcesOf(t, 'AWS::ApiGateway::Method'))
      .map((m) => m.Properties!.RequestModels as Record<string, unknown> | undefined)
      .filter((m) => m !== undefined);
    expect(models.length).toBeGreaterThan(0);
    for (const m of models) expect(Object.keys(m)).toEqual(['application/json']);
  });

  test('stage: access logs to a log group, throttling, execution logging', () => {
    const t = s.template;
    const logGroup = logicalId(t, 'AWS::Logs::LogGroup', 'ApiAccessLogs');
    t.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'dev',
      AccessLogSetting: {
        DestinationArn: { 'Fn::GetAtt': [logGroup, 'Arn'] },
        Format: Match.stringLikeRegexp('status'),
      },
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 1000,
          ThrottlingBurstLimit: 2000,
          LoggingLevel: 'ERROR',
          MetricsEnabled: true,
        }),
      ]),
    });
  });
});
