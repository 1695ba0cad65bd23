/**
 * The node watchdog of decision 0007 (cdk/node-watchdog.ts watchdogStep) run by the harness against each node, and
 * the supervisor that systemd is on a cluster node: a node the watchdog killed is started again after RESTART_MS,
 * through the start rule of check-start (startDecision, decision 0009): empty when it has a mark and a majority
 * (min-cluster-size) of the other nodes serves without it; with its data when silent-marked and no majority serves
 * within the wait, or unstable-marked and every other node is reachable and in no cluster; else it waits. A silent node is killed only while
 * min-cluster-size of the other nodes answer (silentKillAllowed; a whole-cluster stall is not killed, nor its first
 * round after the others resume: the node is asked once more); an unstable node only while min-cluster-size of the
 * others may serve without it (unstableKillAllowed: they answer a cluster key, or nothing). Nodes stopped by a
 * nemesis are not restarted by it.
 */
import {
  INITIAL_WATCHDOG_STATE,
  PEER_DOWN,
  restartSpell,
  silentKillAllowed,
  startDecision,
  unstableKillAllowed,
  WATCHDOG,
  watchdogStep,
  type Observation,
  type WatchdogLimits,
  type WatchdogState,
  type WipeMark,
} from '../../cdk/node-watchdog';
import { infoCommand, SERVICE_PORT, sleep, type Cluster } from './cluster';

/** systemd's RestartSec for asd after the watchdog killed it */
export const RESTART_MS = 1000;

export class HarnessWatchdog {
  private readonly states = new Map<number, WatchdogState>();
  private readonly killedByWatchdog = new Set<number>();
  private readonly starting = new Map<number, Promise<void>>();
  /** nodes whose silent kill is held (a whole-cluster stall), said once per spell */
  private readonly held = new Set<number>();
  private stopped = false;
  /** nodes whose watchdog is paused with their asd (the instance-pause nemesis): not observed until thawed */
  private readonly frozen = new Set<number>();
  private loops: Promise<void>[] = [];
  /** every kill, for the report */
  readonly kills: { node: number; at: string; reason: string }[] = [];

  /**
   * `minClusterSize`: the deployment's (a majority); `peerWait`: how long a silent-marked start waits for a majority
   * without the node (tests shorten it); `info`: the info request (tests answer for the nodes); `limits`: the silent
   * and unstable limits (the deployment's; tests shorten the unstable one)
   */
  constructor(
    private readonly cluster: Cluster,
    private readonly log: (line: string) => void,
    private readonly minClusterSize: number,
    private readonly peerWait: { waitMs: number; retryMs: number } = {
      waitMs: WATCHDOG.peerWaitMs,
      retryMs: WATCHDOG.peerRetryMs,
    },
    private readonly info: typeof infoCommand = infoCommand,
    private readonly limits: WatchdogLimits = WATCHDOG,
  ) {
    cluster.onExit = (index) => {
      if (!this.killedByWatchdog.delete(index) || this.stopped) return;
      setTimeout(() => {
        if (this.stopped || cluster.running(index)) return;
        void this.startNode(index).catch((err: unknown) => this.log(`[watchdog] n${index}: start failed: ${err}`));
      }, RESTART_MS);
    };
  }

  /**
   * Starts a node as its unit would: through check-start's rule with its mark (startDecision: the other nodes asked
   * when it is silent), or wiped (`wipe`: a new instance's empty devices).
   */
  startNode(index: number, wipe = false): Promise<void> {
    // one start at a time per node (a nemesis may start a node the watchdog's restart is still deciding about)
    const pending = this.starting.get(index);
    if (pending) return pending;
    const start = this.decideAndStart(index, wipe).finally(() => this.starting.delete(index));
    this.starting.set(index, start);
    return start;
  }

  private async decideAndStart(index: number, wipe: boolean): Promise<void> {
    const mark = this.wipeOnStart(index);
    let empty = wipe;
    if (!wipe && mark !== undefined) {
      const decision = await startDecision(mark, () => this.askOthersForStart(index), this.minClusterSize, {
        ...this.peerWait,
        aborted: () => this.stopped,
      });
      empty = decision.wipe;
      this.log(
        `[watchdog] n${index}: started again, ${empty ? 'empty' : 'WITH ITS DATA'} (mark ${mark}: ${decision.why})`,
      );
    }
    if (this.cluster.running(index) || (this.stopped && !wipe && mark !== undefined)) return;
    this.cluster.start(index, false, empty);
    this.states.set(index, INITIAL_WATCHDOG_STATE);
  }

  /** the node's wipe-on-start mark (undefined: none; its next start keeps the data) */
  wipeOnStart(index: number): WipeMark | undefined {
    return this.states.get(index)?.wipeOnStart;
  }

  /** The node's watchdog paused with it (a whole instance paused): it observes nothing until thaw(). */
  freeze(index: number): void {
    this.frozen.add(index);
  }

  thaw(index: number): void {
    this.frozen.delete(index);
  }

