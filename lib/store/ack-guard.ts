/**
 * The spend acknowledgement guard (SPEND_ACK_GUARD; docs/decisions/0007-acknowledge-through-routine-cluster-events.md,
 * docs/decisions/0009-safe-under-every-partition.md).
 *
 * `refuse` (the default) refuses only what can later be lost: an acknowledgement while some node that may hold writes
 * applied outside the majority could bring them back into a merge. Acknowledged iff, in a view of the cluster asked
 * after the answers the acknowledgement rests on were in (the spend's writes, and the reads that judged them:
 * spend-many.ts):
 *   - no node of the deployment answers that it is an orphan or between two clusters (`unstable`): the view asks
 *     every node the client knows and every configured seed it does not (a client that started during a cut knows
 *     only the majority; the seeds name the orphan);
 *   - every node that answers names the same cluster key;
 *   - at least the majority of AEROSPIKE_CLUSTER_SIZE (the deployment's min-cluster-size) answered so: that cluster
 *     is the majority's;
 *   - the cluster did not change while the writes were in flight: the key this process knew before it sent them is
 *     the view's key (cluster keys never repeat, so the same key before and after means one cluster throughout; a
 *     write applied in a cluster that then merged with a node holding rival writes is not acknowledged by a view of
 *     the merged cluster);
 *   - a node that does not answer is tolerated only once this process has seen the view's key for FENCE_MS: a node
 *     outside a cluster for that long has been killed by its watchdog and starts empty (cdk/node-watchdog.ts), so it
 *     brings nothing back; before that it may be an orphan serving clients this process cannot see. A node whose
 *     host refuses the connection (`down`) waits the fence too: it serves nobody now, but it may restart with its
 *     data and with writes the majority never received.
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
 *  - `unfenced`: a node did not answer (or refused the connection) and this process has seen the cluster for less
 *    than FENCE_MS;
 *  - `changed`: the cluster changed while the spend's writes were in flight (another key before than after);
 *  - `unsettled`: SPEND_ACK_GUARD=settled, the cluster not whole or migrating.
 */
export type AckRefusalReason =
  'unstable' | 'disagree' | 'belowMajority' | 'noAnswer' | 'unfenced' | 'changed' | 'unsettled';

export const ACK_REFUSAL_REASONS: readonly AckRefusalReason[] = [
  'unstable',
  'disagree',
  'belowMajority',
  'noAnswer',
  'unfenced',
  'changed',
  'unsettled',
];

/**
 * How long a cluster key must have been seen before a node that does not answer is tolerated: an orphan's whole life
 * (cdk/node-watchdog.ts): it notices the cut up to a heartbeat timeout (3 s) and a clustering quantum (3.3 s) after
 * the majority re-formed, its watchdog sees it unstable within a poll and a question (0.75 s), and kills it 10 s later
 * (WATCHDOG.unstableMs) after one more question to the other nodes (0.3 s): 17.35 s, rounded up. The model (test/model) finds an acknowledged spend lost with a fence of
 * 13 s and an orphan that notices a quantum late. Checked against the watchdog and the deployed heartbeat by
 * test/cdk/watchdog-fence.test.ts.
 */
export const FENCE_MS = 17_500;

/** What a process knows beyond one view: how long it has seen a key, and the key it knew before the writes. */
export interface GuardMemory {
  /** ms this process has seen `key` (0 if never before this view) */
  ageMs(key: string): number;
  /** the cluster key this process knew when the spend's writes were sent (undefined: none) */
  before: string | undefined;
}

export interface GuardVerdict {
  ok: boolean;
  /** why not (or what was seen), for the in-doubt error; built when read (an acknowledgement never reads it) */
  readonly detail: string;
  /** the class of a refusal (undefined when ok) */
  reason?: AckRefusalReason;
}

/** The majority of a cluster of `clusterSize` nodes (its min-cluster-size); 0 when the size is not configured. */
export function majorityOf(clusterSize: number | undefined): number {
  return clusterSize ? Math.floor(clusterSize / 2) + 1 : 0;
}

/** A verdict whose detail names what each node said, built only if read. */
function verdict(ok: boolean, view: ClusterView, why: () => string, reason?: AckRefusalReason): GuardVerdict {
  return {
    ok,
    ...(reason ? { reason } : {}),
    get detail() {
      const seen = view.nodes.map((n) => `${n.node}=${n.state === 'member' ? n.key : n.state}`);
      return `${why()} (${seen.join(', ') || 'no nodes'})`;
    },
  };
}

/** The one key the answering members name, if they agree (undefined: none answered, or they disagree). */
export function viewKey(view: ClusterView): string | undefined {
  let key: string | undefined;
  for (const n of view.nodes) {
    if (n.state !== 'member') continue;
    if (key === undefined) key = n.key;
    else if (n.key !== key) return undefined;
  }
  return key;
}

/**
 * The rule of `refuse`, a pure function of one view and what the process remembers. `minSize` 0 (no
 * AEROSPIKE_CLUSTER_SIZE): every node asked must answer as a member of one cluster. One pass over the nodes, nothing
 * built for an acknowledgement.
 */
