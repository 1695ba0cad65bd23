/**
 * The nemeses of `npm run partition` (docs/reliability.md): what each does at the fault and at the heal.
 *
 *   cut-off          node 1 cut off from nodes 2 and 3 (clients reach all three); heal: routes removed
 *   split            node 3 (the principal) alone | 1, 2; heal: routes removed
 *   pause            SIGSTOP node 1; heal: SIGCONT (its watchdog kills it after 2 s: it is started again, empty)
 *   kill             SIGKILL node 1; heal: started again with its data (file-backed storage)
 *   kill-wipe        SIGKILL node 1; heal: started again empty (an instance-store node after a stop/start)
 *   kill-no-restart  SIGKILL node 1, not started again during the workload; after it: a replacement, empty
 *   clean-restart    SIGTERM node 1 and, once it exited, started again with its data
 *   rolling-restart  nodes 1, 2, 3 in turn, as the runbook's upgrade does it: SIGTERM, start with its data, wait
 *                    until every node answers `cluster-stable:size=3;ignore-migrations=false` with the same key
 *                    (rejoined, migrations done), next node; the fault lasts as long as that takes. A node not
 *                    settled within ROLLING_NODE_BUDGET_MS fails the run (RollingRestartError): never the next node
 *                    with migrations pending. The workload must outlast it (--fault-ms): run.ts checks.
 *   isolate-all      every node cut from every other (clients reach all three); heal: routes removed. Every node is
 *                    an orphan, killed by its watchdog after 10 s; no start may wipe (no majority serves)
 *   new-client       node 2 (not the first seed) cut off from nodes 1 and 3; the clients that started before the
 *                    fault send the first spender of every output and retry it, client processes started 5 s into
 *                    the cut (after the majority re-formed: they discover only nodes 1 and 3) send the rivals
 *                    (run.ts: lateClients); heal: routes removed (decision 0009)
 *   flapping-cut     node 1 cut off for 8 s and healed for 2 s, five times (48 s of sleeps, and its cuts and heals take seconds more under load: --fault-ms 90000)
 *   instance-pause   SIGSTOP node 1 and its watchdog (the whole instance); heal: both resumed
 *   two-kill         SIGKILL nodes 1 and 2 at once; heal: both started again with their data
 *   fabric-cut       the fabric port (3001) cut between node 1 and nodes 2, 3, heartbeats intact (the cluster never
 *                    changes; replica writes wait); heal: the cut removed, then 5 s later node 1 (a master) killed
 *                    and started again with its data (nftables)
 *   clock-skew       node 3 runs with its clock 10 s ahead (libfaketime, the whole run: run it alone); the fault: the
 *                    fabric port cut between node 3 and the others, node 3 killed 1.5 s later, the cut removed; heal: started
 *                    again with its data (an in-doubt write with a later update time competes on equal generations)
 *   az-isolation     node 1 and the clients of its zone (az1) cut off from nodes 2, 3 and the other zone's clients
 *                    (az2); the first spender of every output from az1, the rival from az2; heal: routes removed
 */
import { sleep, type Cluster } from './cluster';
import type { HarnessWatchdog } from './watchdog';

export const NEMESES = [
  'cut-off',
  'split',
  'pause',
  'kill',
  'kill-wipe',
  'kill-no-restart',
  'clean-restart',
  'rolling-restart',
  'isolate-all',
  'new-client',
  'flapping-cut',
  'instance-pause',
  'two-kill',
  'az-isolation',
  'fabric-cut',
  'clock-skew',
] as const;

/** the clock-skew nemesis's node and offset */
export const SKEW = { node: 3, offset: '+10s' } as const;

/** flapping-cut's cycles: cut, then healed */
export const FLAPPING = { cycles: 5, cutMs: 8000, healMs: 2000 } as const;

/**
 * A nemesis whose fault has a length of its own needs a workload at least that long (--fault-ms), or the run ends
 * WORKLOAD TOO SHORT after minutes: refused before anything starts, naming the length. flapping-cut's cycles are
 * known; a rolling restart lasts as long as its migrations, checked when it ends.
 */
