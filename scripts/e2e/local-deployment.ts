/**
 * The synthesised app brought up locally: s3rver with the template's buckets, the SQS stand-in with its queues, one
 * execution environment per function (e2e/lambda-host.ts), and the three ways events reach the functions as the
 * template wires them: the REST API (e2e/rest-api.ts), the SQS event source mapping (batches of the mapping's
 * size, partial batch failures put back), the EventBridge schedule, and direct invocation (the Lambda Invoke API,
 * authorized by the caller role's lambda:InvokeFunction grants).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { resourcesOfType, type Assembly, type StackArtifact } from './assembly';
import { deployedFunctions, type DeployedFunction } from './functions';
import { resolveValue } from './intrinsics';
import { LambdaHost, type InvokeResult } from './lambda-host';
import {
  authorize,
  callerRoles,
  executeApiArn,
  gatewayAnswer,
  matchMethod,
  proxyEvent,
  restApiModel,
  validateRequest,
  type CallerRole,
  type HttpAnswer,
  type HttpRequest,
  type RestApiModel,
} from './rest-api';
import { SqsStandIn, type QueueSpec } from './sqs-stand-in';
import { bucketName, queueName, standIns, type StandIns } from './stand-ins';

export interface LocalDeploymentOptions {
  assembly: Assembly;
  node: string;
  aerospikeHosts: string;
  workDir: string;
  /** first of the loopback ports used: s3rver, SQS, then one Runtime API port per function */
  basePort: number;
  /** template parameters without a default */
  parameters?: Record<string, string>;
}

/** A failure of the platform around a function (init error, crash, timeout) or of the function itself. */
export class InvocationError extends Error {
  readonly code = 'E2E_INVOCATION';
  constructor(fn: string, result: InvokeResult, log: string) {
    const what = result.environmentError ?? JSON.stringify(result.functionError);
    super(`${fn}: ${what}\n--- function log (tail):\n${log}`);
    this.name = 'InvocationError';
  }
}

interface S3rverInstance {
  run(): Promise<unknown>;
  close(): Promise<void>;
}

export class LocalDeployment {
  readonly standIns: StandIns;
  readonly functions: DeployedFunction[];
  readonly hosts = new Map<string, LambdaHost>();
  readonly api: RestApiModel;
  /** caller roles by the stack output naming them (`ValidatorRoleArn` -> validator) */
  readonly roles = new Map<string, CallerRole>();
  /** function logical ids by their FunctionName output (`CreateFunctionName` -> create) */
  readonly outputFunctions = new Map<string, string>();
  readonly sqs: SqsStandIn;
  readonly s3Endpoint: string;
  /** every function invocation: function, trigger, cold start, ms */
  readonly invocations: { fn: string; trigger: string; coldStart: boolean; ms: number }[] = [];
  private s3rver: S3rverInstance | undefined;
  private readonly service: StackArtifact;

  constructor(private readonly o: LocalDeploymentOptions) {
    const sqsPort = o.basePort + 1;
    this.s3Endpoint = `http://127.0.0.1:${o.basePort}`;
    this.standIns = standIns(o.assembly, {
      sqsEndpoint: `http://127.0.0.1:${sqsPort}`,
      aerospikeHosts: o.aerospikeHosts,
      parameters: o.parameters,
    });
    const r = this.standIns.resolver;
    this.functions = deployedFunctions(o.assembly, this.standIns);
    this.api = restApiModel(o.assembly, r);
    this.service = this.api.stack;
    const roles = callerRoles(o.assembly, r, this.service);
    for (const [name, out] of Object.entries(this.service.template.Outputs ?? {})) {
      const att = (out.Value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
      const ref = (out.Value as { Ref?: string }).Ref;
      const m = /^(.+)RoleArn$/.exec(name);
      if (m && att && roles.has(att[0]))
        this.roles.set(m[1].charAt(0).toLowerCase() + m[1].slice(1), roles.get(att[0])!);
      const f = /^(.+)FunctionName$/.exec(name);
      if (f && ref) this.outputFunctions.set(f[1].charAt(0).toLowerCase() + f[1].slice(1), ref);
    }

    const queues: QueueSpec[] = resourcesOfType(o.assembly, 'AWS::SQS::Queue').map(({ stack, id, resource }) => {
      const p = resource.Properties ?? {};
      const redrive = p.RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number } | undefined;
      return {
        name: queueName(stack, id),
        arn: resolveValue(r, stack, { 'Fn::GetAtt': [id, 'Arn'] }, id),
        visibilityTimeoutSeconds: Number(p.VisibilityTimeout ?? 30),
        redrive: redrive
          ? {
              deadLetterQueue: this.queueNameOfArn(resolveValue(r, stack, redrive.deadLetterTargetArn, id)),
              maxReceiveCount: Number(redrive.maxReceiveCount),
            }
          : undefined,
      };
    });
    this.sqs = new SqsStandIn(queues, sqsPort, r.pseudo['AWS::AccountId']);

    this.functions.forEach((fn, i) => {
      const workDir = path.join(o.workDir, fn.logicalId);
      mkdirSync(workDir, { recursive: true });
      this.hosts.set(
        fn.logicalId,
        new LambdaHost({
          fn,
          node: o.node,
          workDir,
          port: o.basePort + 10 + i,
          region: r.pseudo['AWS::Region'],
          accountId: r.pseudo['AWS::AccountId'],
          // the S3 client has no endpoint in the code: the SDK's service-specific endpoint variable points it here;
          // SQS needs none (the SDK sends to the queue URL's host, the stand-in's)
          endpoints: { AWS_ENDPOINT_URL_S3: this.s3Endpoint },
        }),
      );
    });
  }

