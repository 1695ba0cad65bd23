/**
 * The partition-safety protocol as a model (test/model/cluster-model.ts) under the nemeses of issue 44
 * (test/model/nemeses.ts), checked for: every acknowledged spend in the final, healed and merged record; no output
 * acknowledged to two spenders; the record (an acknowledged create) not lost.
 *  1. On the rules of main today, fast-check finds the failures measured on the harness: new-client acknowledges an
 *     output to two spenders; isolate-all wipes every copy.
 *  2. On the new rules (G1, G2, G3, W1, S1) no nemesis finds a counterexample.
 *  3. Removing any single new rule reopens a failure (each rule is needed).
 */
import fc from 'fast-check';
import { safe, simulate, violations, type Outcome } from './cluster-model';
import { FENCE_MS, NEW_RULES, RULE_NAMES, TODAY, type Rules, type Scenario } from './scenario';
import { DOUBLE_FAULTS, NEMESES, describeScenario } from './nemeses';

/** A counterexample in a few lines: the scenario, what broke, what happened (the model's trace). */
function report(title: string, sc: Scenario, rules: Rules): string {
  const o = simulate(sc, rules, true);
  return [`${title}`, describeScenario(sc), ...violations(o).map((v) => `VIOLATION ${v}`), ...o.trace].join('\n  ');
}

/** fast-check over a nemesis: the first counterexample (shrunk unless `shrink` is false), or undefined. */
function counterexample(
  name: string,
  rules: Rules,
  ok: (o: Outcome) => boolean,
  o: { numRuns: number; seed: number; shrink?: boolean },
): Scenario | undefined {
  const r = fc.check(
    fc.property({ ...NEMESES, ...DOUBLE_FAULTS }[name], (sc) => ok(simulate(sc, rules))),
    { numRuns: o.numRuns, seed: o.seed, endOnFailure: o.shrink === false },
  );
  return r.failed ? r.counterexample?.[0] : undefined;
}

describe("on the rules of main today the model finds issue 44's failures", () => {
  test('new-client: a process started during the cut knows only the majority and acknowledges a rival spend', () => {
    const sc = counterexample('new-client', TODAY, (o) => o.doubleAcked.length === 0, { numRuns: 500, seed: 44 });
    expect(sc).toBeDefined();
    const o = simulate(sc!, TODAY);
    expect(o.doubleAcked.length).toBeGreaterThan(0);
    // the second acknowledgement is of a spend the merge took back
    expect(o.lost.length).toBeGreaterThan(0);
    console.log(report('today, new-client (shrunk counterexample):', sc!, TODAY));
  });

  test('isolate-all: every node killed unstable and wiped at its start, the record and its spends lost', () => {
    const sc = counterexample('isolate-all', TODAY, (o) => !o.createLost, { numRuns: 200, seed: 44 });
    expect(sc).toBeDefined();
    const o = simulate(sc!, TODAY);
    expect(o.createLost).toBe(true);
    console.log(report('today, isolate-all (shrunk counterexample):', sc!, TODAY));
  });

  // the review's other mechanisms, found too (not shrunk: only that they fail)
  test.each(['az-isolation', 'fabric-cut', 'flapping-cut', 'cut-off'])('%s fails too', (name) => {
    expect(counterexample(name, TODAY, safe, { numRuns: 400, seed: 44, shrink: false })).toBeDefined();
  });
});

describe('on the new rules (G1, G2, G3, W1, S1) no nemesis finds a counterexample', () => {
  test.each(Object.keys(NEMESES))('%s', (name) => {
    fc.assert(
      fc.property(NEMESES[name], (sc) => {
        const o = simulate(sc, NEW_RULES);
        if (!safe(o)) throw new Error(report(`new rules, ${name}:`, sc, NEW_RULES));
        // the cluster re-forms whole once the faults are over (check-start's waits end)
        if (!o.converged) throw new Error(report(`new rules, ${name}, not converged:`, sc, NEW_RULES));
      }),
      { numRuns: 250 },
    );
  });
});

