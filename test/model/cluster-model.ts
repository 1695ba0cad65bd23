/**
 * A runnable model of the partition-safety protocol (issue 44): 3 Aerospike CE nodes, their watchdogs and
 * check-start, store processes with their partition maps and the spend acknowledgement guard, in discrete time
 * (TICK_MS). Pure: no network, no clock, no randomness except the scenario's seed. One record with a few outputs.
 *
 * What each server behaviour stands for (aerospike-server 8.1.2 as read in the safety review of 2026-11-29 and in
 * decision 0007):
 *  - a cluster re-forms when a member has not heard another for the heartbeat timeout (150 ms x 20 = 3 s); the
 *    members that still hear each other form it with a fresh key (keys never repeat); with fewer than
 *    min-cluster-size they are orphans (clustering.c);
 *  - an orphan answers `cluster-stable` ERROR at once (thr_info.c:1240) but keeps serving its old partition map for
 *    5 clustering quanta, then blocks client commands (exchange.c:2289, as_partition_balance_revert_to_orphan);
 *  - a node joins a cluster it hears after about one clustering quantum; the copies of the nodes of the new cluster
 *    are merged: higher generation wins, then the later last-update-time (record.c:446); the merged copy lands on the
 *    new cluster's replicas (migrations, duplicate resolution: partition_balance.c);
 *  - a write goes to the master of the client's partition map; a node that is not master proxies it inside its
 *    cluster; the master applies the UDF and sends replica writes to its map's replicas (commit-all); a replica
 *    write that cannot be delivered (fabric port cut, replica down) leaves the client in doubt; a replica of another
 *    cluster accepts a replica write by last-update-time alone (CE: partition_ce.c:53, rw_utils_ce.c:289,
 *    replica_write.c:309);
 *  - "already spent by this spender" returns without an update (utxo.lua:629), which the server treats as a read:
 *    no replica write (udf.c:756). Rule S1 makes that path write;
 *  - a client learns nodes from the first seed that answers and from its nodes' peer lists; the majority's peer
 *    lists hold only its members (service_list.c:643, as_cluster.c:328-410); its partition map is refreshed every
 *    tend (1 s) from one of the nodes it knows, an orphan's old map included (as_partition.c:343-355).
 * Modelling choices (each a scenario parameter where its value is not known): asd answers nothing while it loads its
 * data (startupMs); a node left out of a re-formed cluster may notice it is an orphan later than the majority
 * re-forms (orphanLagMs; it answers its old key meanwhile); the view is asked viewDelayMs after the write was applied;
 * a view's answers are taken at one instant; a replica write that the replica's last-update-time rejects still counts
 * as delivered (the master answers OK, the guard judges it); a replica write that cannot be delivered is not sent
 * again later; the merge of a new cluster is immediate.
 * What is not modelled: the write buffers lost by a SIGKILL (CE has no commit-to-device: decision 0007's durability
 * residual), the rollback of refused spends, paused nodes (the watchdog's silent kill and mark), one-sided cuts, the
 * client dropping a node it cannot reach.
 */
import {
  INITIAL_WATCHDOG_STATE,
  WATCHDOG,
  majorityKey,
  watchdogStep,
  type WatchdogState,
  type WipeMark,
} from '../../cdk/node-watchdog';

export const NODES = 3;
export const MIN_CLUSTER_SIZE = 2;
export const OUTPUTS = 3;
export const TICK_MS = 50;
/** heartbeat interval 150 ms x timeout count 20 (the deployment's conf) */
export const HEARTBEAT_TIMEOUT_MS = 3000;
/** one clustering quantum */
export const QUANTUM_MS = 3300;
/** an orphan serves its old map for 5 quanta (exchange.c) */
export const ORPHAN_SERVE_MS = 5 * QUANTUM_MS;
/** the client's tend interval */
export const TEND_MS = 1000;
/** systemd's RestartSec after the watchdog's SIGKILL */
export const RESTART_MS = 1000;
/** G2: the watchdog's unstable kill (10 s) plus a 3 s margin */
export const FENCE_MS = WATCHDOG.unstableMs + 3000;
/** after the scenario, how long the healed cluster is given to converge */
export const SETTLE_MS = 40_000;