  private queueNameOfArn(arn: string): string {
    return arn.slice(arn.lastIndexOf(':') + 1);
  }

  async start(): Promise<void> {
    // s3rver ships no type declarations
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const S3rver = require('s3rver') as new (o: Record<string, unknown>) => S3rverInstance;
    const buckets = resourcesOfType(this.o.assembly, 'AWS::S3::Bucket').map(({ stack, id }) => ({
      name: bucketName(stack, id),
    }));
    const dir = path.join(this.o.workDir, 's3rver');
    mkdirSync(dir, { recursive: true });
    this.s3rver = new S3rver({
      address: '127.0.0.1',
      port: this.o.basePort,
      silent: true,
      directory: dir,
      configureBuckets: buckets,
    });
    await this.s3rver.run();
    await this.sqs.listen();
    for (const h of this.hosts.values()) await h.listen();
  }

  async stop(): Promise<void> {
    for (const h of this.hosts.values()) await h.close();
    await this.sqs.close();
    await this.s3rver?.close();
  }

  host(logicalId: string): LambdaHost {
    const h = this.hosts.get(logicalId);
    if (!h) throw new Error(`no function ${logicalId}`);
    return h;
  }

  role(name: string): CallerRole {
    const role = this.roles.get(name);
    if (!role)
      throw new Error(`the template has no caller role ${name} (outputs: ${[...this.roles.keys()].join(', ')})`);
    return role;
  }

  /** Invokes and fails loudly on anything but an answer. */
  async invoke(logicalId: string, event: unknown, trigger: string): Promise<unknown> {
    const host = this.host(logicalId);
    const result = await host.invoke(event);
    this.invocations.push({ fn: logicalId, trigger, coldStart: result.coldStart, ms: result.durationMs });
    if (result.environmentError || result.functionError) throw new InvocationError(host.fn.name, result, host.tail());
    return result.payload;
  }

