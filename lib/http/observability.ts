/**
 * Powertools Logger (structured JSON, the Lambda request id injected by injectLambdaContext) and Metrics (CloudWatch
 * EMF): one Logger and one Metrics per execution environment (its cold start, the scheduled cleanup's report), and a
 * Metrics of its own per API request (requestMetrics). Service name and namespace come from the usual Powertools
 * variables (POWERTOOLS_SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE) with project defaults.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { CleanupMetrics } from '../cleanup';
import type { SpendRefusal } from '../store/types';

const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'bsv-utxo-store';

export const logger = new Logger({ serviceName });

const metricsOptions = { serviceName, namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'BsvUtxoStore' };

export const metrics = new Metrics(metricsOptions);

/**
 * A request's own metrics, published when it ends as one EMF record under its operation. The shared instance would
 * mix requests served at once by one process (the local server): a request's dimension overwrote another's, and its
 * metrics were published under the other's operation.
 */
export function requestMetrics(): Metrics {
  return new Metrics(metricsOptions);
}

export { MetricUnit };

/**
 * The invocation's own identity for a log line, as the logger's injected context names it (Powertools' keys): the
 * local server serves requests at once in one process, where the shared logger's context is the last request's, so
 * a request's own lines carry these (an extra key wins over the injected one). In Lambda they are the same values.
 */
export function invocationOf(context: Context | undefined): Record<string, string> {
  if (!context?.awsRequestId) return {};
  return {
    function_request_id: context.awsRequestId,
    function_name: context.functionName,
    function_arn: context.invokedFunctionArn,
    function_memory_size: String(context.memoryLimitInMB),
  };
}

/** Adapter for CleanupService / emitMetrics: `...Ms` names are milliseconds, the rest counts. */
export function cleanupMetricsOf(target: Metrics): CleanupMetrics {
  return {
    count(name: string, value: number): void {
      target.addMetric(name, name.endsWith('Ms') ? MetricUnit.Milliseconds : MetricUnit.Count, value);
    },
  };
}

/** The execution environment's: the scheduled cleanup's report (functions/cleanup.ts). */
export const cleanupMetrics: CleanupMetrics = cleanupMetricsOf(metrics);

/** One metric with its own dimensions, published at once (errors by code). */
export function emitSingle(name: string, dimensions: Record<string, string>, value = 1): void {
  const single = metrics.singleMetric();
  single.addDimensions(dimensions);
  single.addMetric(name, MetricUnit.Count, value);
}

/**
 * SpendsRefused: txs whose applied spends the acknowledgement guard answered in doubt instead of OK (SPEND_ACK_GUARD,
 * docs/decisions/0007), published twice: the total (dimension `service`, the alarm's) and by `reason`
 * (`service`, `reason`: the dashboard's; lib/store/ack-guard.ts AckRefusalReason). A warning log line says what each
 * node answered.
 */
export function emitSpendRefused(refusal: SpendRefusal): void {
  emitSingle('SpendsRefused', {}, refusal.txs);
  emitSingle('SpendsRefused', { reason: refusal.reason }, refusal.txs);
  logger.warn('spends refused by the acknowledgement guard', { ...refusal });
}