/** Which of the new rules are on (all off: the rules of main today). */
export interface Rules {
  /** G1: the guard asks every node of the deployment (the seed list), not only the nodes the process discovered */
  g1: boolean;
  /** G2: a node that does not answer is tolerated only once this process has seen the key for FENCE_MS */
  g2: boolean;
  /** G3: the key the process knew before the writes were sent equals the key of the view asked after them */
  g3: boolean;
  /** W1: check-start wipes (any mark) only if a majority serves without the node; unstable without one waits */
  w1: boolean;
  /** S1: a spend already recorded for the same spender writes (generation + 1, replicated, commit-all) */
  s1: boolean;
  /** G2's fence (FENCE_MS unless said) */
  fenceMs?: number;
}

export const TODAY: Rules = { g1: false, g2: false, g3: false, w1: false, s1: false };
export const NEW_RULES: Rules = { g1: true, g2: true, g3: true, w1: true, s1: true };
export const RULE_NAMES = ['g1', 'g2', 'g3', 'w1', 's1'] as const;

/** A fault in force from `from` to `to` (ms), or a kill at `at`. Nodes are 0..2 (n1..n3); n1 is the first seed. */
export type Fault =
  | { kind: 'isolate'; node: number; from: number; to: number }
  | { kind: 'isolateAll'; from: number; to: number }
  | { kind: 'fabric'; a: number; b: number; from: number; to: number }
  /** the node and the clients of its AZ cut off together from the rest */
  | { kind: 'az'; node: number; from: number; to: number }
  | { kind: 'kill'; node: number; at: number };

export interface ProcessSpec {
  /** the AZ of the process (az faults cut it off with the node of the same index) */
  az: number;
  startAt: number;
  stopAt: number;
  /** the spender (the spending tx) of every spend this process sends */
  spender: string;
  /** output -> when its spend is first sent */
  spends: { output: number; at: number }[];
  /** pause between an answer that is not final and the next attempt */
  retryMs: number;
  /** the process serves other spends too: it asks a view every tend */
  busy: boolean;
}

export interface Scenario {
  nemesis: string;
  rf: 2 | 3;
  /** the record's partition succession list (its master is the first member) */
  succession: number[];
  /** each node's clock minus real time */
  skew: number[];
  /** how long a node takes to join a cluster it hears (at most a quantum) */
  joinMs: number;
  /** how long after the others re-form without it a node left out notices it is an orphan (answers its old key) */
  orphanLagMs: number;
  /** how long asd takes from its start to answering (loading its data; connection refused meanwhile) */
  startupMs: number;
  /** from a write's application to the view asked after its answer (the answer's way back, the view's way there) */
  viewDelayMs: number;
  /** how long the client waits for an answer that does not come (the in-doubt timeout) */
  inDoubtMs: number;
  /** each node's watchdog poll phase (ms) */
  wdPhase: number[];
  faults: Fault[];
  processes: ProcessSpec[];
  /** when the faults are over and the processes stopped */
  endAt: number;
  seed: number;
}

export interface Copy {
  gen: number;
  lut: number;
  spenders: (string | null)[];
}

interface Map_ {
  key: number;
  members: number[];
}

/** down: killed, systemd restarts it after RESTART_MS; checkStart: ExecStartPre; starting: asd loading its data */
type Proc = 'running' | 'down' | 'checkStart' | 'starting';

interface NodeState {
  proc: Proc;
  restartAt: number;
  runningAt: number;
  checkSince: number;
  nextCheckAt: number;
  view: Map_ | null;
  orphan: { map: Map_; since: number } | null;
  /** left out of a re-formed cluster, it notices (turns orphan) at this time: until then it answers its old key */
  leaveAt: number | null;
  copy: Copy | null;
  wd: WatchdogState;
  mark: WipeMark | undefined;
}

interface ProcessState {
  started: boolean;
  known: Set<number>;
  map: Map_ | null;
  tends: number;
  lastKey: number | undefined;
  firstSeen: Map<number, number>;
}

interface Worker {
  process: number;
  output: number;
  spender: string;
  nextAt: number;
  /** when the spend was first sent */
  firstAt: number;
  done: boolean;
  /** the write was answered OK: the view is asked at viewAt; the key the process knew before the write */
  viewAt?: number;
  keyBefore?: number;
}