describe('availability on the new rules through routine events: bounded by the fence', () => {
  // kill: a node killed and restarted by systemd with its data; two-kill: two at once. G2 refuses while a node is
  // silent for FENCE_MS after the new key; a node that restarts before is back sooner. The bound: the fence, the
  // re-forming (a heartbeat timeout and a quantum), a tend and a retry. The 15 s holds only when the node is
  // back within it (measured: docs/reliability.md).
  const BOUND_MS = FENCE_MS + 3000 + 3300 + 1000 + 1000;
  test.each(['kill', 'two-kill'])('%s: every spend answered, none waiting longer than the fence bound', (name) => {
    fc.assert(
      fc.property(NEMESES[name], (sc) => {
        const o = simulate(sc, NEW_RULES);
        expect(o.unfinished).toBe(0);
        // nodes kept down longer than systemd's restart (two-kill) add their time down: nothing serves without them
        const down = Math.max(0, ...sc.faults.map((f) => (f.kind === 'kill' ? (f.downMs ?? 0) : 0)));
        expect(Math.max(0, ...o.acks.map((a) => a.waitedMs))).toBeLessThanOrEqual(BOUND_MS + down);
      }),
      { numRuns: 150 },
    );
  });
});

describe('each new rule is needed: removing it reopens a failure', () => {
  /** rule removed -> a nemesis that then fails (searched in this order, a fixed seed) */
  const expected: Record<(typeof RULE_NAMES)[number], string> = {
    g1: 'new-client',
    g2: 'az-isolation',
    g3: 'new-client',
    w1: 'isolate-all',
    s1: 'fabric-cut',
    w2: 'two-kill',
  };
  test.each(RULE_NAMES.map((r) => [r, expected[r]]))('without %s: %s fails', (rule, nemesis) => {
    const rules = { ...NEW_RULES, [rule]: false };
    const sc = counterexample(nemesis, rules, safe, { numRuns: 3000, seed: 11, shrink: false });
    expect(sc).toBeDefined();
    expect(safe(simulate(sc!, NEW_RULES))).toBe(true);
  });
});

describe('residuals of the new rules', () => {
  // Documents a counterexample, not a wish: W1 starts an unstable-marked node with its data once every other node is
  // reachable and not running. A node cut off with its AZ's clients for longer than its watchdog's kill took their
  // in-doubt retries (each a write under S1: generation + 1) while the majority acknowledged a rival after the fence;
  // the majority's two nodes crash around the heal (restarting with their data), the cut node sees both not running,
  // starts with its data, and its copy (more generations) wins the merge: the majority's acknowledged spend is lost.
  test('az-isolation-two-kill: an acknowledged spend lost (W1 starts the orphan with its data)', () => {
    const sc = counterexample('az-isolation-two-kill', NEW_RULES, safe, { numRuns: 500, seed: 44 });
    expect(sc).toBeDefined();
    expect(simulate(sc!, NEW_RULES).lost.length).toBeGreaterThan(0);
    console.log(report('new rules, az-isolation-two-kill (shrunk counterexample, a residual):', sc!, NEW_RULES));
  });

  // Documents a counterexample: G2's fence (the watchdog's 10 s + 3 s) assumes the node left out turns orphan (ERROR)
  // no later than about when the majority re-forms. One left out that notices a clustering quantum (3.3 s) later is
  // killed 13.3 s after the new key, while processes that saw the key at once tolerate its silence after 13 s: for
  // that time it still takes writes and, once the cut heals, its replica writes overwrite the majority's copies by
  // last-update-time (CE), or the acknowledged write is on it alone. A longer fence closes that instance.
  test('az-isolation, the orphan noticing a quantum late: an acknowledged spend lost with a 13 s fence, not with FENCE_MS', () => {
    const late = (sc: Scenario): Scenario => ({ ...sc, orphanLagMs: 3300 });
    const short = { ...NEW_RULES, fenceMs: 13_000 };
    const r = fc.check(
      fc.property(NEMESES['az-isolation'].map(late), (sc) => safe(simulate(sc, short))),
      { numRuns: 600, seed: 5 },
    );
    expect(r.failed).toBe(true);
    const sc = r.counterexample![0];
    console.log(report('az-isolation with a 3.3 s orphan lag and a 13 s fence (shrunk counterexample):', sc, short));
    expect(safe(simulate(sc, NEW_RULES))).toBe(true);
    expect(safe(simulate({ ...sc, orphanLagMs: 2000 }, short))).toBe(true);
  });

  // the `down` exemption (a node whose host refuses the connection tolerated without the fence) was tried and
  // rejected: a master that took in-doubt writes through a fabric cut (each one a generation more on its own copy) and
  // is then killed is down while the majority acknowledges on its replica; it restarts with its data (no mark: it was
  // a member) and its copy wins the merge on generations
  test('with the down exemption: fabric-cut loses an acknowledged spend (why it is not a rule)', () => {
    const r = fc.check(
      fc.property(NEMESES['fabric-cut'], (sc) => safe(simulate(sc, { ...NEW_RULES, down: true }))),
      { numRuns: 400, seed: 3 },
    );
    expect(r.failed).toBe(true);
  });
});
