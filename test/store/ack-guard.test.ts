/**
 * The rule of SPEND_ACK_GUARD=refuse (lib/store/ack-guard.ts judgeView) over fake cluster views, one per condition the
 * harness provokes, and its invariants as properties; the view tracker's sharing rule (a view asked after the writes
 * were answered, never an older one).
 */
import fc from 'fast-check';
import type { ClusterView, NodeView } from '../../lib/engine/port';
import {
  ClusterViewTracker,
  FENCE_MS,
  judgeView as judge,
  majorityOf,
  viewKey,
  type GuardMemory,
} from '../../lib/store/ack-guard';

const member = (node: string, key: string): NodeView => ({ node, state: 'member', key });
const silent = (node: string): NodeView => ({ node, state: 'unreachable', detail: 'timeout' });
const orphan = (node: string): NodeView => ({ node, state: 'unstable', detail: 'ERROR::unstable-cluster' });
const view = (...nodes: NodeView[]): ClusterView => ({ nodes });
/** A process that knew the view's key before its writes and has seen it for FENCE_MS (the rules of decision 0007). */
const longKnown = (v: ClusterView): GuardMemory => ({ before: viewKey(v), ageMs: () => FENCE_MS });
/** judgeView as a process that has long known the view's cluster sees it */
const judgeView = (v: ClusterView, minSize: number) => judge(v, minSize, longKnown(v));

describe('judgeView: each condition of the partition harness (3 nodes, majority 2)', () => {
  const ok = (v: ClusterView) => judgeView(v, majorityOf(3)).ok;
  test('whole cluster, migrations or not: acknowledged', () => {
    expect(ok(view(member('a', 'K1'), member('b', 'K1'), member('c', 'K1')))).toBe(true);
  });
  test('kill without restart: the other two agree before and after they re-form (a write that needs the dead node waits for it)', () => {
    expect(ok(view(member('a', 'K1'), member('b', 'K1'), silent('c')))).toBe(true);
    expect(ok(view(member('a', 'K2'), member('b', 'K2'), silent('c')))).toBe(true);
    // the client already dropped the dead node
    expect(ok(view(member('a', 'K2'), member('b', 'K2')))).toBe(true);
  });
  test('restart: the node is back as an orphan first (refused), then a member of the new cluster', () => {
    expect(ok(view(member('a', 'K2'), member('b', 'K2'), orphan('c')))).toBe(false);
    expect(ok(view(member('a', 'K3'), member('b', 'K2'), member('c', 'K3')))).toBe(false);
    expect(ok(view(member('a', 'K3'), member('b', 'K3'), member('c', 'K3')))).toBe(true);
  });
  test('cut-off and split: the side alone is an orphan, or still names the old cluster: refused', () => {
    expect(ok(view(member('a', 'K1'), member('b', 'K2'), member('c', 'K2')))).toBe(false);
    expect(ok(view(orphan('a'), member('b', 'K2'), member('c', 'K2')))).toBe(false);
  });
  test('pause: the silent node is still a member (its partitions wait for it), then killed by its watchdog', () => {
    expect(ok(view(silent('a'), member('b', 'K1'), member('c', 'K1')))).toBe(true);
    expect(ok(view(silent('a'), member('b', 'K2'), member('c', 'K2')))).toBe(true);
  });
  test('a lone node, or no node: refused', () => {
    expect(ok(view(member('a', 'K9'), silent('b'), silent('c')))).toBe(false);
    expect(ok(view())).toBe(false);
  });
  test('without AEROSPIKE_CLUSTER_SIZE every known node must answer', () => {
    expect(judgeView(view(member('a', 'K2'), member('b', 'K2'), silent('c')), 0).ok).toBe(false);
    expect(judgeView(view(member('a', 'K2'), member('b', 'K2')), 0).ok).toBe(true);
  });
  test('the detail names what each node said', () => {
    expect(judgeView(view(orphan('a'), member('b', 'K2')), 2).detail).toMatch(/a=unstable, b=K2/);
  });
});

/** N nodes split into groups (a cluster per group, orphans alone); a client sees any subset of them. */
const partitioned = fc.integer({ min: 1, max: 7 }).chain((n) =>
  fc.record({
    n: fc.constant(n),
    group: fc.array(fc.integer({ min: 0, max: n - 1 }), { minLength: n, maxLength: n }),
    seen: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    reachable: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
  }),
);

function viewOf(p: { n: number; group: number[]; seen: boolean[]; reachable: boolean[] }, minSize: number) {
  const size = (g: number) => p.group.filter((x) => x === g).length;
  const nodes = p.group.flatMap((g, i): NodeView[] => {
    if (!p.seen[i]) return [];
    if (!p.reachable[i]) return [silent(`n${i}`)];
    // a group below min-cluster-size cannot form a cluster: its nodes are orphans
    return [size(g) < minSize ? orphan(`n${i}`) : member(`n${i}`, `K${g}`)];
  });
  return view(...nodes);
}