export interface Ack {
  output: number;
  spender: string;
  at: number;
  process: number;
  /** from the spend's first sending to its acknowledgement (the callers' wait) */
  waitedMs: number;
}

export interface Outcome {
  acks: Ack[];
  final: Copy | null;
  converged: boolean;
  /** outputs acknowledged to two spenders */
  doubleAcked: number[];
  /** acknowledged spends not in the final record */
  lost: Ack[];
  /** the record (created and acknowledged before the faults) has no copy left */
  createLost: boolean;
  /** spends neither acknowledged nor answered SPENT by the time their processes stopped */
  unfinished: number;
  /** what happened, when run with tracing */
  trace: string[];
}

/** mulberry32 */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cloneCopy = (c: Copy): Copy => ({ gen: c.gen, lut: c.lut, spenders: [...c.spenders] });

/** record.c:446 (conflict-resolution-policy generation): higher generation, then the later last-update-time. */
export function mergeCopies(copies: (Copy | null)[]): Copy | null {
  let best: Copy | null = null;
  for (const c of copies) {
    if (!c) continue;
    if (!best || c.gen > best.gen || (c.gen === best.gen && c.lut > best.lut)) best = c;
  }
  return best ? cloneCopy(best) : null;
}

const nodeName = (i: number) => `n${i + 1}`;

/** A running simulation of one scenario under one rule set. */
export class ClusterModel {
  t = 0;
  private keys = 0;
  private readonly nodes: NodeState[] = [];
  private readonly procs: ProcessState[] = [];
  private readonly workers: Worker[] = [];
  private readonly rand: () => number;
  readonly acks: Ack[] = [];
  readonly trace: string[] = [];
  /** per pair of nodes: since when both run with the heartbeat port up, or when that last stopped */
  private readonly pairUpSince: (number | null)[][];
  private readonly pairDownAt: number[][];
  private hb: boolean[][] = [];
  private fabric: boolean[][] = [];
  /** per AZ of clients, per node */
  private clientReach: boolean[][] = [];

  constructor(
    readonly sc: Scenario,
    readonly rules: Rules,
    private readonly tracing = false,
  ) {
    this.rand = prng(sc.seed);
    const all = [0, 1, 2];
    const initial: Map_ = { key: ++this.keys, members: all };
    const replicas = this.replicasOf(initial);
    for (let i = 0; i < NODES; i++) {
      this.nodes.push({
        proc: 'running',
        restartAt: 0,
        runningAt: 0,
        checkSince: 0,
        nextCheckAt: 0,
        view: initial,
        orphan: null,
        leaveAt: null,
        // the record was created (and acknowledged) in the first cluster, unspent
        copy: replicas.includes(i) ? { gen: 1, lut: 0, spenders: new Array<string | null>(OUTPUTS).fill(null) } : null,
        wd: { answered: true, lastAnswerAt: 0 },
        mark: undefined,
      });
    }
    this.pairUpSince = all.map(() => all.map(() => -1e9));
    this.pairDownAt = all.map(() => all.map(() => -1e9));
    sc.processes.forEach((p, id) => {
      this.procs.push({
        started: false,
        known: new Set(),
        map: null,
        tends: 0,
        lastKey: undefined,
        firstSeen: new Map(),
      });
      for (const s of p.spends)
        this.workers.push({
          process: id,
          output: s.output,
          spender: p.spender,
          nextAt: s.at,
          firstAt: s.at,
          done: false,
        });
    });
  }

  private log(msg: string): void {
    if (this.tracing) this.trace.push(`${(this.t / 1000).toFixed(2)}s ${msg}`);
  }

  // ---- the network ----

  private active(f: Fault): boolean {
    return f.kind !== 'kill' && this.t >= f.from && this.t < f.to;
  }

