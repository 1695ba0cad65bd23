/**
 * The workload plan (scripts/partition/plan.ts): every output has `spenders` competing spending txs, each on another
 * client; with late rivals (the new-client nemesis, decision 0009) the first spender goes to the early clients, due
 * around the fault, and the rivals to the clients started during it, due after they start.
 */
import { faultTooShort } from '../../scripts/partition/nemesis';
import { buildPlan, withLateRivals } from '../../scripts/partition/plan';

const base = () =>
  buildPlan({ outputs: 8, outputsPerParent: 4, spenders: 2, clients: 4, fromMs: 1000, toMs: 9000, seed: 7 });

test('each output has one spend per spender, on different clients, sent at the same moment', () => {
  const plan = base();
  expect(plan.parents).toHaveLength(2);
  expect(plan.spends).toHaveLength(16);
  for (let o = 0; o < 8; o++) {
    const [a, b] = plan.spends.slice(o * 2, o * 2 + 2);
    expect([a.spender, b.spender]).toEqual([0, 1]);
    expect(a.parent).toBe(b.parent);
    expect(a.vout).toBe(b.vout);
    expect(a.txid).not.toBe(b.txid);
    expect(a.client).not.toBe(b.client);
    expect(a.dueMs).toBe(b.dueMs);
  }
});

test('late rivals: first spenders on the early clients around the fault, rivals on the late clients after they start', () => {
  const plan = withLateRivals(base(), 4, {
    firstFromMs: 1000,
    firstToMs: 5000,
    rivalsFromMs: 10_500,
    rivalsToMs: 12_500,
  });
  const first = plan.spends.filter((s) => s.spender === 0);
  const rivals = plan.spends.filter((s) => s.spender === 1);
  expect(new Set(first.map((s) => s.client))).toEqual(new Set([0, 1]));
  expect(new Set(rivals.map((s) => s.client))).toEqual(new Set([2, 3]));
  expect(Math.min(...first.map((s) => s.dueMs))).toBe(1000);
  expect(Math.max(...first.map((s) => s.dueMs))).toBeLessThanOrEqual(5000);
  expect(Math.min(...rivals.map((s) => s.dueMs))).toBe(10_500);
  expect(Math.max(...rivals.map((s) => s.dueMs))).toBeLessThanOrEqual(12_500);
  // the same txs: only who sends them and when changed
  expect(plan.spends.map((s) => s.txid)).toEqual(base().spends.map((s) => s.txid));
  expect(() => withLateRivals(base(), 1, { firstFromMs: 0, firstToMs: 1, rivalsFromMs: 2, rivalsToMs: 3 })).toThrow(
    /at least 2 clients/,
  );
});

test('a nemesis with a length of its own is refused a shorter workload before anything starts (flapping-cut: 48 s)', () => {
  expect(faultTooShort(['flapping-cut'], 8000)).toMatch(/flapping-cut's cuts and heals last 48000 ms, more than 8000/);
  expect(faultTooShort(['cut-off', 'flapping-cut'], 47_999)).toBeDefined();
  expect(faultTooShort(['flapping-cut'], 48_000)).toBeUndefined();
  expect(faultTooShort(['cut-off', 'rolling-restart'], 8000)).toBeUndefined();
});
