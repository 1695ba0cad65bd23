/** The time budget of an on-demand cleanup pass (POST /v1/cleanup) and of the scheduled one (functions/cleanup.ts). */
import type { Context } from 'aws-lambda';

/** Default (and maximum) time budget of POST /v1/cleanup: below API Gateway's 29 s integration timeout. */
export const CLEANUP_DEFAULT_SECONDS = 25;
/** Time kept back from the Lambda's remaining time for the response. */
export const CLEANUP_MARGIN_MS = 2000;

/** Deadline (epoch ms) of a cleanup pass: the requested budget, capped by the Lambda's remaining time. */
export function cleanupDeadline(lambda: Context | undefined, budgetMs: number, marginMs = CLEANUP_MARGIN_MS): number {
  let budget = budgetMs;
  const remaining = lambda?.getRemainingTimeInMillis?.();
  if (typeof remaining === 'number' && Number.isFinite(remaining)) budget = Math.min(budget, remaining - marginMs);
  return Date.now() + Math.max(0, budget);
}