  /** The links in force now (a full cut is every port; the watchdog's and check-start's questions go with it). */
  private links(): void {
    const up = () => [0, 1, 2].map(() => [true, true, true]);
    this.hb = up();
    this.fabric = up();
    this.clientReach = up();
    const cut = (a: number, b: number, heartbeat: boolean) => {
      if (a === b) return;
      this.fabric[a][b] = this.fabric[b][a] = false;
      if (heartbeat) this.hb[a][b] = this.hb[b][a] = false;
    };
    for (const f of this.sc.faults) {
      if (!this.active(f)) continue;
      if (f.kind === 'isolate' || f.kind === 'az') for (let j = 0; j < NODES; j++) cut(f.node, j, true);
      if (f.kind === 'isolateAll') for (let a = 0; a < NODES; a++) for (let b = 0; b < NODES; b++) cut(a, b, true);
      if (f.kind === 'fabric') cut(f.a, f.b, false);
      if (f.kind === 'az')
        for (let az = 0; az < NODES; az++)
          for (let n = 0; n < NODES; n++) if ((az === f.node) !== (n === f.node)) this.clientReach[az][n] = false;
    }
  }

  private running(i: number): boolean {
    return this.nodes[i].proc === 'running';
  }

  /** i has heard j within the heartbeat timeout */
  private alive(i: number, j: number): boolean {
    return this.pairUpSince[i][j] !== null || this.t - this.pairDownAt[i][j] < HEARTBEAT_TIMEOUT_MS;
  }

  private heartbeats(): void {
    for (let i = 0; i < NODES; i++)
      for (let j = 0; j < NODES; j++) {
        if (i === j) continue;
        const heard = this.running(i) && this.running(j) && this.hb[i][j];
        if (heard && this.pairUpSince[i][j] === null) this.pairUpSince[i][j] = this.t;
        if (!heard && this.pairUpSince[i][j] !== null) {
          this.pairUpSince[i][j] = null;
          this.pairDownAt[i][j] = this.t;
        }
      }
  }

  // ---- clustering (clustering.c, exchange.c) ----

  /** The record's replicas in a map: the first RF members of its succession list; the master first. */
  private replicasOf(map: Map_): number[] {
    return this.sc.succession.filter((n) => map.members.includes(n)).slice(0, this.sc.rf);
  }

  /** The largest set of `nodes` whose pairs all satisfy `ok` (the highest node ids preferred: the principal). */
  private largestClique(nodes: number[], ok: (a: number, b: number) => boolean): number[] {
    let best: number[] = [];
    const n = nodes.length;
    for (let mask = 1; mask < 1 << n; mask++) {
      const set = nodes.filter((_, k) => mask & (1 << k));
      if (set.length < best.length) continue;
      if (!set.every((a) => set.every((b) => a === b || ok(a, b)))) continue;
      if (set.length > best.length || Math.max(...set) > Math.max(...best)) best = set;
    }
    return best;
  }

  private formCluster(members: number[]): void {
    const map: Map_ = { key: ++this.keys, members: [...members].sort() };
    const merged = mergeCopies(members.map((i) => this.nodes[i].copy));
    const replicas = this.replicasOf(map);
    for (const i of members) {
      const n = this.nodes[i];
      n.view = map;
      n.orphan = null;
      n.copy = merged && replicas.includes(i) ? cloneCopy(merged) : null;
    }
    this.log(
      `cluster K${map.key} = {${map.members.map(nodeName).join(',')}} merged ${merged ? this.show(merged) : 'no copy'}`,
    );
  }

  private becomeOrphan(i: number, map: Map_): void {
    this.nodes[i].view = null;
    this.nodes[i].orphan = { map, since: this.t };
    this.log(`${nodeName(i)} orphan (old map K${map.key}): cluster-stable ERROR, serves its old map for 5 quanta`);
  }

