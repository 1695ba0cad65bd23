/**
 * The scheduled cleanup function (docs/cleanup.md): invoked by an EventBridge schedule, runs one cleanup pass that
 * stops before the Lambda's remaining time minus a margin, emits the pass's metrics and returns its report. A pass
 * that runs out of time reports more = true; the next scheduled pass resumes.
 *
 * With `cleanupShards` > 1 (cdk/triggers.ts) each rule's constant input is `{ cleanupShard: i, cleanupShards: n }`
 * instead of the scheduled event: the invocation runs shard i of n of the pass (docs/cleanup.md, "Shards").
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { CleanupReport, CleanupShard } from '../lib/cleanup';
import { emitMetrics } from '../lib/cleanup/report';
import { cleanupMetrics, logger, metrics } from '../lib/http/observability';
import { cleanupDeadline } from '../lib/http/cleanup-deadline';
import { getRuntime, warmRuntime } from '../lib/runtime';

// connect during the init phase (lib/runtime.ts warmRuntime)
warmRuntime();

/** Time kept back from the remaining time: the pass stops this long before the Lambda's timeout. */
export const MARGIN_MS = 5000;
/** Budget when the context does not say how much time remains. */
export const DEFAULT_BUDGET_MS = 55_000;

/** The constant input of a shard's schedule target (cdk/triggers.ts). */
export interface CleanupShardInput {
  cleanupShard: number;
  cleanupShards: number;
}

export type CleanupEvent = ScheduledEvent | CleanupShardInput;

/** The shard an event asks for: none for a scheduled event (the whole pass); an Error for a malformed shard input. */
export function shardOf(event: unknown): CleanupShard | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const e = event as Record<string, unknown>;
  if (!('cleanupShard' in e) && !('cleanupShards' in e)) return undefined;
  const { cleanupShard: index, cleanupShards: count } = e;
  const valid = Number.isInteger(count) && (count as number) >= 1 && Number.isInteger(index) && (index as number) >= 0;
  if (!valid || (index as number) >= (count as number)) {
    throw new Error(
      `malformed cleanup shard input ${JSON.stringify({ cleanupShard: index, cleanupShards: count })}: expected ` +
        '{"cleanupShard": i, "cleanupShards": n} with integers n >= 1 and 0 <= i < n',
    );
  }
  return { index: index as number, count: count as number };
}

async function runCleanup(event: CleanupEvent, context: Context): Promise<CleanupReport> {
  let shard: CleanupShard | undefined;
  try {
    shard = shardOf(event);
  } catch (err) {
    logger.error('cleanup shard input refused', { error: err as Error });
    throw err;
  }
  const runtime = await getRuntime();
  const hasClock = typeof context?.getRemainingTimeInMillis === 'function';
  const deadline = cleanupDeadline(context, hasClock ? Number.MAX_SAFE_INTEGER : DEFAULT_BUDGET_MS, MARGIN_MS);
  let report: CleanupReport;
  try {
    // runPass refuses (RangeError) a shard that is not one of its partition ranges' shards, before any engine call
    report = await runtime.cleanup.runPass({ deadline, shard });
  } catch (err) {
    logger.error('cleanup pass failed', { error: err as Error, shard });
    throw err;
  }
  emitMetrics(cleanupMetrics, report);
  const scheduledAt = typeof event === 'object' && event !== null && 'time' in event ? event.time : undefined;
  logger.info('cleanup pass', { scheduledAt, ...(shard ? { shard } : {}), ...report });
  return report;
}

export const handler = middy<CleanupEvent, CleanupReport, Error, Context>(runCleanup)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
