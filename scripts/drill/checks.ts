/**
 * The drill's checks of the store after the replay, all through the store's interface:
 *  - the history against the records (the partition checker, scripts/partition/checker.ts: no acknowledged create,
 *    spend or block missing, no output acknowledged to two spenders, no spender nobody sent);
 *  - the store's own check that every stored tx's inputs are spent by it (verifySpenders without repair): no output
 *    is held by one tx while another stored tx claims it;
 *  - the DAH rule on every master (cleanup-invariants.ts);
 *  - cleanupPasses: cleanup passes at a tip past every DAH and safety window, then safety and liveness.
 */
import type { Runtime } from '../../lib/runtime';
import type { CleanupReport } from '../../lib/cleanup';
import { checkHistory, type CheckReport } from '../partition/checker';
import type { FinalState } from '../partition/history';
import { dahViolations, passViolations, type PassViolations } from './cleanup-invariants';
import { acknowledged, type DrillEvent } from './events';
import { readFacts, readFinal, txidsOf } from './records';

export interface StoreCheck {
  final: FinalState;
  history: CheckReport;
  /** stored txs checked by verifySpenders, and their inputs found not spent by them */
  verified: { checked: number; lost: number };
  dah: { txid: string; why: string }[];
  ok: boolean;
}

export async function checkStore(runtime: Runtime, events: DrillEvent[]): Promise<StoreCheck> {
  const { store } = runtime;
  const final = await readFinal(store, events);
  const history = checkHistory(events, final);
  const created = [...new Set(acknowledged(events).flatMap((e) => (e.kind === 'create' ? [e.txid] : [])))];
  const verified = { checked: 0, lost: 0 };
  for (let i = 0; i < created.length; i += 1000) {
    const r = await store.verifySpenders(created.slice(i, i + 1000), { repair: false });
    verified.checked += r.checked;
    verified.lost += r.lost.length;
  }
  const facts = Object.values(await readFacts(store, txidsOf(events)));
  const dah = dahViolations(facts, runtime.config.settings.blockHeightRetention);
  const ok = history.ok && history.spends.acknowledged > 0 && verified.lost === 0 && dah.length === 0;
  return { final, history, verified, dah, ok };
}

export interface CleanupCheck {
  tip: number;
  passes: CleanupReport[];
  /** deleted while a child was not safe, after any pass; due and still there after the last */
  violations: PassViolations;
  /** masters left marked `deleting` after the last pass */
  leftDeleting: number;
  deleted: number;
  ok: boolean;
}

/** passes until one keeps nothing `changed` (a record written while the pass read it: retried next pass) */
const MAX_PASSES = 6;

/**
 * Cleanup passes at a tip past every DAH and safety window, until a pass keeps no tx `changed`: the ranges of a pass
 * run in parallel, so a parent read while another range deletes its child (setDeletedChild writes the parent) is
 * kept `changed` and deleted by a later pass, and along a chain of such parents that can repeat. Then no tx may be
 * left due, and no pass may have deleted a tx whose child was not safe.
 */
export async function cleanupPasses(runtime: Runtime, events: DrillEvent[], final: FinalState): Promise<CleanupCheck> {
  const { store } = runtime;
  const retention = runtime.config.settings.blockHeightRetention;
  const window = runtime.config.cleanupSafetyWindow;
  const txids = txidsOf(events);
  const before = await readFacts(store, txids);
  const children = new Map<string, string[]>();
  for (const [outpoint, spender] of Object.entries(final.spenders)) {
    if (spender === null) continue;
    const parent = outpoint.slice(0, outpoint.lastIndexOf(':'));
    children.set(parent, [...(children.get(parent) ?? []), spender]);
  }
  // past every DAH (h + R, h at most the tip + 1) and every child's safety window
  const tip = (await store.getChainTip()) + retention + window + 2;
  const passes: CleanupReport[] = [];
  const unsafe: PassViolations['unsafe'] = [];
  let after = before;
  let settled = false;
  while (!settled && passes.length < MAX_PASSES) {
    const pass = await runtime.cleanup.runPass({ tip });
    passes.push(pass);
    after = await readFacts(store, txids);
    settled = (pass.kept.changed ?? 0) === 0 && !pass.more;
    unsafe.push(...passViolations(before, new Set(Object.keys(after)), children, tip, window, false).unsafe);
  }
  const owed = passViolations(before, new Set(Object.keys(after)), children, tip, window, true).owed;
  const violations = { unsafe: [...new Map(unsafe.map((u) => [u.txid, u])).values()], owed };
  const leftDeleting = Object.values(after).filter((f) => f.deleting).length;
  const deleted = Object.keys(before).length - Object.keys(after).length;
  const ok =
    settled &&
    violations.unsafe.length === 0 &&
    owed.length === 0 &&
    leftDeleting === 0 &&
    passes.every((p) => p.errors === 0) &&
    deleted > 0;
  return { tip, passes, violations, leftDeleting, deleted, ok };
}