export function faultTooShort(nemeses: readonly Nemesis[], faultMs: number): string | undefined {
  const flappingMs = FLAPPING.cycles * FLAPPING.cutMs + (FLAPPING.cycles - 1) * FLAPPING.healMs;
  if (nemeses.includes('flapping-cut') && faultMs < flappingMs)
    return `--fault-ms: flapping-cut's cuts and heals last ${flappingMs} ms, more than ${faultMs}: the workload must cover them (--fault-ms 90000: under load its cut and heal steps add seconds each)`;
  return undefined;
}
export type Nemesis = (typeof NEMESES)[number];

/**
 * How long a rolling restart waits for one node to rejoin and its migrations to finish before it gives up and fails
 * the run (the runbook's apply-config waits 2 hours; 1,000,000 filler records migrate in minutes here).
 */
export const ROLLING_NODE_BUDGET_MS = 1_200_000;

/** A rolling restart whose node did not rejoin, or whose migrations did not finish, within the budget. */
export class RollingRestartError extends Error {
  readonly code = 'ROLLING_RESTART_NOT_SETTLED';
}

export interface NemesisContext {
  cluster: Cluster;
  watchdog: HarnessWatchdog;
  faultMs: number;
  log: (line: string) => void;
}

/** The victim of a nemesis (the first of a rolling restart). */
export const victimOf = (n: Nemesis): number => (n === 'split' || n === 'clock-skew' ? 3 : n === 'new-client' ? 2 : 1);

/**
 * The nemeses whose first spenders and rivals come from two groups of clients (the early half, the late half):
 * `startMs`, `dueFromMs`: the late half starts, and its spends fall due, that long after the fault (the first
 * spender's before and at the fault); `zones`: the halves run in the client zones az1 and az2 and send throughout.
 */
export const CLIENT_GROUPS: Partial<Record<Nemesis, { startMs: number; dueFromMs: number } | { zones: true }>> = {
  'new-client': { startMs: 5000, dueFromMs: 6500 },
  'az-isolation': { zones: true },
};

async function stopAndStart(c: NemesisContext, index: number): Promise<void> {
  await c.cluster.kill(index, 'SIGTERM');
  await c.watchdog.startNode(index);
}

/** Waits until every node answers cluster-stable for 3 nodes (migrations too, unless `ignoreMigrations`). */
async function waitWhole(c: NemesisContext, ignoreMigrations: boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const keys = await Promise.all(
      c.cluster.nodes.map((n) =>
        c.cluster.info(n.index, `cluster-stable:size=3;ignore-migrations=${ignoreMigrations}`).catch(() => 'ERROR'),
      ),
    );
    if (keys.every((k) => !k.startsWith('ERROR') && k === keys[0])) return Date.now() - started;
    await sleep(250);
  }
  return -1;
}

export async function applyFault(c: NemesisContext, nemesis: Nemesis): Promise<void | RollingStep[]> {
  const v = victimOf(nemesis);
  switch (nemesis) {
    case 'cut-off':
      return c.cluster.partition([1], [2, 3]);
    case 'new-client':
      return c.cluster.partition([2], [1, 3]);
    case 'az-isolation':
      return c.cluster.isolateZone(1);
    case 'fabric-cut':
      return c.cluster.cutFabric([1], [2, 3]);
    case 'clock-skew':
      c.cluster.cutFabric(
        [v],
        [1, 2, 3].filter((i) => i !== v),
      );
      // killed while its replica writes are still held back: its in-doubt writes stay on its own copy
      await sleep(1500);
      await c.cluster.kill(v, 'SIGKILL');
      return c.cluster.heal();
    case 'isolate-all':
      c.cluster.partition([1], [2, 3]);
      return c.cluster.partition([2], [3]);
    case 'flapping-cut':
      for (let i = 0; i < FLAPPING.cycles; i++) {
        c.cluster.partition([1], [2, 3]);
        await sleep(FLAPPING.cutMs);
        c.cluster.heal();
        if (i < FLAPPING.cycles - 1) await sleep(FLAPPING.healMs);
      }
      return;
    case 'instance-pause':
      c.watchdog.freeze(v);
      return c.cluster.pause(v);
    case 'two-kill':
      await Promise.all([c.cluster.kill(1, 'SIGKILL'), c.cluster.kill(2, 'SIGKILL')]);
      return;
    case 'split':
      return c.cluster.partition([3], [1, 2]);
    case 'pause':
      return c.cluster.pause(v);
    case 'kill':
    case 'kill-wipe':
    case 'kill-no-restart':
      return c.cluster.kill(v, 'SIGKILL');
    case 'clean-restart':
      return stopAndStart(c, v);
    case 'rolling-restart':
      return rollingRestart(c, ROLLING_NODE_BUDGET_MS);
  }
}

