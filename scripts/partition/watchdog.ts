/**
 * The node watchdog of decision 0007 (cdk/node-watchdog.ts watchdogStep) run by the harness against each node, and
 * the supervisor that systemd is on a cluster node: a node the watchdog killed is started again after RESTART_MS,
 * empty (its mark was set). Nodes stopped by a nemesis are not restarted by it.
 */
import {
  INITIAL_WATCHDOG_STATE,
  WATCHDOG,
  watchdogStep,
  type Observation,
  type WatchdogState,
} from '../../cdk/node-watchdog';
import { infoCommand, SERVICE_PORT, sleep, type Cluster } from './cluster';

/** systemd's RestartSec for asd after the watchdog killed it */
export const RESTART_MS = 1000;

export class HarnessWatchdog {
  private readonly states = new Map<number, WatchdogState>();
  private readonly killedByWatchdog = new Set<number>();
  private stopped = false;
  private loops: Promise<void>[] = [];
  /** every kill, for the report */
  readonly kills: { node: number; at: string; reason: string }[] = [];

  constructor(
    private readonly cluster: Cluster,
    private readonly log: (line: string) => void,
  ) {
    cluster.onExit = (index) => {
      if (!this.killedByWatchdog.delete(index) || this.stopped) return;
      setTimeout(() => {
        if (this.stopped || cluster.running(index)) return;
        this.log(`[watchdog] n${index}: started again, empty`);
        this.startNode(index);
      }, RESTART_MS);
    };
  }

  /** Starts a node as its unit would: wiped when its mark is set (or `wipe`: a new instance's empty devices). */
  startNode(index: number, wipe = false): void {
    this.cluster.start(index, false, wipe || this.wipeOnStart(index));
    this.states.set(index, INITIAL_WATCHDOG_STATE);
  }

  wipeOnStart(index: number): boolean {
    return this.states.get(index)?.wipeOnStart ?? false;
  }

  start(): void {
    this.loops = this.cluster.nodes.map((n) => this.loop(n.index));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async observe(index: number): Promise<Observation> {
    try {
      const answer = await infoCommand(
        this.cluster.node(index).address,
        SERVICE_PORT,
        'cluster-stable:ignore-migrations=true',
        WATCHDOG.infoTimeoutMs,
      );
      return answer === '' || answer.startsWith('ERROR') ? 'unstable' : 'member';
    } catch {
      return 'silent';
    }
  }

  private async loop(index: number): Promise<void> {
    while (!this.stopped) {
      const pid = this.cluster.pid(index);
      if (pid !== undefined && !this.cluster.stopping(index)) {
        const sentAt = Date.now();
        const observation = await this.observe(index);
        // an observation of a process that exited or is being stopped meanwhile is dropped
        if (this.cluster.pid(index) === pid && !this.cluster.stopping(index) && !this.stopped) {
          const step = watchdogStep(
            this.states.get(index) ?? INITIAL_WATCHDOG_STATE,
            observation,
            Date.now(),
            WATCHDOG,
            sentAt,
          );
          this.states.set(index, step.state);
          if (step.kill) {
            this.log(`[watchdog] n${index}: ${step.kill}: SIGKILL (it starts empty)`);
            this.kills.push({ node: index, at: new Date().toISOString().slice(11, 23), reason: step.kill });
            this.killedByWatchdog.add(index);
            this.states.set(index, { wipeOnStart: true, answered: false });
            this.killedByWatchdog.add(index);
            await this.cluster.kill(index, 'SIGKILL');
          }
        }
      }
      await sleep(WATCHDOG.pollMs);
    }
  }
}