export function judgeView(view: ClusterView, minSize: number, memory: GuardMemory, fenceMs = FENCE_MS): GuardVerdict {
  let key: string | undefined;
  let members = 0;
  let disagree = false;
  for (const n of view.nodes) {
    if (n.state === 'unstable') return verdict(false, view, () => `node ${n.node} is not a settled member`, 'unstable');
    if (n.state !== 'member') continue;
    members++;
    if (key === undefined) key = n.key;
    else if (n.key !== key) disagree = true;
  }
  if (members === 0 || key === undefined) return verdict(false, view, () => 'no node answered', 'noAnswer');
  if (disagree) return verdict(false, view, () => 'nodes disagree on the cluster', 'disagree');
  // a node whose host refuses the connection (down) waits the fence too: a master killed after a fabric cut may come
  // back with its data and more generations than the copy the majority acknowledged on (test/model)
  const silent = members !== view.nodes.length;
  const unfenced = view.nodes.some((n) => n.state === 'unreachable' || n.state === 'down');
  if (minSize === 0 && silent)
    return verdict(
      false,
      view,
      () => 'a node did not answer and no AEROSPIKE_CLUSTER_SIZE says what a majority is',
      'belowMajority',
    );
  if (members < minSize)
    return verdict(false, view, () => `${members} node(s) agree, fewer than the majority ${minSize}`, 'belowMajority');
  if (memory.before !== key) {
    const before = memory.before;
    return verdict(
      false,
      view,
      () => `the cluster changed while the writes were in flight (${before ?? 'no key known'} before, ${key} after)`,
      'changed',
    );
  }
  if (unfenced) {
    const age = memory.ageMs(key);
    if (age < fenceMs)
      return verdict(
        false,
        view,
        () => `a node did not answer and this cluster was seen for ${Math.round(age)} ms, less than ${fenceMs} ms`,
        'unfenced',
      );
  }
  return verdict(true, view, () => 'majority cluster');
}

/**
 * Shares cluster views between the spends of one store. A spend may use a view only if it was asked after every
 * answer its acknowledgement rests on (mark() once they are in, since(mark) then): a write applied in a changed
 * cluster was applied by a node that had committed the change before it answered, so that node's later answer to
 * the view names the new cluster. No view is reused by time alone (a TTL would acknowledge writes applied in a
 * cluster the view predates). At most one view request is in flight; spends that marked after it was sent share
 * the next one, so concurrent spends cost one round trip per node per round, however many they are.
 */
export class ClusterViewTracker {
  private sent = 0;
  private last?: { id: number; view: Promise<ClusterView> };
  private inFlight?: { id: number; view: Promise<ClusterView> };
  private next?: Promise<ClusterView>;
  /** the last key a view's members agreed on, and when a view first answered with it (performance.now()) */
  private seen?: { key: string; since: number };

  constructor(
    private readonly ask: () => Promise<ClusterView>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Call once the answers a spend's acknowledgement rests on are in; pass the result to since(). */
  mark(): number {
    return this.sent;
  }

  /**
   * The key this process knows now (the last key a view's members agreed on), for a spend about to send its writes;
   * a process that knows none asks a view first (its first spend, or after views without one).
   */
  async keyBefore(): Promise<string | undefined> {
    return this.knownKey() ?? this.since(this.mark()).then(() => this.knownKey());
  }

  /** The last key a view's members agreed on. */
  knownKey(): string | undefined {
    return this.seen?.key;
  }

  /** ms since a view first answered with `key` (0 if the last agreed key is another). */
  ageMs(key: string): number {
    return this.seen?.key === key ? this.now() - this.seen.since : 0;
  }

  /** A view asked after `mark` (shared when one is in flight or done; otherwise asked now or right after the one in flight). */
  since(mark: number): Promise<ClusterView> {
    if (this.last && this.last.id > mark) return this.last.view;
    const inFlight = this.inFlight;
    if (!inFlight) return this.send();
    if (inFlight.id > mark) return inFlight.view;
    // the view in flight never rejects (send): one reaction sends the next when it is answered
    this.next ??= inFlight.view.then(() => {
      this.next = undefined;
      return this.send();
    });
    return this.next;
  }

  private send(): Promise<ClusterView> {
    const entry = { id: ++this.sent, view: undefined as unknown as Promise<ClusterView> };
    const answered = (view: ClusterView): ClusterView => {
      if (this.inFlight === entry) this.inFlight = undefined;
      if (!this.last || this.last.id < entry.id) {
        this.last = entry;
        // a key seen now existed now: its age counts from this answer (a lower bound of the cluster's)
        const key = viewKey(view);
        const seen = this.seen;
        if (key !== undefined && (seen === undefined || seen.key !== key)) this.seen = { key, since: this.now() };
      }
      return view;
    };
    entry.view = this.ask().then(answered, (err: unknown) =>
      answered({
        nodes: [{ node: '?', state: 'unreachable', detail: err instanceof Error ? err.message : String(err) }],
      }),
    );
    this.inFlight = entry;
    return entry.view;
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
