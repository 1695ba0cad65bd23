/**
 * The non-HTTP triggers: the signal queue -> signal consumer (partial batch failures reported per message), and the
 * EventBridge schedule -> cleanup pass (with a DLQ and a retry policy).
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

export interface TriggersProps {
  config: UtxoStoreConfig;
  signalQueue: sqs.IQueue;
  signalConsumer: lambda.IFunction;
  cleanup: lambda.IFunction;
}

export class Triggers extends Construct {
  readonly cleanupRule: events.Rule;
  /** failed cleanup deliveries (EventBridge) and failed asynchronous cleanup invocations (Lambda) */
  readonly cleanupDlq: sqs.Queue;

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

    this.cleanupRule = new events.Rule(this, 'CleanupSchedule', {
      description: `bsv-utxo-store ${config.stage}: DAH cleanup pass`,
      schedule: events.Schedule.rate(Duration.minutes(config.cleanupScheduleMinutes)),
      targets: [
        new targets.LambdaFunction(props.cleanup, {
          deadLetterQueue: this.cleanupDlq,
          retryAttempts: config.cleanupRetryAttempts,
          maxEventAge: Duration.seconds(config.cleanupMaxEventAgeSeconds),
        }),
      ],
    });

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
