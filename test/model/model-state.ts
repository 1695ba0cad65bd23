/**
 * The state of the model: the nodes, the store processes and their spends, and the network in discrete time
 * (TICK_MS). Pure: no network, no clock, no randomness except the scenario's seed. One record with a few outputs.
 * Not modelled: one-sided cuts.
 */
import { type WatchdogState, type WipeMark } from '../../cdk/node-watchdog';
import { type Copy, type Map_ } from './record';
import { HEARTBEAT_TIMEOUT_MS, NODES, OUTPUTS, type Fault, type Rules, type Scenario } from './scenario';

/** down: killed, systemd restarts it after RESTART_MS; checkStart: ExecStartPre; starting: asd loading its data */
type Proc = 'running' | 'down' | 'checkStart' | 'starting';

export interface NodeState {
  proc: Proc;
  restartAt: number;
  runningAt: number;
  checkSince: number;
  nextCheckAt: number;
  /** check-start (unstable mark): since when every other node has been reachable and in no cluster */
  quietSince: number | null;
  view: Map_ | null;
  orphan: { map: Map_; since: number } | null;
  /** left out of a re-formed cluster, it notices (turns orphan) at this time: until then it answers its old key */
  leaveAt: number | null;
  copy: Copy | null;
  /** the copy as last flushed to the device (what a SIGKILL leaves: CE acknowledges from the write buffer) */
  flushed: Copy | null;
  wd: WatchdogState;
  mark: WipeMark | undefined;
}

export interface ProcessState {
  started: boolean;
  known: Set<number>;
  map: Map_ | null;
  tends: number;
  lastKey: number | undefined;
  firstSeen: Map<number, number>;
}

export interface Worker {
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

export const nodeName = (i: number) => `n${i + 1}`;

/** The nodes, the processes and the network: links, heartbeats, and what every part of the model reads. */
export class ModelState {
  t = 0;
  protected keys = 0;
  protected readonly nodes: NodeState[] = [];
  protected readonly procs: ProcessState[] = [];
  protected readonly workers: Worker[] = [];
  protected readonly rand: () => number;
  readonly acks: Ack[] = [];
  readonly trace: string[] = [];
  /** per pair of nodes: since when both run with the heartbeat port up, or when that last stopped */
  protected readonly pairUpSince: (number | null)[][];
  protected readonly pairDownAt: number[][];
  protected hb: boolean[][] = [];
  protected fabric: boolean[][] = [];
  /** per AZ of clients, per node */
  protected clientReach: boolean[][] = [];

  constructor(
    readonly sc: Scenario,
    readonly rules: Rules,
    protected readonly tracing = false,
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
        quietSince: null,
        view: initial,
        orphan: null,
        leaveAt: null,
        // the record was created (and acknowledged) in the first cluster, unspent
        copy: replicas.includes(i) ? { gen: 1, lut: 0, spenders: new Array<string | null>(OUTPUTS).fill(null) } : null,
        flushed: null,
        wd: { answered: true, lastAnswerAt: 0 },
        mark: undefined,
      });
      const n = this.nodes[i];
      n.flushed = n.copy && { ...n.copy, spenders: [...n.copy.spenders] };
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

  protected log(msg: string): void {
    if (this.tracing) this.trace.push(`${(this.t / 1000).toFixed(2)}s ${msg}`);
  }

  // ---- the network ----

  protected active(f: Fault): boolean {
    return f.kind !== 'kill' && this.t >= f.from && this.t < f.to;
  }

  /** The links in force now (a full cut is every port; the watchdog's and check-start's questions go with it). */
  protected links(): void {
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

  protected running(i: number): boolean {
    return this.nodes[i].proc === 'running';
  }

  /** i has heard j within the heartbeat timeout */
  protected alive(i: number, j: number): boolean {
    return this.pairUpSince[i][j] !== null || this.t - this.pairDownAt[i][j] < HEARTBEAT_TIMEOUT_MS;
  }

  protected heartbeats(): void {
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

  /** The record's replicas in a map: the first RF members of its succession list; the master first. */
  protected replicasOf(map: Map_): number[] {
    return this.sc.succession.filter((n) => map.members.includes(n)).slice(0, this.sc.rf);
  }

  protected show(c: Copy): string {
    return `{gen ${c.gen}, lut ${c.lut}, ${c.spenders.map((s) => s ?? '-').join('')}}`;
  }
}
