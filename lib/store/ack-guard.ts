/**
 * The spend acknowledgement guard (SPEND_ACK_GUARD; docs/decisions/0007-acknowledge-through-routine-cluster-events.md).
 *
 * `refuse` (the default) refuses only what can later be lost: an acknowledgement while some node that may hold writes
 * applied outside the majority could bring them back into a merge. Acknowledged iff, in a view of the cluster asked
 * after the spend's writes were answered:
 *   - no node the client knows answers that it is an orphan or between two clusters (`unstable`);
 *   - every node that answers names the same cluster key;
 *   - at least the majority of AEROSPIKE_CLUSTER_SIZE (the deployment's min-cluster-size) answered so: that cluster
 *     is the majority's.
 * A node that does not answer at all is tolerated: dead; paused or hung, which its watchdog turns into dead before
 * the others can re-form without it (cdk/node-watchdog.ts; it then starts empty); or still a member of that cluster,
 * in which case every write to a partition it holds waits for it (commit-all) and is not acknowledged.
 * Migrations are not waited for: a write during migrations duplicate-resolves against every copy.
 *
 * `settled` (the rule of decision 0006): the cluster whole (AEROSPIKE_CLUSTER_SIZE nodes), every node agreeing and
 * no migration pending. `off`: no guard.
 */
import type { ClusterView, RecordEngine } from '../engine/port';

/**
 * Why the guard refused an acknowledgement, as a class (the `reason` dimension of the functions' SpendsRefused metric):
 *  - `unstable`: a node answered it is an orphan or between two clusters (`cluster-stable` ERROR);
 *  - `disagree`: the nodes that answered name different clusters;
 *  - `belowMajority`: fewer nodes agree than the majority of AEROSPIKE_CLUSTER_SIZE (without it: not every node the
 *    client knows answered);
 *  - `noAnswer`: no node answered at all;
 *  - `unsettled`: SPEND_ACK_GUARD=settled, the cluster not whole or migrating.
 */
export type AckRefusalReason = 'unstable' | 'disagree' | 'belowMajority' | 'noAnswer' | 'unsettled';

export const ACK_REFUSAL_REASONS: readonly AckRefusalReason[] = [
  'unstable',
  'disagree',
  'belowMajority',
  'noAnswer',
  'unsettled',
];

export interface GuardVerdict {
  ok: boolean;
  /** why not (or what was seen), for the in-doubt error */
  detail: string;
  /** the class of a refusal (undefined when ok) */
  reason?: AckRefusalReason;
}

/** The majority of a cluster of `clusterSize` nodes (its min-cluster-size); 0 when the size is not configured. */
export function majorityOf(clusterSize: number | undefined): number {
  return clusterSize ? Math.floor(clusterSize / 2) + 1 : 0;
}

/**
 * The rule of `refuse`, a pure function of one view. `minSize` 0 (no AEROSPIKE_CLUSTER_SIZE): every node the client
 * knows must answer as a member of one cluster.
 */
export function judgeView(view: ClusterView, minSize: number): GuardVerdict {
  const seen = view.nodes.map((n) => `${n.node}=${n.state === 'member' ? n.key : n.state}`);
  const detail = (why: string) => `${why} (${seen.join(', ') || 'no nodes'})`;
  const refuse = (reason: AckRefusalReason, why: string): GuardVerdict => ({ ok: false, reason, detail: detail(why) });
  const unstable = view.nodes.find((n) => n.state === 'unstable');
  if (unstable) return refuse('unstable', `node ${unstable.node} is not a settled member`);
  const members = view.nodes.flatMap((n) => (n.state === 'member' ? [n] : []));
  if (members.length === 0) return refuse('noAnswer', 'no node answered');
  if (members.some((m) => m.key !== members[0].key)) return refuse('disagree', 'nodes disagree on the cluster');
  if (minSize === 0 && members.length !== view.nodes.length)
    return refuse('belowMajority', 'a node did not answer and no AEROSPIKE_CLUSTER_SIZE says what a majority is');
  if (members.length < minSize)
    return refuse('belowMajority', `${members.length} node(s) agree, fewer than the majority ${minSize}`);
  return { ok: true, detail: detail('majority cluster') };
}

/**
 * Shares cluster views between the spends of one store. A spend may use a view only if it was asked after that
 * spend's writes were answered (mark() once they are, since(mark) then): a write applied in a changed cluster was
 * applied by a node that had committed the change before it answered, so that node's later answer to the view names
 * the new cluster. No view is reused by time alone (a TTL would acknowledge writes applied in a cluster the view
 * predates). At most one view request is in flight; spends that marked after it was sent share the next one, so
 * concurrent spends cost one round trip per node per round, however many they are.
 */
export class ClusterViewTracker {
  private sent = 0;
  private last?: { id: number; view: Promise<ClusterView> };
  private inFlight?: { id: number; view: Promise<ClusterView> };
  private next?: Promise<ClusterView>;

  constructor(private readonly ask: () => Promise<ClusterView>) {}

  /** Call once a spend's writes were answered; pass the result to since(). */
  mark(): number {
    return this.sent;
  }

  /** A view asked after `mark` (shared when one is in flight or done; otherwise asked now or right after the one in flight). */
  since(mark: number): Promise<ClusterView> {
    if (this.last && this.last.id > mark) return this.last.view;
    if (this.inFlight && this.inFlight.id > mark) return this.inFlight.view;
    if (!this.inFlight) return this.send();
    this.next ??= this.inFlight.view.then(
      () => this.afterFlight(),
      () => this.afterFlight(),
    );
    return this.next;
  }

  private afterFlight(): Promise<ClusterView> {
    this.next = undefined;
    return this.send();
  }

  private send(): Promise<ClusterView> {
    const id = ++this.sent;
    const view = this.ask().catch((err: unknown) => ({
      nodes: [{ node: '?', state: 'unreachable' as const, detail: err instanceof Error ? err.message : String(err) }],
    }));
    const entry = { id, view };
    this.inFlight = entry;
    void view.then(() => {
      if (this.inFlight === entry) this.inFlight = undefined;
      if (!this.last || this.last.id < id) this.last = entry;
    });
    return view;
  }
}

const trackers = new WeakMap<RecordEngine, ClusterViewTracker>();

/** The tracker of an engine that reports cluster views (one per engine: stores sharing an engine share views). */
export function trackerOf(engine: RecordEngine): ClusterViewTracker | undefined {
  if (!engine.clusterView) return undefined;
  let t = trackers.get(engine);
  if (!t) {
    const ask = engine.clusterView.bind(engine);
    t = new ClusterViewTracker(() => ask());
    trackers.set(engine, t);
  }
  return t;
}
