/**
 * The raw limit of a whole workload: every record operation the store asked its engine for, recorded while the
 * workload ran, then issued again straight on an engine of a fresh set (no HTTP, no handler, no store logic, no
 * parsing), with the same arguments, the same batches and the same order between calls.
 *
 * A range query's cursor is the engine's paging state of the recorded set: the replay sends each next page the cursor
 * its own previous page answered.
 *
 * Order: a call that started after another call had finished in the recording starts after it in the replay too;
 * calls that overlapped in the recording may overlap in the replay. So the replay has the workload's own dependencies
 * (a spend after the create of its parent, a cleanup remove after the mark) and at least its concurrency.
 *
 * Only the store's own calls are recorded (an engine's calls to itself are part of the call that made them), and only
 * record operations (reads, writes, removes, UDF calls, range queries); module registration, pings
 * and the cluster-state check are not (the raw limit is the engine doing the records' work).
 *
 * Memory: a recording holds every record's bins (about 900 MB of heap for the scale bench's 100k block). Held in the
 * process that serves the next rounds, it made each of the block's garbage collections mark it all: the block's
 * server CPU per tx was half as much again as without it. spill() moves each phase's arguments to a file of its own;
 * the replay loads one phase's before timing it, collects garbage (so both sides start a phase with a settled heap)
 * and drops them after.
 */
import { AsyncLocalStorage } from 'async_hooks';
import { readFileSync, writeFileSync } from 'fs';
import * as path from 'path';
import { deserialize, serialize, setFlagsFromString } from 'v8';
import { runInNewContext } from 'vm';
import {
  RECORD_OPERATIONS,
  type RangePage,
  type RangeQuery,
  type RecordEngine,
  type RecordOperation,
} from '../lib/engine/port';

interface RecordedCall {
  phase: string;
  method: RecordOperation;
  /** undefined while spilled (the phase's file holds them) */
  args: unknown[] | undefined;
  /** calls the recording had seen finish when this one started */
  finishedBefore: number;
  /** queryRange: the cursor the recorded page answered (the next page's call names it) */
  cursorOut?: string;
}

export interface ReplayResult {
  calls: number;
  /** items a batch call or a call answered with an error (code: count) */
  errors: Record<string, number>;
  ms: number;
  /** this process's CPU across the phase (user + system, all threads: the native client's too), microseconds */
  cpuUs: number;
}

/** Wraps a phase's timed part (e.g. to profile it): calls `work` and resolves when it has. */
export type PhaseWrapper = (phase: string, work: () => Promise<void>) => Promise<void>;

export class EngineRecorder {
  private readonly calls: RecordedCall[] = [];
  /** the recording's call indexes in the order they finished */
  private readonly finishOrder: number[] = [];
  private readonly originals = new Map<RecordOperation, unknown>();
  private current = '';
  private readonly inside = new AsyncLocalStorage<boolean>();
  /** phase -> the file its calls' arguments were spilled to */
  private readonly spilled = new Map<string, string>();

  /** Starts recording the engine's record operations (patches the instance; stop() restores it). */
  constructor(private readonly engine: RecordEngine) {
    const target = callable(engine);
    for (const method of RECORD_OPERATIONS) {
      const original = target[method];
      this.originals.set(method, Object.prototype.hasOwnProperty.call(engine, method) ? original : undefined);
      target[method] = (...args: unknown[]) => {
        // a call the engine makes to itself (a batch's items sent one by one) is part of the outer call
        if (this.inside.getStore()) return original.apply(engine, args);
        const call: RecordedCall = { phase: this.current, method, args, finishedBefore: this.finishOrder.length };
        const index = this.calls.push(call) - 1;
        return this.inside
          .run(true, () => original.apply(engine, args))
          .then((answer) => {
            if (method === 'queryRange') call.cursorOut = (answer as RangePage).cursor;
            return answer;
          })
          .finally(() => this.finishOrder.push(index));
      };
    }
  }

  /** Calls from now on belong to `name`. */
  phase(name: string): void {
    this.current = name;
  }

  stop(): void {
    // its async hooks would go on taxing every promise of the process (the server's next rounds, the replay)
    this.inside.disable();
    const target = callable(this.engine);
    for (const [method, original] of this.originals) {
      if (original === undefined) delete target[method];
      else target[method] = original as (...args: unknown[]) => Promise<unknown>;
    }
  }

  /**
   * Writes each phase's call arguments to a file in `dir` (v8 serialisation: Buffers, bigints, nulls and nested lists
   * and maps come back as they were) and lets go of them; replay() loads a phase's back for its own run only.
   */
  spill(dir: string): void {
    for (const phase of new Set(this.calls.map((c) => c.phase))) {
      const calls = this.calls.filter((c) => c.phase === phase && c.args !== undefined);
      if (calls.length === 0) continue;
      const file = path.join(dir, `replay-${this.spilled.size}.v8`);
      writeFileSync(file, serialize(calls.map((c) => c.args)));
      for (const c of calls) c.args = undefined;
      this.spilled.set(phase, file);
    }
  }

  /** How many recorded calls hold their arguments in memory (0 once spilled, outside a replay's phase). */
  held(): number {
    return this.calls.filter((c) => c.args !== undefined).length;
  }

  /** The recorded calls of a phase by method, e.g. "batchApply 34, get 2". */
  methods(phase: string): string {
    const counts = new Map<string, number>();
    for (const c of this.calls) if (c.phase === phase) counts.set(c.method, (counts.get(c.method) ?? 0) + 1);
    return [...counts].map(([method, n]) => `${method} ${n}`).join(', ');
  }