/** Per node, ms from its stop: rejoined (every node the same key, size 3) and settled (migrations done too). */
export interface RollingStep {
  node: number;
  rejoinedMs: number;
  settledMs: number;
}

/** The rolling restart of the runbook's upgrade; throws RollingRestartError when a node does not settle in time. */
export async function rollingRestart(c: NemesisContext, budgetMs: number): Promise<RollingStep[]> {
  const steps: RollingStep[] = [];
  for (const n of [1, 2, 3]) {
    const t = Date.now();
    await stopAndStart(c, n);
    const rejoined = await waitWhole(c, true, budgetMs);
    if (rejoined < 0)
      throw new RollingRestartError(`rolling restart: node ${n} did not rejoin within ${budgetMs} ms of its stop`);
    const rejoinedMs = Date.now() - t;
    const settled = await waitWhole(c, false, Math.max(0, budgetMs - rejoinedMs));
    if (settled < 0)
      throw new RollingRestartError(
        `rolling restart: node ${n} rejoined after ${rejoinedMs} ms, but migrations were not done within ${budgetMs} ms of its stop`,
      );
    steps.push({ node: n, rejoinedMs, settledMs: Date.now() - t });
    c.log(
      `rolling restart: node ${n} rejoined after ${rejoinedMs} ms, migrations done ${Date.now() - t} ms after its stop`,
    );
  }
  return steps;
}

export async function healFault(c: NemesisContext, nemesis: Nemesis): Promise<void> {
  const v = victimOf(nemesis);
  switch (nemesis) {
    case 'cut-off':
    case 'split':
    case 'new-client':
    case 'isolate-all':
    case 'az-isolation':
      return c.cluster.heal();
    case 'pause':
      return c.cluster.resume(v);
    case 'instance-pause':
      c.cluster.resume(v);
      return c.watchdog.thaw(v);
    case 'fabric-cut':
      // replica writes queued during the cut and never delivered are lost with the master's crash
      c.cluster.heal();
      await sleep(5000);
      await c.cluster.kill(v, 'SIGKILL');
      await c.watchdog.startNode(v);
      return;
    case 'two-kill':
      await Promise.all([1, 2].filter((i) => !c.cluster.running(i)).map((i) => c.watchdog.startNode(i)));
      return;
    case 'kill':
    case 'clock-skew':
      if (!c.cluster.running(v)) await c.watchdog.startNode(v);
      return;
    case 'kill-wipe':
      if (!c.cluster.running(v)) await c.watchdog.startNode(v, true);
      return;
    default:
      return;
  }
}

/** After the workload: what a nemesis left down comes back (kill-no-restart: a replacement node, empty). */
export async function afterWorkload(c: NemesisContext, nemesis: Nemesis): Promise<void> {
  const v = victimOf(nemesis);
  if (nemesis === 'kill-no-restart' && !c.cluster.running(v)) await c.watchdog.startNode(v, true);
  // together: a node's start may wait for the others (a silent-marked start asks them for a majority)
  await Promise.all(
    c.cluster.nodes.filter((n) => !c.cluster.running(n.index)).map((n) => c.watchdog.startNode(n.index)),
  );
}