  start(): void {
    this.loops = this.cluster.nodes.map((n) => this.loop(n.index));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async observe(index: number): Promise<Observation> {
    const answer = await this.ask(this.cluster.node(index).address, WATCHDOG.infoTimeoutMs);
    if (answer === undefined) return 'silent';
    return answer === '' || answer.startsWith('ERROR') ? 'unstable' : 'member';
  }

  /** a node's answer to `cluster-stable:ignore-migrations=true` within `timeoutMs`; undefined when it gave none */
  private ask(address: string, timeoutMs: number): Promise<string | undefined> {
    return this.info(address, SERVICE_PORT, 'cluster-stable:ignore-migrations=true', timeoutMs)
      .then((a) => a.trim())
      .catch(() => undefined);
  }

  /** the answers of every node but `index`, asked at once */
  private askOthers(index: number, timeoutMs: number): Promise<(string | undefined)[]> {
    return Promise.all(this.cluster.nodes.filter((n) => n.index !== index).map((n) => this.ask(n.address, timeoutMs)));
  }

  /**
   * check-start's question to the other nodes, as the node itself would ask it (the harness runs in the root
   * namespace, which a partition does not cut: a peer behind a cut from this node gives no answer): an answer,
   * PEER_DOWN (the connection refused: asd not running), or none
   */
  private askOthersForStart(
    index: number,
    timeoutMs: number = WATCHDOG.peerInfoTimeoutMs,
  ): Promise<(string | undefined)[]> {
    return Promise.all(
      this.cluster.nodes
        .filter((n) => n.index !== index)
        .map((n) =>
          !this.cluster.reaches(index, n.address)
            ? Promise.resolve(undefined)
            : this.info(n.address, SERVICE_PORT, 'cluster-stable:ignore-migrations=true', timeoutMs).then(
                (a) => a.trim(),
                (err: unknown) => ((err as { code?: string } | null)?.code === 'ECONNREFUSED' ? PEER_DOWN : undefined),
              ),
        ),
    );
  }

  /**
   * whether at least min-cluster-size of the other nodes answer at all while the node itself still does not (asked at
   * the same time); else not killed (a whole-cluster stall: logged once)
   */
  private async majorityWithout(index: number, silence: string): Promise<boolean> {
    const [own, answers] = await Promise.all([
      this.ask(this.cluster.node(index).address, WATCHDOG.peerAnswerTimeoutMs),
      this.askOthers(index, WATCHDOG.peerAnswerTimeoutMs),
    ]);
    const held = this.held.has(index);
    const { kill, answering, resumed, peersBack } = silentKillAllowed(answers, this.minClusterSize, own, held);
    if (peersBack) {
      // the first round after a whole-cluster stall kills nothing (it may have begun during it): asked once more
      this.held.delete(index);
      this.log(
        `[watchdog] n${index}: asd ${silence}; ${answering} of the other nodes answer again after a whole-cluster ` +
          'stall: asked once more before a kill',
      );
    } else if (!kill && !resumed && !held) {
      this.held.add(index);
      this.log(
        `[watchdog] n${index}: asd ${silence} but only ${answering} of the other nodes answer ` +
          `(min-cluster-size ${this.minClusterSize}): a whole-cluster stall, not killed; checking again`,
      );
    }
    return kill;
  }

  /**
   * whether at least min-cluster-size of the other nodes may serve without an unstable node (they answer a cluster
   * key, or nothing: unstableKillAllowed); else not killed, its spell counted again from now
   */
  private async othersMayServe(index: number, spell: string, state: WatchdogState): Promise<boolean> {
    const answers = await this.askOthersForStart(index, WATCHDOG.peerAnswerTimeoutMs);
    const { kill, mayServe } = unstableKillAllowed(answers, this.minClusterSize);
    if (!kill) {
      this.states.set(index, restartSpell(state, Date.now()));
      this.log(
        `[watchdog] n${index}: asd ${spell} but only ${mayServe} of the other nodes may serve (the others refuse ` +
          `the connection or are in no cluster; min-cluster-size ${this.minClusterSize}): not killed, counting again`,
      );
    }
    return kill;
  }

  private async loop(index: number): Promise<void> {
    while (!this.stopped) {
      const pid = this.cluster.pid(index);
      if (pid !== undefined && !this.cluster.stopping(index) && !this.frozen.has(index)) {
        const sentAt = Date.now();
        const observation = await this.observe(index);
        // an observation of a process that exited or is being stopped meanwhile is dropped
        if (this.cluster.pid(index) === pid && !this.cluster.stopping(index) && !this.stopped) {
          const step = watchdogStep(
            this.states.get(index) ?? INITIAL_WATCHDOG_STATE,
            observation,
            Date.now(),
            this.limits,
            sentAt,
          );
          this.states.set(index, step.state);
          if (observation !== 'silent') this.held.delete(index);
          // a silent node is killed only while a majority could re-form without it (silentKillAllowed); else held,
          // its silence still running (asked again at the next poll)
          const kill =
            step.kill !== undefined &&
            (observation === 'silent'
              ? await this.majorityWithout(index, step.kill)
              : await this.othersMayServe(index, step.kill, step.state)) &&
            this.cluster.pid(index) === pid &&
            !this.stopped;
          if (step.kill && kill) {
            this.held.delete(index);
            const mark = step.state.wipeOnStart;
            this.log(
              `[watchdog] n${index}: ${step.kill}: SIGKILL (mark ${mark}: its start decides whether it is wiped)`,
            );
            this.kills.push({ node: index, at: new Date().toISOString().slice(11, 23), reason: step.kill });
            this.states.set(index, { wipeOnStart: mark, answered: false });
            this.killedByWatchdog.add(index);
            await this.cluster.kill(index, 'SIGKILL');
          }
        }
      }
      await sleep(WATCHDOG.pollMs);
    }
  }
}
