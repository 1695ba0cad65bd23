/**
 * Powertools Logger (structured JSON, the Lambda request id injected by injectLambdaContext) and Metrics (CloudWatch
 * EMF), one instance each per execution environment. Service name and namespace come from the usual Powertools
 * variables (POWERTOOLS_SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE) with project defaults.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { CleanupMetrics } from '../cleanup';
import type { SpendRefusal } from '../store/types';

const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'bsv-utxo-store';

export const logger = new Logger({ serviceName });

export const metrics = new Metrics({
  serviceName,
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'BsvUtxoStore',
});

export { MetricUnit };

/** Adapter for CleanupService / emitMetrics: `...Ms` names are milliseconds, the rest counts. */
export const cleanupMetrics: CleanupMetrics = {
  count(name: string, value: number): void {
    metrics.addMetric(name, name.endsWith('Ms') ? MetricUnit.Milliseconds : MetricUnit.Count, value);
  },
};

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
