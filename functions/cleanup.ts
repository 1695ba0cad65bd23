/**
 * The scheduled cleanup function (docs/cleanup.md): invoked by an EventBridge schedule, runs one cleanup pass that
 * stops before the Lambda's remaining time minus a margin, emits the pass's metrics and returns its report. A pass
 * that runs out of time reports more = true; the next scheduled pass resumes.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { CleanupReport } from '../lib/cleanup';
import { emitMetrics } from '../lib/cleanup/report';
import { cleanupMetrics, logger, metrics } from '../lib/http/observability';
import { cleanupDeadline } from '../lib/http/routes';
import { getRuntime, warmRuntime } from '../lib/runtime';

// connect during the init phase (lib/runtime.ts warmRuntime)
warmRuntime();

/** Time kept back from the remaining time: the pass stops this long before the Lambda's timeout. */
export const MARGIN_MS = 5000;
/** Budget when the context does not say how much time remains. */
export const DEFAULT_BUDGET_MS = 55_000;

async function runCleanup(event: ScheduledEvent, context: Context): Promise<CleanupReport> {
  const runtime = await getRuntime();
  const hasClock = typeof context?.getRemainingTimeInMillis === 'function';
  const deadline = cleanupDeadline(context, hasClock ? Number.MAX_SAFE_INTEGER : DEFAULT_BUDGET_MS, MARGIN_MS);
  const report = await runtime.cleanup.runPass({ deadline });
  emitMetrics(cleanupMetrics, report);
  logger.info('cleanup pass', { scheduledAt: event?.time, ...report });
  return report;
}

export const handler = middy<ScheduledEvent, CleanupReport, Error, Context>(runCleanup)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
