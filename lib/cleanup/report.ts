/** The outcome of one cleanup pass (docs/cleanup.md, "Report"). */
export interface CleanupReport {
  /** chain tip H the pass ran at */
  tip: number;
  /** transactions deleted (master removed) */
  deleted: number;
  /** candidates kept, by reason */
  kept: Record<string, number>;
  /** candidates or preserved records whose processing failed; retried next pass */
  errors: number;
  /** records whose preserveUntil expired (<= H) and was removed */
  preserveExpired: number;
  durationMs: number;
  /** true when the pass stopped at its deadline: candidates may remain */
  more: boolean;
  /**
   * present (true) when another pass held the lock of some of this pass's partition ranges: those ranges were skipped
   * (and more = true); the others ran. A pass whose every range was busy did nothing.
   */
  busy?: true;
  /** present with busy: the number of ranges skipped because another pass held them */
  rangesBusy?: number;
  /**
   * present when the engine could not query a partition range's index (its indexes could not be made ready, or a
   * range's paging failed after its retries): the number of such ranges, each also counted in errors. Never a quiet
   * zero: the metric CleanupRangesFailed has an alarm (cdk/observability.ts).
   */
  rangesFailed?: number;
  /** present with rangesFailed: the first failure's message (e.g. "aerospike create index …: no answer within …") */
  rangeError?: string;
}

export type KeptReason =
  | 'child_unmined'
  | 'child_unstable'
  | 'child_missing'
  | 'child_read_error'
  | 'changed'
  | 'not_all_spent'
  | 'not_mined'
  | 'locked'
  | 'creating'
  | 'preserved'
  | 'record_missing'
  | 'record_read_error'
  | 'invalid_record';

export interface CleanupMetrics {
  count(name: string, value: number): void;
}

export function emptyReport(tip: number): CleanupReport {
  return { tip, deleted: 0, kept: {}, errors: 0, preserveExpired: 0, durationMs: 0, more: false };
}

export function addKept(report: CleanupReport, reason: KeptReason, n = 1): void {
  report.kept[reason] = (report.kept[reason] ?? 0) + n;
}

/** One count per report field: CleanupDeleted, CleanupKept_<reason>, CleanupErrors, ... */
export function emitMetrics(metrics: CleanupMetrics, report: CleanupReport): void {
  metrics.count('CleanupDeleted', report.deleted);
  for (const [reason, n] of Object.entries(report.kept)) metrics.count(`CleanupKept_${reason}`, n);
  metrics.count('CleanupErrors', report.errors);
  metrics.count('CleanupPreserveExpired', report.preserveExpired);
  metrics.count('CleanupDurationMs', report.durationMs);
  metrics.count('CleanupMore', report.more ? 1 : 0);
  metrics.count('CleanupBusy', report.busy ? 1 : 0);
  metrics.count('CleanupRangesFailed', report.rangesFailed ?? 0);
}

/** Counts `ranges` partition ranges the pass could not query, keeping the first reason. */
export function addRangeFailure(report: CleanupReport, err: unknown, ranges = 1): void {
  report.errors += ranges;
  report.rangesFailed = (report.rangesFailed ?? 0) + ranges;
  report.rangeError ??= err instanceof Error ? err.message : String(err);
  report.more = true;
}