  private clustering(): void {
    const holders = new Map<number, number[]>();
    for (let i = 0; i < NODES; i++) {
      const n = this.nodes[i];
      if (n.leaveAt !== null && this.t >= n.leaveAt && n.view) {
        n.leaveAt = null;
        this.becomeOrphan(i, n.view);
      }
      if (this.running(i) && n.view && n.leaveAt === null)
        holders.set(n.view.key, [...(holders.get(n.view.key) ?? []), i]);
    }
    // a cluster breaks when a member has not heard another for the heartbeat timeout, or one came back restarted
    for (const [key, hs] of holders) {
      const map = this.nodes[hs[0]].view as Map_;
      const broken = map.members.some((j) =>
        hs.some((i) => i !== j && (!this.alive(i, j) || (this.running(j) && this.nodes[j].view?.key !== key))),
      );
      if (!broken) continue;
      holders.delete(key);
      const stay = this.largestClique(hs, (a, b) => this.alive(a, b));
      const reform = stay.length >= MIN_CLUSTER_SIZE;
      for (const i of hs) {
        if (reform && stay.includes(i)) continue;
        if (this.sc.orphanLagMs > 0) this.nodes[i].leaveAt = this.t + this.sc.orphanLagMs;
        else this.becomeOrphan(i, map);
      }
      if (reform) {
        this.formCluster(stay);
        holders.set(this.nodes[stay[0]].view!.key, stay);
      }
    }
    // nodes outside any cluster join the one they hear (every member, for joinMs), or form one together
    const heardFor = (a: number, b: number) => {
      const since = this.pairUpSince[a][b];
      return since !== null && this.t - since >= this.sc.joinMs;
    };
    const free = [0, 1, 2].filter((i) => this.running(i) && !this.nodes[i].view);
    if (free.length === 0) return;
    const clusters = [...holders.values()].sort((a, b) => b.length - a.length);
    if (clusters.length > 0) {
      const members = clusters[0];
      const joiners = free.filter((i) => members.every((j) => heardFor(i, j)));
      if (joiners.length > 0) this.formCluster([...members, ...joiners]);
      return;
    }
    const together = this.largestClique(free, heardFor);
    if (together.length >= MIN_CLUSTER_SIZE) this.formCluster(together);
  }

  /** The map a node serves writes with: its cluster's, or an orphan's old one for 5 quanta (then it blocks). */
  private servingMap(i: number): Map_ | null {
    const n = this.nodes[i];
    if (!this.running(i)) return null;
    if (n.view) return n.view;
    if (n.orphan && this.t - n.orphan.since < ORPHAN_SERVE_MS) return n.orphan.map;
    return null;
  }

  /** `cluster-stable:ignore-migrations=true`: the key, ERROR (orphan, or outside any cluster), no answer (not running). */
  private clusterStable(i: number): string | undefined {
    if (!this.running(i)) return undefined;
    const v = this.nodes[i].view;
    return v ? `K${v.key}` : 'ERROR';
  }

  // ---- nodes: kills, restarts, check-start, watchdog ----

  private kill(i: number, why: string): void {
    const n = this.nodes[i];
    if (n.proc !== 'running' && n.proc !== 'starting') return;
    n.proc = 'down';
    n.restartAt = this.t + RESTART_MS;
    n.view = null;
    n.orphan = null;
    n.leaveAt = null;
    this.log(`${nodeName(i)} SIGKILL (${why}), mark ${n.mark ?? 'none'}`);
  }

  private start(i: number, wipe: boolean, why: string): void {
    const n = this.nodes[i];
    n.proc = 'starting';
    n.runningAt = this.t + this.sc.startupMs;
    if (wipe) n.copy = null;
    n.mark = undefined;
    n.wd = INITIAL_WATCHDOG_STATE;
    n.view = null;
    n.orphan = null;
    this.log(`${nodeName(i)} starts ${wipe ? 'EMPTY' : 'with its data'}: ${why}`);
  }

  /**
   * check-start (cdk/node-watchdog.ts startDecision and the script's check-start). Today: no mark keeps the data;
   * unstable wipes; silent wipes once a majority serves without the node, else keeps the data after PEER_WAIT_MS.
   * W1: unstable wipes only once a majority serves without the node, and starts with its data only once every other
   * node is reachable and its asd not running (connection refused: every node down or waiting).
   */
  private checkStart(i: number): void {
    const n = this.nodes[i];
    if (this.t < n.nextCheckAt) return;
    const mark = n.mark;
    if (mark === undefined) return this.start(i, false, 'no mark');
    if (mark === 'unstable' && !this.rules.w1) return this.start(i, true, 'unstable mark');
    const others = [0, 1, 2].filter((j) => j !== i);
    const answers = others.map((j) => (this.hb[i][j] ? this.clusterStable(j) : undefined));
    const key = majorityKey(answers, MIN_CLUSTER_SIZE);
    if (key !== undefined) return this.start(i, true, `${mark} mark, a majority serves without it (${key})`);
    if (mark === 'silent' && this.t - n.checkSince >= WATCHDOG.peerWaitMs)
      return this.start(i, false, 'silent mark, no majority within the wait');
    if (mark === 'unstable' && others.every((j) => this.hb[i][j] && !this.running(j)))
      return this.start(i, false, 'unstable mark, every other node reachable and not running');
    n.nextCheckAt = this.t + WATCHDOG.peerRetryMs;
  }

