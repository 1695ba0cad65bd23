/**
 * The synthesised app brought up locally: fauxqs (e2e/aws-emulator.ts) with the template's buckets and queues (their
 * visibility timeout and redrive policy), one execution environment per function (e2e/lambda-host.ts), and the three
 * ways events reach the functions as the template wires them: the REST API (e2e/rest-api.ts), the SQS event source
 * mapping (e2e/event-source-mapping.ts: batches of the mapping's size, partial batch failures put back), the
 * EventBridge schedule, and direct invocation (the Lambda Invoke API, authorized by the caller role's
 * lambda:InvokeFunction grants).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { resourcesOfType, type Assembly, type StackArtifact } from './assembly';
import { queueUrlHost, startAwsEmulator, type AwsEmulator, type QueueDefinition } from './aws-emulator';
import { drain } from './event-source-mapping';
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
import { bucketName, queueName, standIns, type StandIns } from './stand-ins';

export interface LocalDeploymentOptions {
  assembly: Assembly;
  node: string;
  aerospikeHosts: string;
  workDir: string;
  /** first of the loopback ports used: fauxqs (S3 and SQS), then one Runtime API port per function */
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

export class LocalDeployment {
  readonly standIns: StandIns;
  readonly functions: DeployedFunction[];
  readonly hosts = new Map<string, LambdaHost>();
  readonly api: RestApiModel;
  /** caller roles by the stack output naming them (`ValidatorRoleArn` -> validator) */
  readonly roles = new Map<string, CallerRole>();
  /** function logical ids by their FunctionName output (`CreateFunctionName` -> create) */
  readonly outputFunctions = new Map<string, string>();
  /** fauxqs's endpoint, for S3 and SQS */
  readonly endpoint: string;
  /** every function invocation: function, trigger, cold start, ms */
  readonly invocations: { fn: string; trigger: string; coldStart: boolean; ms: number }[] = [];
  private emulator: AwsEmulator | undefined;
  /** the template's queues, dead-letter queues first (a redrive policy names an existing queue) */
  private readonly queues: (QueueDefinition & { url: string; arn: string })[];
  private readonly service: StackArtifact;

  constructor(private readonly o: LocalDeploymentOptions) {
    this.endpoint = `http://127.0.0.1:${o.basePort}`;
    this.standIns = standIns(o.assembly, {
      sqsUrlHost: queueUrlHost(o.basePort),
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

    this.queues = resourcesOfType(o.assembly, 'AWS::SQS::Queue')
      .map(({ stack, id, resource }) => {
        const p = resource.Properties ?? {};
        const redrive = p.RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number } | undefined;
        const attributes: Record<string, string> = { VisibilityTimeout: String(p.VisibilityTimeout ?? 30) };
        if (redrive)
          attributes.RedrivePolicy = JSON.stringify({
            deadLetterTargetArn: resolveValue(r, stack, redrive.deadLetterTargetArn, id),
            maxReceiveCount: Number(redrive.maxReceiveCount),
          });
        return {
          name: queueName(stack, id),
          attributes,
          url: resolveValue(r, stack, { Ref: id }, id),
          arn: resolveValue(r, stack, { 'Fn::GetAtt': [id, 'Arn'] }, id),
        };
      })
      .sort((a, b) => Number('RedrivePolicy' in a.attributes) - Number('RedrivePolicy' in b.attributes));

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
          // SQS needs none (the SDK sends to the queue URL's host, fauxqs's)
          endpoints: { AWS_ENDPOINT_URL_S3: this.endpoint },
        }),
      );
    });
  }

  private queueNameOfArn(arn: string): string {
    return arn.slice(arn.lastIndexOf(':') + 1);
  }

  async start(): Promise<void> {
    this.emulator = await startAwsEmulator({
      port: this.o.basePort,
      buckets: resourcesOfType(this.o.assembly, 'AWS::S3::Bucket').map(({ stack, id }) => bucketName(stack, id)),
      queues: this.queues.map(({ name, attributes }) => ({ name, attributes })),
    });
    // the functions were given the URLs and ARNs the template resolves to; fauxqs must have made the same
    for (const q of this.queues) {
      const made = this.emulator.queues.get(q.name)!;
      if (made.url !== q.url || made.arn !== q.arn)
        throw new Error(`fauxqs made ${q.name} as ${made.url} ${made.arn}, the template says ${q.url} ${q.arn}`);
    }
    for (const h of this.hosts.values()) await h.listen();
  }

  async stop(): Promise<void> {
    for (const h of this.hosts.values()) await h.close();
    await this.emulator?.stop();
  }

  /** every SQS operation the functions and the event source mapping called */
  get sqsCalls(): string[] {
    return this.emulator?.sqsCalls ?? [];
  }

  private get aws(): AwsEmulator {
    if (!this.emulator) throw new Error('the local deployment is not started');
    return this.emulator;
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

  /** Invokes (the unqualified function, or `qualifier`) and fails loudly on anything but an answer. */
  async invoke(logicalId: string, event: unknown, trigger: string, qualifier?: string): Promise<unknown> {
    const host = this.host(logicalId);
    const result = await host.invoke(event, qualifier);
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
    // the ARN the integration URI names (the gateway alias), as API Gateway invokes it
    const result = (await this.invoke(
      match.method.functionId,
      event,
      `${req.method} ${match.method.resourcePath}`,
      match.method.qualifier,
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
      const queue = this.aws.queues.get(this.queueNameOfArn(queueArn));
      if (!queue) throw new Error(`${id}: the event source ${queueArn} is not a queue of the template`);
      const fnRef = (p.FunctionName as { Ref?: string }).Ref!;
      const done = await drain(
        {
          sqs: this.aws.sqs,
          queueUrl: queue.url,
          queueArn,
          region: r.pseudo['AWS::Region'],
          batchSize: Number(p.BatchSize ?? 10),
          reportBatchItemFailures: ((p.FunctionResponseTypes ?? []) as string[]).includes('ReportBatchItemFailures'),
          invoke: (event) => this.invoke(fnRef, event, 'sqs'),
        },
        maxRounds,
      );
      batches += done.batches;
      messages += done.messages;
      failedItems += done.failedItems;
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
