/** Configuration area: signals, scheduled cleanup, logs, tracing, alarms, retention of data, Powertools names. */
import { DEFAULTS as RUNTIME_DEFAULTS } from '../../lib/domain/config';
import { ConfigurationError, int, scriptSafe, type ContextSpec } from './errors';

export interface OperationsSettings {
  /** SQS batch size of the signal consumer */
  signalBatchSize: number;
  /** the SQS event source's maximumConcurrency (2..1000, at most the consumer's reserved concurrency) */
  signalMaxConcurrency: number;
  /** receives before a signal moves to the DLQ */
  signalMaxReceiveCount: number;
  /** minutes between scheduled cleanup passes */
  cleanupScheduleMinutes: number;
  /**
   * invocations a scheduled pass is split over, one rule per shard (docs/cleanup.md, "Shards"): 1 to
   * MAX_CLEANUP_SHARDS, at most the functions' cleanup partition ranges (CLEANUP_PARTITION_RANGES, left at its default
   * by the stack) and at most the cleanup function's reserved concurrency
   */
  cleanupShards: number;
  /** EventBridge delivery retries of a cleanup invocation */
  cleanupRetryAttempts: number;
  /** seconds EventBridge keeps retrying a cleanup event */
  cleanupMaxEventAgeSeconds: number;
  /** days of retention of the function, API access and VPC flow log groups */
  logRetentionDays: number;
  /** X-Ray tracing on functions and the API stage (adds the X-Ray interface endpoint) */
  xrayTracing: boolean;
  /**
   * email subscribed to the alarm topic; required outside stage `dev` (alarms nobody receives protect nothing); unset
   * in dev -> alarms without notification (no topic)
   */
  alarmEmail?: string;
  /** alarm threshold: age of the oldest signal in seconds */
  signalAgeAlarmSeconds: number;
  /** alarm threshold: API 5xx error rate in percent */
  apiErrorRateAlarmPercent: number;
  /** keep the buckets, queues' data and log groups on stack deletion */
  retainData: boolean;
  powertoolsServiceName: string;
  powertoolsMetricsNamespace: string;
}

export function operationsDefaults(stage: string): OperationsSettings {
  const prod = stage === 'prod';
  return {
    signalBatchSize: 10,
    signalMaxConcurrency: 10,
    signalMaxReceiveCount: 5,
    cleanupScheduleMinutes: 1,
    cleanupShards: 1,
    cleanupRetryAttempts: 2,
    cleanupMaxEventAgeSeconds: 300,
    logRetentionDays: prod ? 90 : 30,
    xrayTracing: false,
    signalAgeAlarmSeconds: 600,
    apiErrorRateAlarmPercent: 1,
    retainData: prod,
    powertoolsServiceName: 'bsv-utxo-store',
    powertoolsMetricsNamespace: 'BsvUtxoStore',
  };
}

export const OPERATIONS_CONTEXT: ContextSpec = {
  keys: {
    signalBatchSize: 'signalBatchSize',
    signalMaxConcurrency: 'signalMaxConcurrency',
    signalMaxReceiveCount: 'signalMaxReceiveCount',
    cleanupScheduleMinutes: 'cleanupScheduleMinutes',
    cleanupShards: 'cleanupShards',
    cleanupRetryAttempts: 'cleanupRetryAttempts',
    cleanupMaxEventAgeSeconds: 'cleanupMaxEventAgeSeconds',
    logRetentionDays: 'logRetentionDays',
    xrayTracing: 'xrayTracing',
    alarmEmail: 'alarmEmail',
    signalAgeAlarmSeconds: 'signalAgeAlarmSeconds',
    apiErrorRateAlarmPercent: 'apiErrorRateAlarmPercent',
    retainData: 'retainData',
    powertoolsServiceName: 'powertoolsServiceName',
    powertoolsMetricsNamespace: 'powertoolsMetricsNamespace',
  },
  optional: ['alarmEmail'],
};

/** The retention periods CloudWatch Logs accepts. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

/** Most invocations a scheduled cleanup pass is split over. */
export const MAX_CLEANUP_SHARDS = 16;
/**
 * The partition ranges of the deployed cleanup function: the stack leaves CLEANUP_PARTITION_RANGES at its default
 * (scripts/e2e/template-checks.ts LAMBDA_DEFAULTED); a shard is a set of those ranges.
 */
export const DEPLOYED_CLEANUP_PARTITION_RANGES = RUNTIME_DEFAULTS.CLEANUP_PARTITION_RANGES;

/** The reserved concurrency of the two functions the operations settings are bounded by. */
interface Reserved {
  functions: { signals: { reservedConcurrency?: number }; cleanup: { reservedConcurrency?: number } };
}

