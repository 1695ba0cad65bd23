/**
 * The DAH cleanup service (docs/cleanup.md): deletes fully spent transactions only after every spending child is
 * mined and stable. Runs on any RecordEngine; a pass stops before its deadline and the next pass resumes.
 */
import type { BlobStore } from '../blob/port';
import { splitPartitions, type Bins, type EngineRecord, type PartitionRange, type RecordEngine } from '../engine/port';
import { BIN } from '../domain/bins';
import {
  CANDIDATE_BINS,
  PAGE_BINS,
  collectChildren,
  extraRecordCount,
  isMaster,
  masterDecision,
  type ChildRef,
} from './candidates';
import { childVerdict, parentVerdict, type ChildRead, type ChildVerdict } from './child-safety';
import {
  abandonDeletes,
  clearStaleMarks,
  finishDeletes,
  markMasters,
  markPages,
  type Abandoned,
  type DeleteDeps,
} from './delete-tx';
import type { Signal, SignalName, SignalQueue } from '../signals/port';
import { acquireRangeLocks, passLockTtlSeconds, type RangeLocks } from './pass-lock';
import { keyOfRecord, txidHex } from './record-facts';
import {
  addKept,
  addRangeFailure,
  emitMetrics,
  emptyReport,
  type CleanupMetrics,
  type CleanupReport,
  type KeptReason,
} from './report';

export interface CleanupSettings {
  /** B: outputs per record */
  utxoBatchSize: number;
  /** R: passed to the UDFs that re-run the DAH rule */
  blockHeightRetention: number;
  /** blocks a spending child must be buried under before its parent may go (default in config: R) */
  cleanupSafetyWindow: number;
  /** candidates per chunk (one range-query page, one children batch read, one engine batch per delete step) */
  batchSize: number;
  /**
   * Partition ranges a pass splits the key space into (engine partitions, port.ts PARTITION_COUNT), all queried
   * in parallel, each paged by its own cursor (default DEFAULT_PARTITION_RANGES).
   */
  partitionRanges?: number;
}

/** Ranges a pass runs in parallel by default: each keeps one query page and one chunk in flight. */
export const DEFAULT_PARTITION_RANGES = 8;
/** Times a range's failed query page is asked again from the range's cursor before the range gives up. */
export const RANGE_PAGE_RETRIES = 2;

export interface CleanupServiceOptions {
  engine: RecordEngine;
  blobs: BlobStore;
  /** registered UDF module name (store.moduleName) */
  moduleName: string;
  settings: CleanupSettings;
  getTip: () => Promise<number>;
  now?: () => number;
  metrics?: CleanupMetrics;
  /**
   * The signal queue (docs/signals.md). expirePreserve re-runs the DAH rule; the signal it raises (DAHSET for an
   * external tx) is sent here so that the reconciler brings the pagination records and the blob tag in line.
   */
  signals?: SignalQueue;
}

export interface RunPassOptions {
  /** chain tip H (default: getTip()) */
  tip?: number;
  /** epoch ms; the pass stops before starting work at or after it */
  deadline?: number;
  maxDurationMs?: number;
  /**
   * Run only a share of the pass (docs/cleanup.md, "Shards"): of the ranges of splitPartitions(partitionRanges), those
   * r with r % count === index. count is an integer in [1, partitionRanges], index in [0, count). Default: every range.
   */
  shard?: CleanupShard;
}

export interface CleanupShard {
  index: number;
  count: number;
}

/** The ranges of the shard (RangeError when the shard is not one of `partitionRanges`' shards). */
export function shardRanges(partitionRanges: number, shard?: CleanupShard): PartitionRange[] {
  const ranges = splitPartitions(partitionRanges);
  if (shard === undefined) return ranges;
  const { index, count } = shard;
  if (!Number.isInteger(count) || count < 1 || count > ranges.length) {
    throw new RangeError(`cleanup shard count must be an integer in [1, ${ranges.length}], got ${String(count)}`);
  }
  if (!Number.isInteger(index) || index < 0 || index >= count) {
    throw new RangeError(`cleanup shard index must be an integer in [0, ${count}), got ${String(index)}`);
  }
  return ranges.filter((_, r) => r % count === index);
}

