/**
 * Availability of one run, a pure function of its history (history.ts) and the fault's time: how long spends went
 * unacknowledged around the fault. Beside the checker's safety counts (checker.ts), per nemesis:
 *  - firstAckAfterFaultMs: from the fault to the first acknowledgement of a spend sent after it;
 *  - longestGapMs: the longest window, from the fault to the last answer, without any acknowledged spend (an
 *    acknowledgement is its answer time);
 *  - ackedWithin30s: the share of outputs whose spend was acknowledged (to any of its spenders) within 30 s of the
 *    first spend of it being sent; outputs first sent before the fault count too, so the share covers the whole run;
 *  - slowestAckMs: the longest an output waited, from its first spend sent to its first acknowledgement (outputs
 *    never acknowledged are left out: they count against ackedWithin30s);
 *  - gaps: every window longer than 1 s, for the report;
 *  - longestGapAnswers: what the spends answered inside the longest window, counted by the guard's refusal class
 *    (`unfenced`, `changed`, ...: lib/store/ack-guard.ts) or else the error code: what held the window open.
 */
import { readFileSync } from 'fs';
import type { HistoryEvent, SpendEvent } from './history';
import { outpointKey, parseHistory } from './history';

export interface Availability {
  faultAtMs: number;
  firstAckAfterFaultMs: number | null;
  longestGapMs: number;
  longestGapFromMs: number;
  ackedWithin30s: number;
  slowestAckMs: number;
  outputs: number;
  gaps: { fromMs: number; toMs: number }[];
  longestGapAnswers: Record<string, number>;
}

export const WITHIN_MS = 30_000;

export function availability(history: HistoryEvent[], faultAtMs: number): Availability {
  const spends = history.filter((e): e is SpendEvent => e.kind === 'spend');
  const lastAnswer = spends.reduce((m, e) => Math.max(m, e.end), faultAtMs);
  const acks = spends
    .filter((e) => e.answer === 'ok')
    .map((e) => e.end)
    .sort((a, b) => a - b);
  const after = spends.filter((e) => e.answer === 'ok' && e.start >= faultAtMs).map((e) => e.end);
  const firstAck = after.length > 0 ? Math.min(...after) - faultAtMs : null;

  const points = [faultAtMs, ...acks.filter((t) => t > faultAtMs), lastAnswer];
  let longest = 0;
  let longestFrom = faultAtMs;
  const gaps: { fromMs: number; toMs: number }[] = [];
  for (let i = 1; i < points.length; i++) {
    const gap = points[i] - points[i - 1];
    if (gap > longest) {
      longest = gap;
      longestFrom = points[i - 1];
    }
    if (gap > 1000) gaps.push({ fromMs: points[i - 1], toMs: points[i] });
  }

  const longestGapAnswers: Record<string, number> = {};
  for (const e of spends) {
    if (e.answer === 'ok' || e.end <= longestFrom || e.end > longestFrom + longest) continue;
    const what = e.reason ?? e.code ?? e.answer;
    longestGapAnswers[what] = (longestGapAnswers[what] ?? 0) + 1;
  }

  const firstSent = new Map<string, number>();
  const firstAcked = new Map<string, number>();
  for (const e of spends) {
    for (const o of e.inputs) {
      const k = outpointKey(o);
      firstSent.set(k, Math.min(firstSent.get(k) ?? Infinity, e.start));
      if (e.answer === 'ok') firstAcked.set(k, Math.min(firstAcked.get(k) ?? Infinity, e.end));
    }
  }
  let within = 0;
  let slowest = 0;
  for (const [k, sent] of firstSent) {
    const waited = (firstAcked.get(k) ?? Infinity) - sent;
    if (waited <= WITHIN_MS) within++;
    if (Number.isFinite(waited)) slowest = Math.max(slowest, waited);
  }
  return {
    faultAtMs,
    firstAckAfterFaultMs: firstAck,
    longestGapMs: longest,
    longestGapFromMs: longestFrom,
    ackedWithin30s: firstSent.size === 0 ? 1 : within / firstSent.size,
    slowestAckMs: slowest,
    outputs: firstSent.size,
    gaps,
    longestGapAnswers,
  };
}

/** The availability columns of the summary table. */
export function availabilityRow(a: Availability): Record<string, string | number> {
  return {
    'first ack after fault (s)': a.firstAckAfterFaultMs === null ? 'none' : (a.firstAckAfterFaultMs / 1000).toFixed(1),
    'longest without ack (s)': (a.longestGapMs / 1000).toFixed(1),
    'acked within 30 s': `${(a.ackedWithin30s * 100).toFixed(1)}%`,
    'slowest output (s)': (a.slowestAckMs / 1000).toFixed(1),
  };
}

/** `tsx scripts/partition/availability.ts <fault ms> <history.jsonl>...`: the figures of recorded histories again. */
if (require.main === module) {
  const [fault, ...files] = process.argv.slice(2);
  for (const file of files) {
    const a = availability(parseHistory(readFileSync(file, 'utf8')), Number(fault));
    console.log(file, JSON.stringify(availabilityRow(a)));
  }
}