  /**
   * Issues every recorded call again on `on`, phase by phase in the order they were recorded; returns each phase's
   * time, calls and errors. `between` runs before each phase and after the last, outside the timed part (e.g. to read
   * the server's statistics); `around` wraps each phase's timed part (e.g. to profile it).
   */
  async replay(
    on: RecordEngine,
    between?: (next: string | undefined) => Promise<void>,
    around?: PhaseWrapper,
  ): Promise<Map<string, ReplayResult>> {
    const replayer = this.replayer(on);
    const results = new Map<string, ReplayResult>();
    for (let phase = replayer.next(); phase !== undefined; phase = replayer.next()) {
      if (results.has(phase)) throw new Error(`replay: phase "${phase}" was recorded in two parts`);
      await between?.(phase);
      results.set(phase, await replayer.run(phase, around));
    }
    await between?.(undefined);
    return results;
  }

  /**
   * A replay on `on` that goes one phase at a time, in the order the phases were recorded: run(phase) issues the
   * next phase's calls (which must be `phase`). A phase can be replayed as soon as its recording is complete, while
   * later phases are still being recorded: the block's rounds replay each phase right after the block's own run of
   * it, so that both sides of a phase's ratio meet the same moments of a machine whose speed drifts.
   */
  replayer(on: RecordEngine): {
    next(): string | undefined;
    run(phase: string, around?: PhaseWrapper): Promise<ReplayResult>;
  } {
    const done: Promise<unknown>[] = [];
    /** recorded cursor -> the replay's cursor for the same page */
    const cursors = new Map<string, string>();
    const target = callable(on);
    let waited = 0;
    let next = 0;
    const run = async (phase: string, around?: PhaseWrapper): Promise<ReplayResult> => {
      const recorded = this.calls[next]?.phase;
      if (recorded !== phase) {
        throw new Error(
          `replay: phase "${phase}" asked, the recording has ${recorded ? `"${recorded}"` : 'no more'} next`,
        );
      }
      const phaseCalls = this.calls.filter((c) => c.phase === phase);
      const file = this.spilled.get(phase);
      if (file !== undefined) {
        const args = deserialize(readFileSync(file)) as unknown[][];
        phaseCalls.forEach((c, i) => (c.args = args[i]));
      }
      collectGarbage();
      const result: ReplayResult = { calls: 0, errors: {}, ms: 0, cpuUs: 0 };
      const error = (code: string) => (result.errors[code] = (result.errors[code] ?? 0) + 1);
      const cpu = process.cpuUsage();
      const start = performance.now();
      const inPhase: Promise<unknown>[] = [];
      const issueAll = async () => {
        for (; next < this.calls.length && this.calls[next].phase === phase; next++) {
          const call = this.calls[next];
          for (; waited < call.finishedBefore; waited++) await done[this.finishOrder[waited]];
          const args = argsForCall(call, cursors);
          const issued = (
            args === undefined
              ? Promise.resolve(error(`${call.method} not sent: the replay's range had ended a page earlier`))
              : target[call.method].apply(on, args)
          )
            .then((answer) => {
              // a cursor is the engine's own paging state of this set: the next page goes on from the replay's
              if (call.cursorOut !== undefined) {
                const cursor = (answer as RangePage).cursor;
                if (cursor !== undefined) cursors.set(call.cursorOut, cursor);
                else error(`${call.method}: the range ended here in the replay, a page before the recording's`);
              }
              if (Array.isArray(answer))
                for (const item of answer as { ok?: boolean; error?: { code?: string } }[])
                  if (item?.ok === false) error(`${call.method} ${item.error?.code ?? 'ERROR'}`);
            })
            .catch((err: { code?: string }) => error(`${call.method} ${err.code ?? 'THROWN'}`));
          done[next] = issued;
          inPhase.push(issued);
          result.calls++;
        }
        await Promise.all(inPhase);
      };
      await (around ? around(phase, issueAll) : issueAll());
      result.ms = performance.now() - start;
      const used = process.cpuUsage(cpu);
      result.cpuUs = used.user + used.system;
      if (file !== undefined) for (const c of phaseCalls) c.args = undefined;
      return result;
    };
    return { next: () => this.calls[next]?.phase, run };
  }
}

/**
 * The call's arguments, a queryRange's cursor replaced by the replay's cursor of the same page; undefined when the
 * replay has no such page: its previous page answered no cursor (a paged query's pages need not split alike on two
 * sets, so a range can end a page earlier in the replay).
 */
function argsForCall(call: RecordedCall, cursors: Map<string, string>): unknown[] | undefined {
  if (call.args === undefined) throw new Error(`replay: the arguments of a ${call.method} call are not loaded`);
  if (call.method !== 'queryRange') return call.args;
  const query = call.args[0] as RangeQuery;
  if (query.cursor === undefined) return call.args;
  const cursor = cursors.get(query.cursor);
  return cursor === undefined ? undefined : [{ ...query, cursor }, ...call.args.slice(1)];
}

let gc: (() => void) | undefined;

/**
 * A full garbage collection now (outside any timed part): the heap a phase starts with is then what it holds, not
 * what the work before it left to collect. V8 offers gc() only when exposed; the flag set at run time exposes it to
 * contexts made after it.
 */
export function collectGarbage(): void {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

/** The engine's record operations as plain functions, to patch and to call by name. */
function callable(e: RecordEngine): Record<RecordOperation, (...args: unknown[]) => Promise<unknown>> {
  return e as unknown as Record<RecordOperation, (...args: unknown[]) => Promise<unknown>>;
}