interface Checked {
  master: EngineRecord;
  pages: EngineRecord[];
  children: ChildRef[];
  /** finishing only: pagination records not yet marked (the pass that marked the master died before them) */
  unmarked: EngineRecord[];
}

class DeadlineReached extends Error {}

/** Settles every promise, then throws the first rejection (no work left running behind a failure). */
async function settledOrThrow(promises: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(promises)).find((o) => o.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

export class CleanupService {
  private readonly engine: RecordEngine;
  private readonly blobs: BlobStore;
  private readonly moduleName: string;
  private readonly settings: Required<CleanupSettings>;
  private readonly getTip: () => Promise<number>;
  private readonly now: () => number;
  private readonly metrics?: CleanupMetrics;
  private readonly signals?: SignalQueue;
  /** what phase 2 (delete-tx.ts) needs, built once */
  private readonly deleteDeps: DeleteDeps;

  constructor(options: CleanupServiceOptions) {
    const { utxoBatchSize, batchSize, cleanupSafetyWindow, blockHeightRetention } = options.settings;
    if (!Number.isInteger(utxoBatchSize) || utxoBatchSize < 1) throw new RangeError('utxoBatchSize must be >= 1');
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be >= 1');
    const { partitionRanges = DEFAULT_PARTITION_RANGES } = options.settings;
    if (!Number.isInteger(partitionRanges) || partitionRanges < 1 || partitionRanges > 4096) {
      throw new RangeError('partitionRanges must be within [1, 4096]');
    }
    if (!Number.isInteger(cleanupSafetyWindow) || cleanupSafetyWindow < 0) {
      throw new RangeError('cleanupSafetyWindow must be >= 0');
    }
    if (!Number.isInteger(blockHeightRetention) || blockHeightRetention < 0) {
      throw new RangeError('blockHeightRetention must be >= 0');
    }
    this.engine = options.engine;
    this.blobs = options.blobs;
    this.moduleName = options.moduleName;
    this.settings = { ...options.settings, partitionRanges };
    this.getTip = options.getTip;
    this.now = options.now ?? Date.now;
    this.metrics = options.metrics;
    this.signals = options.signals;
    this.deleteDeps = {
      engine: this.engine,
      blobs: this.blobs,
      moduleName: this.moduleName,
      utxoBatchSize: this.settings.utxoBatchSize,
    };
  }

  async runPass(options: RunPassOptions = {}): Promise<CleanupReport> {
    // a bad shard is refused before anything is read or written
    const ranges = shardRanges(this.settings.partitionRanges, options.shard);
    const started = this.now();
    let deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    if (options.maxDurationMs !== undefined) deadline = Math.min(deadline, started + options.maxDurationMs);
    const tip = options.tip ?? (await this.getTip());
    const report = emptyReport(tip);
    const checkDeadline = (): void => {
      if (this.now() >= deadline) throw new DeadlineReached();
    };

    let locks: RangeLocks;
    try {
      locks = await acquireRangeLocks(this.engine, ranges, passLockTtlSeconds(started, deadline));
    } catch {
      report.errors++;
      report.more = true;
      return this.finishReport(report, started);
    }
    if (locks.failed.length > 0) {
      // those ranges are not run: the next pass does
      report.errors += locks.failed.length;
      report.more = true;
    }
    if (locks.busy.length > 0) {
      // another pass is running those ranges: it (or the next one) does their work
      report.busy = true;
      report.rangesBusy = locks.busy.length;
      report.more = true;
    }
    const held = locks.held;

    try {
      if (held.length > 0 && this.engine.ensureIndexes) {
        // even a pass with nothing to query (tip 0) finds out whether it could: an index that cannot be made ready
        // is a failure of every range held, never a quiet zero
        try {
          await this.engine.ensureIndexes();
        } catch (err) {
          addRangeFailure(report, err, held.length);
          return this.finishReport(report, started);
        }
      }
      if (tip >= 1 && held.length > 0) {
        await settledOrThrow(held.map((r) => this.expirePreserved(tip, r, report, checkDeadline)));
        // each range pages the DAH index on its own; a range ending early (deadline, engine failure) stops no other
        const outcomes = await Promise.allSettled(
          held.map((range) =>
            this.pageRange(
              range,
              { bin: 'deleteAtHeight', min: 1, max: tip, bins: [...CANDIDATE_BINS] },
              checkDeadline,
              (records) => this.processChunk(tip, records.filter(isMaster), report, checkDeadline),
            ),
          ),
        );
        for (const o of outcomes) {
          if (o.status === 'fulfilled') continue;
          // an engine failure of a range's query is counted; the next pass runs that range again
          if (!(o.reason instanceof DeadlineReached)) addRangeFailure(report, o.reason);
          report.more = true;
        }
      }
    } catch (err) {
      // a range's preserveUntil query (or its expiry) failed: the pass stops there, the next runs it again
      if (!(err instanceof DeadlineReached)) addRangeFailure(report, err);
      report.more = true;
    } finally {
      await locks.release();
    }
    return this.finishReport(report, started);
  }

  /**
   * Pages one partition range of an index and hands each page to `handle`, the next page asked only after the
   * page is handled (one page of memory per range). A failed page is asked again from the range's cursor (the
   * range resumes where it was), RANGE_PAGE_RETRIES times, before the range gives up.
   */
  private async pageRange(
    partitions: PartitionRange,
    query: { bin: 'deleteAtHeight' | 'preserveUntil'; min: number; max: number; bins?: string[] },
    checkDeadline: () => void,
    handle: (records: EngineRecord[]) => Promise<void>,
  ): Promise<void> {
    let cursor: string | undefined;
    do {
      checkDeadline();
      let page;
      for (let attempt = 0; ; attempt++) {
        try {
          page = await this.engine.queryRange({ ...query, limit: this.settings.batchSize, cursor, partitions });
          break;
        } catch (err) {
          if (attempt >= RANGE_PAGE_RETRIES) throw err;
          await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
          checkDeadline();
        }
      }
      await handle(page.records);
      cursor = page.cursor;
    } while (cursor !== undefined);
  }

  private finishReport(report: CleanupReport, started: number): CleanupReport {
    report.durationMs = this.now() - started;
    if (this.metrics) emitMetrics(this.metrics, report);
    return report;
  }

  private async expirePreserved(
    tip: number,
    partitions: PartitionRange,
    report: CleanupReport,
    checkDeadline: () => void,
  ): Promise<void> {
    const query = { bin: 'preserveUntil' as const, min: 0, max: tip, bins: [BIN.preserveUntil] };
    await this.pageRange(partitions, query, checkDeadline, async (records) => {
      if (records.length === 0) return;
      const results = await this.engine.batchApply(
        records.map((r) => ({
          key: r.key,
          module: this.moduleName,
          fn: 'expirePreserve',
          args: [tip, this.settings.blockHeightRetention],
        })),
      );
      const signals: Signal[] = [];
      results.forEach((r, i) => {
        if (r.ok && r.result.status === 'OK') {
          report.preserveExpired++;
          const signal = r.result.signal;
          if (typeof signal === 'string') {
            const txid = txidHex(records[i].key.subarray(0, 32));
            signals.push({ txid, signal: signal as SignalName, height: tip });
          }
        } else if (!(!r.ok && r.error.code === 'RECORD_NOT_FOUND')) report.errors++;
      });
      if (signals.length > 0 && this.signals) {
        // the DAH rule ran; a lost follow-up leaves pagination records / blob tag behind the master: counted
        await this.signals.send(signals).catch(() => void report.errors++);
      }
    });
  }

  private async processChunk(
    tip: number,
    masters: EngineRecord[],
    report: CleanupReport,
    checkDeadline: () => void,
  ): Promise<void> {
    const finish: EngineRecord[] = [];
    const toCheck: EngineRecord[] = [];
    const keptPaginated: EngineRecord[] = [];
    for (const master of masters) {
      const decision = masterDecision(master.bins);
      if (decision === 'finish') finish.push(master);
      else if (decision === 'check') toCheck.push(master);
      else {
        addKept(report, decision);
        if (extraRecordCount(master.bins) > 0) keptPaginated.push(master);
      }
    }
    await this.clearStalePageMarks(keptPaginated);

    const checked = await this.readRecords(toCheck, report, false);
    const finishing = await this.readRecords(finish, report, true);
    const verdicts = await this.readChildren(tip, [...checked, ...finishing]);
    checkDeadline();
    await this.deleteMarked(await this.markDeletable(checked, finishing, verdicts, report), report);
  }

  /**
   * Phase 1 for the chunk: marks the deletable candidates' masters in one batch, then the pagination records of those
   * marked in another. Returns the masters ready for phase 2 (every record marked), finishing ones first.
   */
  private async markDeletable(
    checked: Checked[],
    finishing: Checked[],
    verdicts: ReadonlyMap<string, ChildVerdict>,
    report: CleanupReport,
  ): Promise<EngineRecord[]> {
    // A pass that died midway is finished first. Once every pagination record is marked too, its record state is not
    // re-checked (it is frozen by the marks and partly deleted), but its children are: a child reorganized out since
    // the mark keeps the tx until stable again. Pagination records not yet marked were checked as read (readRecords)
    // and are marked with generation checks before anything is deleted.
    const ready: EngineRecord[] = [];
    const pagesToMark: { master: EngineRecord; pages: EngineRecord[]; finishing: boolean }[] = [];
    for (const c of finishing) {
      const reason = parentVerdict(c.children, verdicts);
      if (reason !== null) addKept(report, reason);
      else if (c.unmarked.length > 0) pagesToMark.push({ master: c.master, pages: c.unmarked, finishing: true });
      else ready.push(c.master);
    }
    const toMark: Checked[] = [];
    const staleMarks: EngineRecord[] = [];
    for (const c of checked) {
      const reason = parentVerdict(c.children, verdicts);
      if (reason === null) toMark.push(c);
      else {
        addKept(report, reason);
        staleMarks.push(...c.pages);
      }
    }
    await clearStaleMarks(this.engine, staleMarks);

    const marks = await markMasters(
      this.engine,
      this.moduleName,
      toMark.map((c) => c.master),
    );
    toMark.forEach((c, i) => {
      const outcome = marks[i];
      if (outcome === 'changed') addKept(report, 'changed');
      else if (outcome !== 'marked') report.errors++;
      else if (c.pages.length > 0) pagesToMark.push({ master: c.master, pages: c.pages, finishing: false });
      else ready.push(c.master);
    });
    const pageMarks = await markPages(
      this.engine,
      this.moduleName,
      pagesToMark.map((t) => t.pages),
    );
    const abandoned: Abandoned[] = [];
    pagesToMark.forEach((t, i) => {
      const { outcome, marked } = pageMarks[i];
      if (outcome === 'marked') return void ready.push(t.master);
      if (outcome === 'changed') addKept(report, 'changed');
      else report.errors++;
      // a finishing tx keeps its marks (its master was marked by an earlier pass); a new one gives its delete up
      if (!t.finishing) abandoned.push({ masterKey: t.master.key, pages: marked });
    });
    await abandonDeletes(this.engine, abandoned);
    return ready;
  }

  /** Phase 2 for the chunk; a tx whose step fails keeps its marked master: the next pass finishes it. */
  private async deleteMarked(ready: EngineRecord[], report: CleanupReport): Promise<void> {
    const outcomes = await finishDeletes(this.deleteDeps, ready);
    for (const o of outcomes) {
      if (o.deleted) report.deleted++;
      else report.errors++;
    }
  }

  /** A pass that died between marking pagination records and the master leaves marks on a tx that is now kept. */
  private async clearStalePageMarks(masters: EngineRecord[]): Promise<void> {
    const keys = masters.flatMap((m) =>
      Array.from({ length: extraRecordCount(m.bins) }, (_, i) => keyOfRecord(m.key, i + 1)),
    );
    if (keys.length === 0) return;
    try {
      await clearStaleMarks(this.engine, await this.engine.batchGet(keys, [BIN.deleting]));
    } catch {
      // retried next pass
    }
  }

  /**
   * Reads the pagination records of every candidate in one batch and collects their spending children. When
   * `finishing` (masters marked `deleting`) and every pagination record left is marked, those already removed are
   * skipped and only children count.
   */
  private async readRecords(masters: EngineRecord[], report: CleanupReport, finishing: boolean): Promise<Checked[]> {
    if (masters.length === 0) return [];
    const keys: Buffer[] = [];
    for (const m of masters) {
      for (let n = 1; n <= extraRecordCount(m.bins); n++) keys.push(keyOfRecord(m.key, n));
    }
    let pages: (EngineRecord | null)[] = [];
    if (keys.length > 0) {
      try {
        pages = await this.engine.batchGet(keys, [...PAGE_BINS]);
      } catch {
        addKept(report, 'record_read_error', masters.length);
        return [];
      }
    }
    const out: Checked[] = [];
    const givenUp: Abandoned[] = [];
    let at = 0;
    for (const master of masters) {
      const count = extraRecordCount(master.bins);
      const own = pages.slice(at, at + count);
      at += count;
      const present = own.filter((p): p is EngineRecord => p !== null);
      const unmarked = finishing ? present.filter((p) => p.bins[BIN.deleting] !== true) : [];
      // A marked master is frozen, and so is every marked pagination record; once all are marked, some may already
      // be deleted. A pagination record not yet marked (the marking pass died) may have changed since: the tx is
      // checked as a new candidate then.
      const lenient = finishing && unmarked.length === 0;
      const records: (Bins | null)[] = lenient
        ? [master.bins, ...present.map((p) => p.bins)]
        : [master.bins, ...own.map((p) => (p === null ? null : p.bins))];
      const verdict = collectChildren(records, lenient || master.bins[BIN.conflicting] === true);
      if (!verdict.ok) {
        addKept(report, verdict.reason as KeptReason);
        // no longer deletable (e.g. an output unspent by a reorg after the mark): the started delete is given up
        if (finishing && verdict.reason === 'not_all_spent') {
          givenUp.push({ masterKey: master.key, pages: present.filter((p) => p.bins[BIN.deleting] === true) });
        }
        continue;
      }
      out.push({ master, pages: present, children: verdict.children, unmarked });
    }
    // the chunk's given-up deletes unmarked together: their pagination records in one batch, their masters in another
    if (givenUp.length > 0) await abandonDeletes(this.engine, givenUp);
    return out;
  }

  /** Reads every child of the chunk in one batch. */
  private async readChildren(tip: number, checked: Checked[]): Promise<Map<string, ChildVerdict>> {
    // display hex -> the child's txid (its master's key), each child once
    const wanted = new Map<string, Buffer>();
    for (const c of checked) {
      for (const ch of c.children) wanted.set(ch.txidHex, ch.txid);
    }
    const verdicts = new Map<string, ChildVerdict>();
    if (wanted.size === 0) return verdicts;
    const window = this.settings.cleanupSafetyWindow;
    let records: (EngineRecord | null)[];
    try {
      records = await this.engine.batchGet([...wanted.values()], [BIN.unminedSince, BIN.blockHeights]);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      for (const hex of wanted.keys()) verdicts.set(hex, childVerdict(error, tip, window));
      return verdicts;
    }
    let i = 0;
    for (const hex of wanted.keys()) {
      const r: EngineRecord | null | undefined = records[i++];
      const read: ChildRead | undefined = r === undefined ? undefined : r === null ? null : r.bins;
      verdicts.set(hex, childVerdict(read, tip, window));
    }
    return verdicts;
  }
}