  /** An HTTP request to the API by a caller role, as API Gateway serves it. */
  async request(roleName: string, req: HttpRequest): Promise<HttpAnswer> {
    const role = this.role(roleName);
    const url = new URL(req.url, 'https://local');
    const match = matchMethod(this.api.methods, req.method, url.pathname);
    if (match === 'no-resource' || match === 'no-method')
      return gatewayAnswer(this.api, 'MISSING_AUTHENTICATION_TOKEN', 'Missing Authentication Token');
    if (match.method.authorizationType === 'AWS_IAM') {
      const decision = authorize(
        role.statements,
        this.api.resourcePolicy,
        'execute-api:Invoke',
        executeApiArn(this.api, req.method, url.pathname),
        { 'aws:PrincipalArn': role.arn },
      );
      if (decision !== 'allow')
        return {
          ...gatewayAnswer(
            this.api,
            'ACCESS_DENIED',
            `User: arn:aws:sts::${this.api.accountId}:assumed-role/${role.name}/e2e is not authorized to access this resource`,
          ),
          method: match.method,
        };
    }
    const invalid = validateRequest(this.api, match.method, req);
    if (invalid) return { ...invalid, method: match.method };
    const event = proxyEvent(this.api, match, req, role);
    const result = (await this.invoke(
      match.method.functionId,
      event,
      `${req.method} ${match.method.resourcePath}`,
    )) as {
      statusCode?: unknown;
      headers?: Record<string, string>;
      body?: unknown;
    } | null;
    if (
      !result ||
      typeof result.statusCode !== 'number' ||
      (result.body !== undefined && typeof result.body !== 'string')
    )
      return { ...gatewayAnswer(this.api, 'DEFAULT_5XX', 'Internal server error'), method: match.method };
    return {
      status: result.statusCode,
      headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)])),
      body: (result.body as string | undefined) ?? '',
      method: match.method,
    };
  }

  /** Lambda Invoke by a caller role: allowed only by the role's lambda:InvokeFunction grant on the function. */
  async invokeDirect(functionKey: string, roleName: string, event: unknown): Promise<unknown> {
    const logicalId = this.outputFunctions.get(functionKey);
    if (!logicalId) throw new Error(`the template names no function ${functionKey} for direct invocation`);
    const role = this.role(roleName);
    const arn = this.host(logicalId).arn;
    const decision = authorize(role.statements, [], 'lambda:InvokeFunction', arn, { 'aws:PrincipalArn': role.arn });
    if (decision !== 'allow') return { accessDenied: `${role.name} may not invoke ${arn}` };
    return this.invoke(logicalId, event, `direct ${functionKey}`);
  }

  /**
   * The SQS event source mappings: batches of BatchSize to the function until the queues are empty; with
   * ReportBatchItemFailures the reported items return to the queue, a failed invocation returns the whole batch.
   */
  async drainEventSources(maxRounds = 50): Promise<{ batches: number; messages: number; failedItems: number }> {
    const r = this.standIns.resolver;
    let batches = 0;
    let messages = 0;
    let failedItems = 0;
    for (const { stack, id, resource } of resourcesOfType(this.o.assembly, 'AWS::Lambda::EventSourceMapping')) {
      const p = resource.Properties ?? {};
      const queueArn = resolveValue(r, stack, p.EventSourceArn, id);
      const name = this.queueNameOfArn(queueArn);
      const fnRef = (p.FunctionName as { Ref?: string }).Ref!;
      const partial = ((p.FunctionResponseTypes ?? []) as string[]).includes('ReportBatchItemFailures');
      for (let round = 0; round < maxRounds; round++) {
        const received = this.sqs.receive(name, Number(p.BatchSize ?? 10));
        if (received.length === 0) break;
        batches++;
        messages += received.length;
        const event: SQSEvent = {
          Records: received.map((m) => ({
            messageId: m.messageId,
            receiptHandle: m.receiptHandle!,
            body: m.body,
            attributes: {
              ApproximateReceiveCount: String(m.receiveCount),
              SentTimestamp: String(m.sentTimestamp),
              SenderId: m.senderId,
              ApproximateFirstReceiveTimestamp: String(m.firstReceiveTimestamp),
            },
            messageAttributes: {},
            md5OfBody: m.md5OfBody,
            eventSource: 'aws:sqs',
            eventSourceARN: queueArn,
            awsRegion: r.pseudo['AWS::Region'],
          })),
        };
        const answer = (await this.invoke(fnRef, event, 'sqs')) as {
          batchItemFailures?: { itemIdentifier: string }[];
        } | null;
        const failed = new Set(partial ? (answer?.batchItemFailures ?? []).map((f) => f.itemIdentifier) : []);
        failedItems += failed.size;
        for (const m of received)
          if (failed.has(m.messageId)) this.sqs.release(name, m.receiptHandle!);
          else this.sqs.delete(name, m.receiptHandle!);
      }
    }
    return { batches, messages, failedItems };
  }

  /**
   * Every scheduled rule's targets, invoked with the event EventBridge Scheduler/Events sends: the target's constant
   * input when it has one (a cleanup shard's), else the scheduled event.
   */
  async runSchedules(): Promise<unknown[]> {
    const r = this.standIns.resolver;
    const out: unknown[] = [];
    for (const { stack, id, resource } of resourcesOfType(this.o.assembly, 'AWS::Events::Rule')) {
      const p = resource.Properties ?? {};
      if (!p.ScheduleExpression) continue;
      const ruleName = String(p.Name ?? `${stack.name}-${id}`);
      for (const t of (p.Targets ?? []) as { Arn: unknown; Input?: unknown }[]) {
        const att = (t.Arn as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
        if (!att || stack.template.Resources[att[0]]?.Type !== 'AWS::Lambda::Function')
          throw new Error(`${id}: a schedule target that is not a function of the stack`);
        const event = {
          version: '0',
          id: randomUUID(),
          'detail-type': 'Scheduled Event',
          source: 'aws.events',
          account: r.pseudo['AWS::AccountId'],
          time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
          region: r.pseudo['AWS::Region'],
          resources: [`arn:aws:events:${r.pseudo['AWS::Region']}:${r.pseudo['AWS::AccountId']}:rule/${ruleName}`],
          detail: {},
        };
        const input = typeof t.Input === 'string' ? (JSON.parse(t.Input) as unknown) : event;
        out.push(await this.invoke(att[0], input, 'schedule'));
      }
    }
    return out;
  }
}
