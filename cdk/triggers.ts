/**
 * The non-HTTP triggers: the signal queue -> signal consumer (partial batch failures reported per message), and the
 * EventBridge schedule -> cleanup pass (with a DLQ and a retry policy): one rule, or with cleanupShards = n > 1 one
 * rule per shard, whose target's constant input `{ cleanupShard: i, cleanupShards: n }` makes the invocation run shard
 * i of the pass (functions/cleanup.ts, docs/cleanup.md "Shards").
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { UtxoStoreConfig } from './config';
import { FunctionPolicy, triggerPolicyDocument, type PolicyTarget } from './function-policy';

/**
 * The Lambda target without its AWS::Lambda::Permission: the cleanup function's one full resource policy
 * (AWS::Lambda::ResourcePolicy, below) allows the rules instead, and AWS advises against both resource types on one
 * function.
 */
class LambdaTargetInPolicy extends targets.LambdaFunction {
  override bind(rule: events.IRule, id?: string): events.RuleTargetConfig {
    const config = super.bind(rule, id);
    for (const child of rule.node.children)
      if (child instanceof lambda.CfnPermission) rule.node.tryRemoveChild(child.node.id);
    return config;
  }
}

export interface TriggersProps {
  config: UtxoStoreConfig;
  signalQueue: sqs.IQueue;
  signalConsumer: lambda.IFunction;
  cleanup: lambda.IFunction;
  /** with provisioned concurrency: the other invocable ARNs of each (the unqualified function, the version) */
  qualified?: { signals?: lambda.IFunction[]; cleanup?: lambda.IFunction[] };
}

export class Triggers extends Construct {
  /** the cleanup schedule: one rule per shard (one rule without input when cleanupShards is 1) */
  readonly cleanupRules: events.Rule[];
  /** failed cleanup deliveries (EventBridge) and failed asynchronous cleanup invocations (Lambda) */
  readonly cleanupDlq: sqs.Queue;
  /** the resource policies of the two functions: only their triggers may invoke them (cdk/function-policy.ts) */
  readonly policies: { signals: FunctionPolicy; cleanup: FunctionPolicy };

  constructor(scope: Construct, id: string, props: TriggersProps) {
    super(scope, id);
    const { config } = props;

    props.signalConsumer.addEventSource(
      new sources.SqsEventSource(props.signalQueue, {
        batchSize: config.signalBatchSize,
        reportBatchItemFailures: true,
        maxBatchingWindow: Duration.seconds(1),
        // at most this many concurrent consumers (within its reserved concurrency: the connection budget)
        maxConcurrency: config.signalMaxConcurrency,
      }),
    );

    this.cleanupDlq = new sqs.Queue(this, 'CleanupDlq', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    // One rule per shard rather than one rule with n targets (at most 5 per rule); the first keeps the id of the
    // single rule, so that going from 1 to n shards adds rules and replaces none.
    const n = config.cleanupShards;
    this.cleanupRules = Array.from(
      { length: n },
      (_, i) =>
        new events.Rule(this, i === 0 ? 'CleanupSchedule' : `CleanupSchedule${i}`, {
          description: `bsv-utxo-store ${config.stage}: DAH cleanup pass${n > 1 ? `, shard ${i} of ${n}` : ''}`,
          schedule: events.Schedule.rate(Duration.minutes(config.cleanupScheduleMinutes)),
          targets: [
            new LambdaTargetInPolicy(props.cleanup, {
              deadLetterQueue: this.cleanupDlq,
              retryAttempts: config.cleanupRetryAttempts,
              maxEventAge: Duration.seconds(config.cleanupMaxEventAgeSeconds),
              ...(n > 1 ? { event: events.RuleTargetInput.fromObject({ cleanupShard: i, cleanupShards: n }) } : {}),
            }),
          ],
        }),
    );

    const ruleArns = this.cleanupRules.map((r) => r.ruleArn);
    // the same document on every ARN of each (a resource policy is per qualifier)
    const everyArn = (fn: lambda.IFunction, qualified: lambda.IFunction[] = [], document: PolicyTarget['document']) =>
      [fn, ...qualified].map((target) => ({ fn: target, document }));
    this.policies = {
      signals: new FunctionPolicy(
        this,
        'SignalsPolicy',
        everyArn(props.signalConsumer, props.qualified?.signals, (arn) =>
          triggerPolicyDocument(arn, { ruleArns: [], ownRoleArn: props.signalConsumer.role?.roleArn }),
        ),
      ),
      cleanup: new FunctionPolicy(
        this,
        'CleanupPolicy',
        everyArn(props.cleanup, props.qualified?.cleanup, (arn) => triggerPolicyDocument(arn, { ruleArns })),
      ),
    };

    // EventBridge invokes asynchronously. A pass that fails is not retried by Lambda (the next scheduled pass resumes
    // where it stopped, docs/cleanup.md); the failure record goes to the same DLQ, which is alarmed on.
    if (props.cleanup instanceof lambda.Function || props.cleanup instanceof lambda.Alias) {
      props.cleanup.configureAsyncInvoke({
        retryAttempts: 0,
        maxEventAge: Duration.seconds(config.cleanupMaxEventAgeSeconds),
        onFailure: new destinations.SqsDestination(this.cleanupDlq),
      });
    }
  }
}
