/**
 * The SQS-triggered signal consumer (docs/signals.md): each message body is a signal {txid, signal, height}, handed
 * to the reconciler. Partial batch failure reporting (Powertools batch): only the failed messages are returned in
 * batchItemFailures and come back (then land in the DLQ); the others are deleted. Redelivered and reordered
 * messages are harmless: the reconciler is state-based (it makes the records agree with the master, whatever the
 * signal said). A malformed body fails its message only.
 *
 * The event source mapping must enable ReportBatchItemFailures.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger, metrics, MetricUnit } from '../lib/http/observability';
import { getRuntime, warmRuntime, type Runtime } from '../lib/runtime';
import { parseSignalMessage } from '../lib/signals/message';

// connect during the init phase (lib/runtime.ts warmRuntime)
warmRuntime();

function recordHandler(runtime: Runtime) {
  return async (record: SQSRecord): Promise<void> => {
    const signal = parseSignalMessage(record.body);
    if (Number(record.attributes?.ApproximateReceiveCount ?? '1') > 1) {
      metrics.addMetric('SignalRedeliveries', MetricUnit.Count, 1);
    }
    try {
      await runtime.reconciler.handle(signal);
    } catch (err) {
      logger.warn('signal failed; it returns to the queue', {
        messageId: record.messageId,
        txid: signal.txid,
        signal: signal.signal,
        error: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
  };
}

const processor = new BatchProcessor(EventType.SQS);

async function consume(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  // a runtime that cannot start fails the invocation: the whole batch comes back
  const runtime = await getRuntime();
  const response = await processPartialResponse(event, recordHandler(runtime), processor, {
    context,
    throwOnFullBatchFailure: false,
  });
  const failed = response.batchItemFailures.length;
  metrics.addMetric('SignalsReceived', MetricUnit.Count, event.Records.length);
  metrics.addMetric('SignalsHandled', MetricUnit.Count, event.Records.length - failed);
  metrics.addMetric('SignalsFailed', MetricUnit.Count, failed);
  if (failed > 0) {
    logger.warn('signal batch partly failed', {
      received: event.Records.length,
      failed,
      errors: processor.errors.map((e) => e.message),
    });
  }
  return { batchItemFailures: response.batchItemFailures.map((f) => ({ itemIdentifier: f.itemIdentifier })) };
}

export const handler = middy<SQSEvent, SQSBatchResponse, Error, Context>(consume)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
