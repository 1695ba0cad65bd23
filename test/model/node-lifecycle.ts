/**
 * Nodes: kills, systemd's restarts, check-start (ExecStartPre) and the watchdog (cdk/node-watchdog.ts).
 * Modelling choices: asd answers nothing while it loads its data (startupMs), its host refusing the connection; each
 * node flushes its write buffer every FLUSH_MS (at a phase of its own) and a SIGKILL leaves the last flushed copy (CE
 * acknowledges from the write buffer: no commit-to-device).
 * Not modelled: paused nodes (the watchdog's silent kill and mark).
 */
import {
  INITIAL_WATCHDOG_STATE,
  PEER_DOWN,
  WATCHDOG,
  majorityKey,
  restartSpell,
  unstableKillAllowed,
  watchdogStep,
} from '../../cdk/node-watchdog';
import { Clustering } from './clustering';
import { nodeName } from './model-state';
import { cloneCopy } from './record';
import { FLUSH_MS, MIN_CLUSTER_SIZE, NODES, RESTART_MS, TICK_MS } from './scenario';

export class NodeLifecycle extends Clustering {
  protected kill(i: number, why: string, downMs = RESTART_MS): void {
    const n = this.nodes[i];
    if (n.proc !== 'running' && n.proc !== 'starting') return;
    n.proc = 'down';
    n.restartAt = this.t + downMs;
    // the write buffer dies with the process: what was not flushed is gone
    n.copy = n.flushed && cloneCopy(n.flushed);
    n.view = null;
    n.orphan = null;
    n.leaveAt = null;
    this.log(`${nodeName(i)} SIGKILL (${why}), mark ${n.mark ?? 'none'}`);
  }

  protected start(i: number, wipe: boolean, why: string): void {
    const n = this.nodes[i];
    n.proc = 'starting';
    n.runningAt = this.t + this.sc.startupMs;
    if (wipe) n.copy = n.flushed = null;
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
   * node has been reachable and in no cluster (its asd not running, or answering ERROR) for PEER_WAIT_MS.
   */
  protected checkStart(i: number): void {
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
    if (
      mark === 'unstable' &&
      others.every((j) => this.hb[i][j] && this.clusterStable(j) !== `K${this.nodes[j].view?.key}`)
    ) {
      n.quietSince ??= this.t;
      if (this.t - n.quietSince >= WATCHDOG.peerWaitMs)
        return this.start(i, false, 'unstable mark, every other node reachable and in no cluster');
    } else n.quietSince = null;
    n.nextCheckAt = this.t + WATCHDOG.peerRetryMs;
  }

  protected lifecycle(): void {
    for (let i = 0; i < NODES; i++) {
      const n = this.nodes[i];
      // the write buffer flushed, each node at a phase of its own
      if (n.proc !== 'down' && this.t % FLUSH_MS === Math.floor((i * FLUSH_MS) / NODES / TICK_MS) * TICK_MS)
        n.flushed = n.copy && cloneCopy(n.copy);
      if (n.proc === 'down' && this.t >= n.restartAt) {
        n.proc = 'checkStart';
        n.checkSince = this.t;
        n.nextCheckAt = this.t;
        n.quietSince = null;
      }
      if (n.proc === 'checkStart') this.checkStart(i);
      if (n.proc === 'starting' && this.t >= n.runningAt) n.proc = 'running';
    }
  }

  /** Every POLL_MS per node: cdk/node-watchdog.ts watchdogStep on the node's answer; the mark is persisted. */
  protected watchdogs(): void {
    for (let i = 0; i < NODES; i++) {
      if (!this.running(i) || (this.t - this.sc.wdPhase[i]) % WATCHDOG.pollMs !== 0) continue;
      const n = this.nodes[i];
      const step = watchdogStep(n.wd, n.view ? 'member' : 'unstable', this.t);
      n.wd = step.state;
      n.mark = step.state.wipeOnStart;
      if (step.kill && this.rules.w2) {
        // W2: the others' answers as the node's watchdog probes them: refused (reachable, not running), or may serve
        const answers = [0, 1, 2]
          .filter((j) => j !== i)
          .map((j) => (!this.hb[i][j] ? undefined : this.running(j) ? this.clusterStable(j) : PEER_DOWN));
        const { kill, mayServe } = unstableKillAllowed(answers, MIN_CLUSTER_SIZE);
        if (!kill) {
          n.wd = restartSpell(step.state, this.t);
          this.log(`${nodeName(i)} unstable, only ${mayServe} other node(s) may serve: not killed, counting again`);
          continue;
        }
      }
      if (step.kill) this.kill(i, `watchdog: ${step.kill}`);
    }
  }
}