  private lifecycle(): void {
    for (let i = 0; i < NODES; i++) {
      const n = this.nodes[i];
      if (n.proc === 'down' && this.t >= n.restartAt) {
        n.proc = 'checkStart';
        n.checkSince = this.t;
        n.nextCheckAt = this.t;
      }
      if (n.proc === 'checkStart') this.checkStart(i);
      if (n.proc === 'starting' && this.t >= n.runningAt) n.proc = 'running';
    }
  }

  /** Every POLL_MS per node: cdk/node-watchdog.ts watchdogStep on the node's answer; the mark is persisted. */
  private watchdogs(): void {
    for (let i = 0; i < NODES; i++) {
      if (!this.running(i) || (this.t - this.sc.wdPhase[i]) % WATCHDOG.pollMs !== 0) continue;
      const n = this.nodes[i];
      const step = watchdogStep(n.wd, n.view ? 'member' : 'unstable', this.t);
      n.wd = step.state;
      n.mark = step.state.wipeOnStart;
      if (step.kill) this.kill(i, `watchdog: ${step.kill}`);
    }
  }

  // ---- writes ----

  private show(c: Copy): string {
    return `{gen ${c.gen}, lut ${c.lut}, ${c.spenders.map((s) => s ?? '-').join('')}}`;
  }

  /** commit-all: a replica write to each replica of the master's map; false when one cannot be delivered. */
  private replicate(m: number, map: Map_, copy: Copy): boolean {
    let all = true;
    for (const r of this.replicasOf(map)) {
      if (r === m) continue;
      if (!this.fabric[m][r] || !this.running(r)) {
        all = false;
        continue;
      }
      const rn = this.nodes[r];
      // same cluster: applied; another cluster's node accepts a replica write by last-update-time alone (CE)
      if (rn.view?.key === map.key || !rn.copy || copy.lut > rn.copy.lut) {
        if (rn.view?.key !== map.key)
          this.log(`${nodeName(r)} accepts ${nodeName(m)}'s replica write of old map K${map.key}`);
        rn.copy = cloneCopy(copy);
      }
    }
    return all;
  }

  /** The spend UDF at the master (utxo.lua spend): 'ok' | 'inDoubt' | 'spent' | 'error'. */
  private spendAtMaster(m: number, map: Map_, output: number, spender: string): Answer {
    const n = this.nodes[m];
    if (!n.copy) return 'error';
    const current = n.copy.spenders[output];
    if (current !== null && current !== spender) return 'spent';
    // utxo.lua:629: already spent by this spender returns without an update: no replica write (udf.c:756)
    if (current === spender && !this.rules.s1) return 'ok';
    const next = cloneCopy(n.copy);
    next.gen++;
    next.lut = this.t + this.sc.skew[m];
    next.spenders[output] = spender;
    n.copy = next;
    const delivered = this.replicate(m, map, next);
    this.log(
      `${nodeName(m)} applies ${spender}${output} in ${n.view ? `K${map.key}` : `old map K${map.key} (orphan)`} -> ${this.show(next)}${delivered ? '' : ' replica write undelivered: in doubt'}`,
    );
    return delivered ? 'ok' : 'inDoubt';
  }

  /** A write sent to node `m` (the master of the client's map): applied, proxied inside its cluster, or refused. */
  private spendAt(m: number, output: number, spender: string): Answer {
    const map = this.servingMap(m);
    if (!map) return 'error';
    const master = this.replicasOf(map)[0];
    if (master === m) return this.spendAtMaster(m, map, output, spender);
    const n = this.nodes[m];
    if (n.view && this.fabric[m][master] && this.nodes[master].view?.key === map.key)
      return this.spendAtMaster(master, map, output, spender);
    return 'inDoubt';
  }

