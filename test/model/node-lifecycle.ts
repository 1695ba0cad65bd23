/**
 * Nodes: kills, systemd's restarts, check-start (ExecStartPre) and the watchdog (cdk/node-watchdog.ts).
 * Modelling choice: asd answers nothing while it loads its data (startupMs).
 * Not modelled: the write buffers lost by a SIGKILL (CE has no commit-to-device: decision 0007's durability
 * residual), paused nodes (the watchdog's silent kill and mark).
 */
import { INITIAL_WATCHDOG_STATE, WATCHDOG, majorityKey, watchdogStep } from '../../cdk/node-watchdog';
import { Clustering } from './clustering';
import { nodeName } from './model-state';
import { MIN_CLUSTER_SIZE, NODES, RESTART_MS } from './scenario';

export class NodeLifecycle extends Clustering {
  protected kill(i: number, why: string): void {
    const n = this.nodes[i];
    if (n.proc !== 'running' && n.proc !== 'starting') return;
    n.proc = 'down';
    n.restartAt = this.t + RESTART_MS;
    n.view = null;
    n.orphan = null;
    n.leaveAt = null;
    this.log(`${nodeName(i)} SIGKILL (${why}), mark ${n.mark ?? 'none'}`);
  }

  protected start(i: number, wipe: boolean, why: string): void {
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
    if (mark === 'unstable' && others.every((j) => this.hb[i][j] && !this.running(j)))
      return this.start(i, false, 'unstable mark, every other node reachable and not running');
    n.nextCheckAt = this.t + WATCHDOG.peerRetryMs;
  }

  protected lifecycle(): void {
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
  protected watchdogs(): void {
    for (let i = 0; i < NODES; i++) {
      if (!this.running(i) || (this.t - this.sc.wdPhase[i]) % WATCHDOG.pollMs !== 0) continue;
      const n = this.nodes[i];
      const step = watchdogStep(n.wd, n.view ? 'member' : 'unstable', this.t);
      n.wd = step.state;
      n.mark = step.state.wipeOnStart;
      if (step.kill) this.kill(i, `watchdog: ${step.kill}`);
    }
  }
}