describe('judgeView invariants', () => {
  test('at most one group of a partitioned cluster is ever acknowledged in (whatever each client sees)', () => {
    fc.assert(
      fc.property(
        partitioned,
        fc.array(fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }), { maxLength: 4 }),
        (p, clients) => {
          const min = majorityOf(p.n);
          const accepted = new Set<string>();
          for (const seen of [p.seen, ...clients.map((c) => c.slice(0, p.n))]) {
            const v = viewOf({ ...p, seen }, min);
            if (judgeView(v, min).ok) accepted.add((v.nodes.find((x) => x.state === 'member') as { key: string }).key);
          }
          expect(accepted.size).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  test('acknowledged only when at least the majority answered one cluster key, and no orphan', () => {
    fc.assert(
      fc.property(partitioned, fc.integer({ min: 0, max: 4 }), (p, minSize) => {
        const v = viewOf(p, minSize);
        if (!judgeView(v, minSize).ok) return;
        const members = v.nodes.filter((x) => x.state === 'member');
        expect(v.nodes.some((x) => x.state === 'unstable')).toBe(false);
        expect(new Set(members.map((m) => (m as { key: string }).key)).size).toBe(1);
        expect(members.length).toBeGreaterThanOrEqual(minSize);
      }),
    );
  });

  test('in a partitioned cluster, a node turning unstable never turns a refusal into an acknowledgement', () => {
    fc.assert(
      fc.property(partitioned, fc.nat(), (p, pick) => {
        const min = majorityOf(p.n);
        const v = viewOf(p, min);
        if (v.nodes.length === 0 || judgeView(v, min).ok) return;
        const i = pick % v.nodes.length;
        const worse = view(...v.nodes.map((x, k) => (k === i ? orphan(x.node) : x)));
        expect(judgeView(worse, min).ok).toBe(false);
      }),
    );
  });

  test('a node falling silent never turns a refusal for too few answers into an acknowledgement', () => {
    // a refusal for an orphan or for two clusters can end when that node falls silent: a silent node is tolerated
    // (dead, or killed by its watchdog before the others can re-form without it; decision 0007), and the first
    // invariant above still holds: one group at most
    fc.assert(
      fc.property(partitioned, fc.nat(), fc.integer({ min: 0, max: 4 }), (p, pick, minSize) => {
        const v = viewOf(p, minSize);
        const before = judgeView(v, minSize);
        if (v.nodes.length === 0 || before.ok) return;
        if (before.reason !== 'belowMajority' && before.reason !== 'noAnswer') return;
        const i = pick % v.nodes.length;
        const worse = view(...v.nodes.map((x, k) => (k === i ? silent(x.node) : x)));
        expect(judgeView(worse, minSize).ok).toBe(false);
      }),
    );
  });

  test('an orphan that falls silent may leave the majority acknowledged (silence is tolerated; an answer of ERROR is not)', () => {
    const min = majorityOf(3);
    expect(judgeView(view(member('a', 'K1'), member('b', 'K1'), orphan('c')), min).ok).toBe(false);
    expect(judgeView(view(member('a', 'K1'), member('b', 'K1'), silent('c')), min).ok).toBe(true);
  });
});

describe('decision 0009: the cluster unchanged across the writes, and a silent node tolerated only once fenced', () => {
  const min = majorityOf(3);
  const whole = view(member('a', 'K2'), member('b', 'K2'), member('c', 'K2'));
  const withSilent = view(member('a', 'K2'), member('b', 'K2'), silent('c'));
  test('a key before the writes that is not the view key: refused as changed (a merge may have dropped them)', () => {
    const v = judge(whole, min, { before: 'K1', ageMs: () => 60_000 });
    expect(v).toMatchObject({ ok: false, reason: 'changed' });
    expect(v.detail).toMatch(/K1 before, K2 after/);
    expect(judge(whole, min, { before: undefined, ageMs: () => 60_000 })).toMatchObject({ reason: 'changed' });
    expect(judge(whole, min, { before: 'K2', ageMs: () => 0 }).ok).toBe(true);
  });
  test('a silent node with a key seen for less than FENCE_MS: refused as unfenced; from FENCE_MS on: acknowledged', () => {
    expect(judge(withSilent, min, { before: 'K2', ageMs: () => FENCE_MS - 1 })).toMatchObject({
      ok: false,
      reason: 'unfenced',
    });
    expect(judge(withSilent, min, { before: 'K2', ageMs: () => FENCE_MS }).ok).toBe(true);
    // a whole view needs no age: every node answered
    expect(judge(whole, min, { before: 'K2', ageMs: () => 0 }).ok).toBe(true);
  });
  test('a node whose host refuses the connection (down) waits the fence too: it may restart with its data', () => {
    const down: NodeView = { node: 'c', state: 'down', detail: 'connect ECONNREFUSED' };
    const v = view(member('a', 'K2'), member('b', 'K2'), down);
    expect(judge(v, min, { before: 'K2', ageMs: () => 0 }).reason).toBe('unfenced');
    expect(judge(v, min, { before: 'K2', ageMs: () => FENCE_MS }).ok).toBe(true);
  });
  test('a new process during a cut: the seed it does not know answers ERROR (refused) or nothing (unfenced)', () => {
    const fresh = { before: 'K2', ageMs: () => 500 };
    expect(judge(view(member('a', 'K2'), member('c', 'K2'), orphan('seed b:3000')), min, fresh).reason).toBe(
      'unstable',
    );
    expect(judge(view(member('a', 'K2'), member('c', 'K2'), silent('seed b:3000')), min, fresh).reason).toBe(
      'unfenced',
    );
  });
  test('property: an acknowledgement with a silent node always rests on a key known before and seen for FENCE_MS', () => {
    fc.assert(
      fc.property(
        partitioned,
        fc.integer({ min: 0, max: 30_000 }),
        fc.option(fc.constantFrom('K0', 'K1', 'K2'), { nil: undefined }),
        (p, age, before) => {
          const m = majorityOf(p.n);
          const v = viewOf(p, m);
          const verdict = judge(v, m, { before, ageMs: () => age });
          if (!verdict.ok) return;
          expect(viewKey(v)).toBe(before);
          if (v.nodes.some((x) => x.state === 'unreachable')) expect(age).toBeGreaterThanOrEqual(FENCE_MS);
        },
      ),
    );
  });
});

describe('ClusterViewTracker', () => {
  function deferredAsk() {
    const pending: ((v: ClusterView) => void)[] = [];
    const ask = jest.fn(() => new Promise<ClusterView>((resolve) => pending.push(resolve)));
    return { ask, answer: (k: string) => pending.shift()!(view(member('a', k))) };
  }
  const keyOf = (v: ClusterView) => (v.nodes[0] as { key: string }).key;

  test('a view asked before a spend marked is never used for it; spends marked during one request share the next', async () => {
    const d = deferredAsk();
    const t = new ClusterViewTracker(d.ask);
    const first = t.since(t.mark()); // request 1
    const m = t.mark(); // marked while request 1 is in flight
    const a = t.since(m);
    const b = t.since(m);
    expect(d.ask).toHaveBeenCalledTimes(1);
    d.answer('K1');
    expect(keyOf(await first)).toBe('K1');
    await Promise.resolve();
    expect(d.ask).toHaveBeenCalledTimes(2); // request 2, shared by a and b
    d.answer('K2');
    expect([keyOf(await a), keyOf(await b)]).toEqual(['K2', 'K2']);
    // a spend that marked before request 2 was sent may use it; one that marks now needs a new one
    expect(keyOf(await t.since(m))).toBe('K2');
    const c = t.since(t.mark());
    expect(d.ask).toHaveBeenCalledTimes(3);
    d.answer('K3');
    expect(keyOf(await c)).toBe('K3');
  });

  test('a spend that marked before the request in flight was sent shares it', async () => {
    const d = deferredAsk();
    const t = new ClusterViewTracker(d.ask);
    const m = t.mark();
    const a = t.since(m);
    const b = t.since(m);
    expect(d.ask).toHaveBeenCalledTimes(1);
    d.answer('K1');
    expect([keyOf(await a), keyOf(await b)]).toEqual(['K1', 'K1']);
  });

  test('a request that fails is a view of an unreachable cluster, and the next spend asks again', async () => {
    let calls = 0;
    const t = new ClusterViewTracker(async () => {
      calls++;
      if (calls === 1) throw new Error('cluster gone');
      return view(member('a', 'K1'));
    });
    const v = await t.since(t.mark());
    expect(v.nodes[0]).toMatchObject({ state: 'unreachable', detail: 'cluster gone' });
    expect(judgeView(v, 1).ok).toBe(false);
    expect(keyOf(await t.since(t.mark()))).toBe('K1');
  });
});

describe('ClusterViewTracker: what the process remembers of keys', () => {
  test('knows no key until a view names one; its age counts from the first view that named it', async () => {
    let clock = 1000;
    let key = 'K1';
    const t = new ClusterViewTracker(
      async () => view(member('a', key), member('b', key)),
      () => clock,
    );
    expect(t.knownKey()).toBeUndefined();
    // the first spend of a process asks a view before its writes
    await expect(t.keyBefore()).resolves.toBe('K1');
    clock += 5000;
    await t.since(t.mark());
    expect(t.ageMs('K1')).toBe(5000);
    key = 'K2';
    clock += 1000;
    await t.since(t.mark());
    expect(t.knownKey()).toBe('K2');
    expect(t.ageMs('K2')).toBe(0);
    expect(t.ageMs('K1')).toBe(0);
    clock += FENCE_MS;
    expect(t.ageMs('K2')).toBe(FENCE_MS);
  });
  test('a view whose members disagree, or that nobody answered, keeps the last agreed key', async () => {
    const answers = [view(member('a', 'K1')), view(member('a', 'K1'), member('b', 'K9')), view(silent('a'))];
    const t = new ClusterViewTracker(async () => answers.shift()!);
    await t.since(t.mark());
    await t.since(t.mark());
    await t.since(t.mark());
    expect(t.knownKey()).toBe('K1');
  });
});
