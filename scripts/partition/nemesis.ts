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
 *                    until it rejoined and migrations are done (at most ROLLING_NODE_BUDGET_MS), next node; the
 *                    fault lasts as long as that takes (the workload's heal time is only when it is sent)
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
] as const;
export type Nemesis = (typeof NEMESES)[number];

/** how long a rolling restart waits for one node to rejoin and its migrations to finish before the next node */
export const ROLLING_NODE_BUDGET_MS = 50_000;

export interface NemesisContext {
  cluster: Cluster;
  watchdog: HarnessWatchdog;
  faultMs: number;
  log: (line: string) => void;
}

/** The victim of a nemesis (the first of a rolling restart). */
export const victimOf = (n: Nemesis): number => (n === 'split' ? 3 : 1);

async function stopAndStart(c: NemesisContext, index: number): Promise<void> {
  await c.cluster.kill(index, 'SIGTERM');
  c.watchdog.startNode(index);
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

export async function applyFault(c: NemesisContext, nemesis: Nemesis): Promise<void> {
  const v = victimOf(nemesis);
  switch (nemesis) {
    case 'cut-off':
      return c.cluster.partition([1], [2, 3]);
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
    case 'rolling-restart': {
      const budget = ROLLING_NODE_BUDGET_MS;
      for (const n of [1, 2, 3]) {
        const t = Date.now();
        await stopAndStart(c, n);
        const rejoined = await waitWhole(c, true, budget);
        const settled = rejoined < 0 ? -1 : await waitWhole(c, false, Math.max(0, budget - (Date.now() - t)));
        c.log(
          `rolling restart: node ${n} rejoined ${rejoined < 0 ? 'not within the budget' : `after ${Date.now() - t - Math.max(settled, 0)} ms`}, ` +
            `migrations ${settled < 0 ? 'not done within the budget' : `done ${Date.now() - t} ms after its stop`}`,
        );
      }
      return;
    }
  }
}

export async function healFault(c: NemesisContext, nemesis: Nemesis): Promise<void> {
  const v = victimOf(nemesis);
  switch (nemesis) {
    case 'cut-off':
    case 'split':
      return c.cluster.heal();
    case 'pause':
      return c.cluster.resume(v);
    case 'kill':
      if (!c.cluster.running(v)) c.watchdog.startNode(v);
      return;
    case 'kill-wipe':
      if (!c.cluster.running(v)) c.watchdog.startNode(v, true);
      return;
    default:
      return;
  }
}

/** After the workload: what a nemesis left down comes back (kill-no-restart: a replacement node, empty). */
export function afterWorkload(c: NemesisContext, nemesis: Nemesis): void {
  const v = victimOf(nemesis);
  if (nemesis === 'kill-no-restart' && !c.cluster.running(v)) c.watchdog.startNode(v, true);
  for (const n of c.cluster.nodes) if (!c.cluster.running(n.index)) c.watchdog.startNode(n.index);
}