/** The signal consumer's batch and concurrency (checked before the API's settings). */
export function validateSignals(c: OperationsSettings & Reserved): void {
  int('signalBatchSize', c.signalBatchSize, 1, 10);
  // SQS event sources: maximumConcurrency from 2 to 1000 (Lambda developer guide, "Configuring maximum concurrency
  // for Amazon SQS event sources")
  int('signalMaxConcurrency', c.signalMaxConcurrency, 2, 1000);
  const signalsReserved = c.functions.signals.reservedConcurrency;
  if (signalsReserved !== undefined && c.signalMaxConcurrency > signalsReserved)
    throw new ConfigurationError(
      'signalMaxConcurrency',
      `${c.signalMaxConcurrency} is above the consumer's reserved concurrency ${signalsReserved} (the excess would only be throttled)`,
    );
}

export function validateOperations(c: OperationsSettings & Reserved): void {
  int('signalMaxReceiveCount', c.signalMaxReceiveCount, 1, 1000);
  int('cleanupScheduleMinutes', c.cleanupScheduleMinutes, 1, 1440);
  cleanupShards(c);
  int('cleanupRetryAttempts', c.cleanupRetryAttempts, 0, 185);
  // also the cleanup function's async-invoke maxEventAge, which Lambda bounds at 6 h (EventBridge's own allows 24 h)
  int('cleanupMaxEventAgeSeconds', c.cleanupMaxEventAgeSeconds, 60, 21600);
}

/**
 * CloudWatch namespace characters (CloudWatch API Reference, MetricDatum/Namespace: alphanumerics, `.`, `-`, `_`,
 * `/`, `#`, `:`); the nodes' namespace is this one + `/Aerospike` and reaches the backup script and the agent config.
 */
const METRICS_NAMESPACE_CHAR = /^[A-Za-z0-9._\-/#:]$/;
const SERVICE_NAME_CHAR = /^[A-Za-z0-9._-]$/;

export function validateObservability(c: OperationsSettings & { stage: string }): void {
  scriptSafe(
    'powertoolsMetricsNamespace',
    c.powertoolsMetricsNamespace,
    METRICS_NAMESPACE_CHAR,
    'a CloudWatch namespace',
    200,
  );
  if (c.powertoolsMetricsNamespace.startsWith('AWS/'))
    throw new ConfigurationError('powertoolsMetricsNamespace', 'a namespace starting with "AWS/" is reserved for AWS');
  scriptSafe('powertoolsServiceName', c.powertoolsServiceName, SERVICE_NAME_CHAR, 'a service name', 100);
  if (!LOG_RETENTION_DAYS.includes(c.logRetentionDays))
    throw new ConfigurationError('logRetentionDays', `expected one of ${LOG_RETENTION_DAYS.join(', ')}`);
  int('signalAgeAlarmSeconds', c.signalAgeAlarmSeconds, 60, 1209600);
  if (typeof c.apiErrorRateAlarmPercent !== 'number' || c.apiErrorRateAlarmPercent <= 0)
    throw new ConfigurationError('apiErrorRateAlarmPercent', 'expected a positive number');
  if (c.alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+$/.test(c.alarmEmail))
    throw new ConfigurationError('alarmEmail', 'expected an email address');
  if (c.alarmEmail === undefined && c.stage !== 'dev')
    throw new ConfigurationError(
      'alarmEmail',
      'required outside stage dev: the address the alarm topic notifies (without it no alarm reaches anyone)',
    );
}

/** cleanupShards: within [1, MAX_CLEANUP_SHARDS], the function's partition ranges and its reserved concurrency. */
function cleanupShards(c: OperationsSettings & Reserved): void {
  int('cleanupShards', c.cleanupShards, 1, MAX_CLEANUP_SHARDS);
  if (c.cleanupShards > DEPLOYED_CLEANUP_PARTITION_RANGES)
    throw new ConfigurationError(
      'cleanupShards',
      `${c.cleanupShards} shards but the cleanup function splits a pass into ${DEPLOYED_CLEANUP_PARTITION_RANGES} ` +
        'partition ranges (CLEANUP_PARTITION_RANGES): a shard is a set of ranges, so at most that many',
    );
  const reserved = c.functions.cleanup.reservedConcurrency;
  if (reserved !== undefined && c.cleanupShards > reserved)
    throw new ConfigurationError(
      'cleanupShards',
      `${c.cleanupShards} shards run at once every tick, above the cleanup function's reserved concurrency ` +
        `${reserved} (the excess would be throttled): raise reservedConcurrency=cleanup:${c.cleanupShards}`,
    );
}