  // ---- store processes: discovery, tends, the guard ----

  private startProcess(p: number): void {
    const spec = this.sc.processes[p];
    const st = this.procs[p];
    st.started = true;
    // the first seed that answers (the deployment's seed order: n1, n2, n3) gives its peers
    for (let s = 0; s < NODES; s++) {
      if (!this.clientReach[spec.az][s] || !this.running(s)) continue;
      st.known.add(s);
      const n = this.nodes[s];
      for (const peer of (n.view ?? n.orphan?.map)?.members ?? []) st.known.add(peer);
      st.map = this.servingMap(s);
      break;
    }
    this.log(`process ${p} (${spec.spender}, az ${spec.az}) starts knowing {${[...st.known].map(nodeName).join(',')}}`);
  }

  /** A tend: peers learnt from the known nodes, and the map of one of them (the map swings between them). */
  private tend(p: number): void {
    const spec = this.sc.processes[p];
    const st = this.procs[p];
    const serving: Map_[] = [];
    for (const i of [...st.known]) {
      if (!this.clientReach[spec.az][i] || !this.running(i)) continue;
      const n = this.nodes[i];
      for (const peer of (n.view ?? n.orphan?.map)?.members ?? []) st.known.add(peer);
      const map = this.servingMap(i);
      if (map) serving.push(map);
    }
    if (serving.length > 0) st.map = serving[Math.floor(this.rand() * serving.length)];
    st.tends++;
    if (spec.busy) this.view(p);
  }

  /** A view: each asked node's `cluster-stable` (undefined: no answer); updates the process's last key and first sightings. */
  private view(p: number): (string | undefined)[] {
    const spec = this.sc.processes[p];
    const st = this.procs[p];
    const asked = this.rules.g1 ? [0, 1, 2] : [...st.known].sort();
    const answers = asked.map((i) => (this.clientReach[spec.az][i] ? this.clusterStable(i) : undefined));
    const key = majorityKey(answers, MIN_CLUSTER_SIZE);
    if (key !== undefined) {
      const k = Number(key.slice(1));
      st.lastKey = k;
      if (!st.firstSeen.has(k)) st.firstSeen.set(k, this.t);
    }
    return answers;
  }

  /**
   * The guard (lib/store/ack-guard.ts judgeView today): no ERROR, every answering node names the same key, at least
   * the majority answered, silent nodes tolerated; G2 tolerates them only after FENCE_MS of the key; G3 wants the
   * key known before the writes.
   */
  private judge(p: number, answers: (string | undefined)[], keyBefore: number | undefined): boolean {
    if (answers.includes('ERROR')) return false;
    const keys = new Set(answers.filter((a): a is string => a !== undefined));
    if (keys.size !== 1) return false;
    const members = answers.filter((a) => a !== undefined).length;
    if (members < MIN_CLUSTER_SIZE) return false;
    const key = Number([...keys][0].slice(1));
    if (this.rules.g2 && members < answers.length) {
      const seen = this.procs[p].firstSeen.get(key);
      if (seen === undefined || this.t - seen < (this.rules.fenceMs ?? FENCE_MS)) return false;
    }
    if (this.rules.g3 && keyBefore !== key) return false;
    return true;
  }

  private attempt(w: Worker): void {
    const spec = this.sc.processes[w.process];
    const st = this.procs[w.process];
    if (this.rules.g3 && st.lastKey === undefined) this.view(w.process);
    const keyBefore = st.lastKey;
    const master = st.map ? this.replicasOf(st.map)[0] : undefined;
    let answer: Answer = 'inDoubt';
    if (master !== undefined && this.clientReach[spec.az][master] && this.running(master))
      answer = this.spendAt(master, w.output, w.spender);
    if (answer === 'spent') {
      w.done = true;
      return;
    }
    if (answer === 'inDoubt') {
      w.nextAt = this.t + this.sc.inDoubtMs + spec.retryMs;
      return;
    }
    if (answer === 'ok') {
      w.viewAt = this.t + this.sc.viewDelayMs;
      w.keyBefore = keyBefore;
      if (this.sc.viewDelayMs === 0) this.acknowledge(w);
      return;
    }
    w.nextAt = this.t + spec.retryMs;
  }

  /** The view asked once the write was answered OK, and the guard's verdict on it. */
  private acknowledge(w: Worker): void {
    const answers = this.view(w.process);
    const ok = this.judge(w.process, answers, w.keyBefore);
    w.viewAt = undefined;
    if (!ok) {
      w.nextAt = this.t + this.sc.processes[w.process].retryMs;
      return;
    }
    w.done = true;
    this.acks.push({
      output: w.output,
      spender: w.spender,
      at: this.t,
      process: w.process,
      waitedMs: this.t - w.firstAt,
    });
    this.log(`ACK ${w.spender}${w.output} to process ${w.process} (view ${answers.map((a) => a ?? '-').join(' ')})`);
  }

  private clients(): void {
    this.sc.processes.forEach((spec, p) => {
      const st = this.procs[p];
      if (!st.started && this.t >= spec.startAt) this.startProcess(p);
      if (st.started && this.t < spec.stopAt && (this.t - spec.startAt) % TEND_MS === 0 && this.t > spec.startAt)
        this.tend(p);
    });
    for (const w of this.workers) {
      const spec = this.sc.processes[w.process];
      if (w.done || !this.procs[w.process].started) continue;
      if (w.viewAt !== undefined) {
        if (this.t >= w.viewAt) this.acknowledge(w);
        continue;
      }
      if (this.t < w.nextAt || this.t >= spec.stopAt) continue;
      this.attempt(w);
    }
  }

  // ---- the run ----

  step(): void {
    this.links();
    for (const f of this.sc.faults) if (f.kind === 'kill' && f.at === this.t) this.kill(f.node, 'nemesis');
    this.lifecycle();
    this.heartbeats();
    this.clustering();
    this.watchdogs();
    this.clients();
    this.t += TICK_MS;
  }

  private converged(): boolean {
    const k = this.nodes[0].view?.key;
    return k !== undefined && this.nodes.every((n, i) => this.running(i) && n.view?.key === k);
  }

  run(): Outcome {
    while (this.t < this.sc.endAt) this.step();
    const settleUntil = this.t + SETTLE_MS;
    while (this.t < settleUntil && !this.converged()) this.step();
    const converged = this.converged();
    // converged: every copy was merged into the one cluster; otherwise what every node holds, merged
    const final = mergeCopies(this.nodes.map((n) => n.copy));
    const doubleAcked: number[] = [];
    for (let o = 0; o < OUTPUTS; o++)
      if (new Set(this.acks.filter((a) => a.output === o).map((a) => a.spender)).size > 1) doubleAcked.push(o);
    const lost = this.acks.filter((a) => final?.spenders[a.output] !== a.spender);
    if (this.tracing)
      this.log(`end: ${converged ? 'converged' : 'NOT converged'}, final ${final ? this.show(final) : 'NO COPY'}`);
    const unfinished = this.workers.filter((w) => !w.done).length;
    return {
      acks: this.acks,
      final,
      converged,
      doubleAcked,
      lost,
      createLost: final === null,
      unfinished,
      trace: this.trace,
    };
  }
}

type Answer = 'ok' | 'inDoubt' | 'spent' | 'error';

/** Runs a scenario under a rule set. */
export function simulate(sc: Scenario, rules: Rules, tracing = false): Outcome {
  return new ClusterModel(sc, rules, tracing).run();
}

/** Safe: no acknowledged spend lost, no output acknowledged to two spenders, the record not lost. */
export function safe(o: Outcome): boolean {
  return o.doubleAcked.length === 0 && o.lost.length === 0 && !o.createLost;
}

/** One line per violation, for a counterexample's report. */
export function violations(o: Outcome): string[] {
  const v: string[] = [];
  for (const out of o.doubleAcked)
    v.push(
      `output ${out} acknowledged to ${[...new Set(o.acks.filter((a) => a.output === out).map((a) => a.spender))].join(' and ')}`,
    );
  for (const a of o.lost) v.push(`acknowledged spend ${a.spender}${a.output} (at ${a.at} ms) not in the final record`);
  if (o.createLost) v.push('the record (an acknowledged create) has no copy left');
  return v;
}
