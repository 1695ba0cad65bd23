/**
 * The node watchdog and the start-up rule of decision 0007 at work on the local cluster the e2e harness runs with the
 * cluster stack's own scripts (scripts/e2e/node-supervisor.ts): spends flow through the store (the deployment's
 * guard, SPEND_ACK_GUARD=refuse with AEROSPIKE_CLUSTER_SIZE = the node count) while
 *   1. one node's asd is paused (SIGSTOP): its watchdog must SIGKILL it within SILENT_KILL_WORST_MS (3.05 s) and 250 ms
 *      for the script's own processes (asinfo and timeout, forked each poll), and
 *      mark it (silent); systemd's restart (the drop-in's Restart=on-failure) runs check-start, which wipes it (the
 *      other nodes, a majority, serve without it); it rejoins empty, the mark is cleared once it is a member, and
 *      migrations refill it;
 *   2. another node is stopped and started by systemd (an operator's restart): not watched, not wiped;
 *   3. every node's asd is paused at once (a stall of the whole cluster) for 5 s, then resumed (SIGCONT): no majority
 *      could re-form without any of them (no other node answers), so no watchdog kills its node (a kill of every
 *      node would lose the acknowledged writes still in the write buffers: CE has no commit-to-device); the nodes
 *      resume, flush, and the cluster is whole again;
 *   4. two nodes killed at once (SIGKILL: their write buffers die with them) and slow to come back (started again
 *      after 15 s): the third, an orphan meanwhile and maybe the only holder of their last second of writes, is not
 *      killed while they are down (its watchdog says so: decision 0009 rule 6); they rejoin it with their data.
 * Every spend is retried until acknowledged; the report gives the refusals by reason, the longest window without an
 * acknowledged spend (steps 1 and 2), and checks that each record names the spender that was acknowledged (after the
 * stall too: nothing was wiped).
 *
 *   ASD_BIN=/path/to/asd npx tsx scripts/e2e/watchdog-scenario.ts    (npm run e2e runs it after the main scenario)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SILENT_KILL_WORST_MS } from '../../cdk/node-watchdog';
import { loadConfig } from '../../lib/domain/config';
import { closeSharedAerospikeClients } from '../../lib/engine/aerospike';
import { buildRuntime } from '../../lib/runtime';
import type { SpendRefusal } from '../../lib/store';
import { makeTx, rootTx, type Fixture } from '../../test/fixtures/txs';
import { synthesizedClusterStack } from './local-cluster';
import { startSupervisedCluster, type NodeSupervisor, type SupervisedCluster } from './node-supervisor';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** how long every node stays paused in step 3 (well past the watchdog's silence limit, 2 s) */
const STALL_MS = 5000;
/** the node script's own processes beside the designed worst case (an asinfo and a timeout forked per question) */
const SCRIPT_SLACK_MS = 250;
/** how long the two nodes killed in step 4 stay down (past the watchdog's unstable limit, 10 s) */
const TWO_KILL_DOWN_MS = 15_000;

async function until(what: string, ms: number, check: () => boolean): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(100);
  }
  return Date.now();
}

function eventAfter(sup: NodeSupervisor, since: number, re: RegExp) {
  return sup.events.find((e) => e.at >= since && re.test(e.what));
}

export interface WatchdogScenarioOptions {
  cluster: SupervisedCluster;
  namespace: string;
  /** the functions' settings (UTXO_BATCH_SIZE, ...); the store, blobs, queue and guard are set here */
  settings?: Record<string, string>;
  log: (line: string) => void;
}

/** Runs the scenario; answers the problems found (none: it showed what it should). */
export async function runWatchdogScenario(o: WatchdogScenarioOptions): Promise<string[]> {
  const { cluster, log } = o;
  const n = cluster.nodes.length;
  const problems: string[] = [];
  const fail = (p: string) => {
    problems.push(p);
    log(`  FAIL ${p}`);
  };
  const blobs = mkdtempSync(path.join(tmpdir(), 'utxo-e2e-watchdog-'));
  // the client's own log and the inline signal consumer's warnings while a node is down: counted, not printed
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Aerospike = require('aerospike') as typeof import('aerospike');
  Aerospike.setDefaultLogging({ level: Aerospike.log.OFF });
  const failures: Record<string, number> = {};
  const refusals: (SpendRefusal & { at: number })[] = [];
  const runtime = await buildRuntime(
    loadConfig({
      ...o.settings,
      UTXO_STORE: `aerospike://${cluster.hosts}/${o.namespace}?set=e2e_watchdog`,
      BLOB_STORE: `file:${blobs}`,
      SIGNAL_QUEUE: 'inline',
      SPEND_ACK_GUARD: 'refuse',
      AEROSPIKE_CLUSTER_SIZE: String(n),
    }),
    { onSpendRefused: (r) => refusals.push({ ...r, at: Date.now() }) },
  );
  const store = runtime.store;
  // muted only once the runtime is built: an error building it is the caller's to print
  const quiet = { warn: console.warn, error: console.error, lines: 0 };
  console.warn = console.error = () => void quiet.lines++;
  try {
    await store.setChainTip(1000, { force: true });
    const parents = Array.from({ length: 10 }, () => rootTx(100));
    for (const p of parents) await store.create(p.hex);
    // interleaved over the parents (so over the nodes that master them): concurrent spends hit different records
    const outputs = Array.from({ length: 1000 }, (_, k) => ({ p: parents[k % 10], vout: Math.floor(k / 10) }));
    const acks: number[] = [];
    const spenders = new Map<number, Fixture>();
    const acked = new Set<number>();
    let next = 0;
    let running = true;
    const t0 = Date.now();
    const at = (t: number) => `+${((t - t0) / 1000).toFixed(1)} s`;
    const spendOne = async (k: number, deadline: number) => {
      const spender = spenders.get(k) ?? makeTx({ inputs: [{ parent: outputs[k].p, vout: outputs[k].vout }] });
      spenders.set(k, spender);
      while (Date.now() < deadline) {
        try {
          await store.spend({ tx: spender.hex });
          acks.push(Date.now());
          acked.add(k);
          return;
        } catch (err) {
          const e = err as { code?: string; details?: { ackRefusal?: string } };
          if (e.code === 'SPENT') return fail(`output ${k}: SPENT to its only spender`);
          // refused by the guard (counted by reason through the hook), or failed on a node being lost (a connection
          // refused, a timeout): retried
          if (!e.details?.ackRefusal) failures[e.code ?? 'unknown'] = (failures[e.code ?? 'unknown'] ?? 0) + 1;
          await sleep(200);
        }
      }
    };
    const worker = async () => {
      while (running && next < outputs.length) {
        const k = next++;
        await spendOne(k, Date.now() + 60_000);
        await sleep(150);
      }
    };
    const workers = Array.from({ length: 4 }, () => worker());

    // 1. pause a node: its watchdog kills it, systemd starts it again, empty
    await sleep(3000);
    const victim = 1;
    const sup = cluster.supervisors[victim];
    const stoppedAt = Date.now();
    process.kill(sup.pid!, 'SIGSTOP');
    log(`  ${at(stoppedAt)} node${victim} SIGSTOP (asd pid ${sup.pid})`);
    const killed = await until('the watchdog killing the paused node', 10_000, () =>
      Boolean(eventAfter(sup, stoppedAt, /asd exited \(SIGKILL\)/)),
    );
    const markAtKill = sup.markSet();
    const why = eventAfter(sup, stoppedAt, /watchdog: .*SIGKILL/)?.what ?? '(no watchdog line)';
    log(`  ${at(killed)} node${victim} killed ${((killed - stoppedAt) / 1000).toFixed(2)} s after the stop: ${why}`);
    if (killed - stoppedAt > SILENT_KILL_WORST_MS + SCRIPT_SLACK_MS)
      fail(`the watchdog killed the paused node ${killed - stoppedAt} ms after the stop`);
    if (!markAtKill) fail('no wipe-on-start mark after the kill');
    const wiped = await until('the restart wiping the node', 10_000, () =>
      Boolean(eventAfter(sup, killed, /check-start: .*starting empty/)),
    ).catch(() => undefined);
    if (!wiped) fail('the restarted node did not start empty');
    else log(`  ${at(wiped)} ${eventAfter(sup, killed, /check-start/)!.what}`);
    const joined = await until(`node${victim} rejoining`, 60_000, () => cluster.supervisors.every((s) => s.settled(n)));
    await until('the mark cleared', 5_000, () => !sup.markSet()).catch(() =>
      fail('the mark is still set after rejoining'),
    );
    log(
      `  ${at(joined)} node${victim} a member of the ${n}-node cluster again; wipe-on-start mark cleared: ${!sup.markSet()}`,
    );
    const refilled = await until('migrations', 120_000, () => cluster.supervisors[0].settled(n, false)).catch(
      () => undefined,
    );
    log(`  ${refilled ? at(refilled) : '(not within 120 s)'} migrations done: node${victim} refilled`);

    // 2. an operator's restart of another node (systemd stop, start): not watched, started with its data
    const other = cluster.supervisors[n - 1];
    const restartAt = Date.now();
    await other.stop();
    await other.start();
    await until(`node${n - 1} back after its restart`, 60_000, () => other.settled(n));
    const wipedAgain = eventAfter(other, restartAt, /starting empty/);
    const killedAgain = eventAfter(other, restartAt, /SIGKILL/);
    log(
      `  ${at(Date.now())} node${n - 1} restarted by systemd: ${wipedAgain ? 'WIPED' : 'started with its data'}, ` +
        `${killedAgain ? 'KILLED by its watchdog' : 'not killed'}`,
    );
    if (wipedAgain || killedAgain) fail(`an operator's restart of node${n - 1} was wiped or killed`);

    // 3. a stall of the whole cluster (every asd paused at once, resumed by SIGCONT after STALL_MS): no majority could
    //    re-form without any of them, so no watchdog kills (killing every node would lose the acknowledged writes
    //    still in their write buffers: CE has no commit-to-device); each says so once; the nodes resume whole
    await sleep(3000);
    const stallAt = Date.now();
    const stalled = cluster.supervisors.map((s) => s.pid!);
    for (const pid of stalled) process.kill(pid, 'SIGSTOP');
    log(`  ${at(stallAt)} every node SIGSTOP (a stall of the whole cluster)`);
    await sleep(STALL_MS);
    for (const pid of stalled) process.kill(pid, 'SIGCONT');
    const resumedAt = Date.now();
    log(`  ${at(resumedAt)} every node SIGCONT after ${((resumedAt - stallAt) / 1000).toFixed(1)} s`);
    await sleep(2000);
    cluster.supervisors.forEach((s, i) => {
      const killed = eventAfter(s, stallAt, /asd exited \(SIGKILL\)/);
      const held = eventAfter(s, stallAt, /whole-cluster stall, not killed/);
      log(
        `  node${i}: ${killed ? `KILLED (${at(killed.at)})` : 'not killed'}; ${held?.what ?? 'its watchdog said nothing'}`,
      );
      if (killed) fail(`node${i} was killed during the whole-cluster stall (its write buffer lost)`);
      if (!held) fail(`node${i}'s watchdog did not say it held its kill during the stall`);
    });
    const wholeAgain = await until('the cluster whole after the stall', 60_000, () =>
      cluster.supervisors.every((s) => s.settled(n)),
    ).catch(() => undefined);
    if (!wholeAgain) fail('the cluster did not re-form after the stall');
    else
      log(
        `  ${at(wholeAgain)} the ${n}-node cluster whole again, ${((wholeAgain - stallAt) / 1000).toFixed(1)} s after the stall`,
      );
    await sleep(3000);

    // 4. two nodes killed at once, back after TWO_KILL_DOWN_MS: the third is an orphan while they are down, and it is
    //    not killed (rule 6: the others refuse the connection, no majority exists without it); they rejoin it
    const survivor = cluster.supervisors[n - 1];
    const pair = cluster.supervisors.slice(0, 2);
    const twoKillAt = Date.now();
    for (const s of pair) {
      s.slowRestartMs = TWO_KILL_DOWN_MS;
      process.kill(s.pid!, 'SIGKILL');
    }
    log(`  ${at(twoKillAt)} node0 and node1 SIGKILL at once, started again after ${TWO_KILL_DOWN_MS / 1000} s`);
    const backAfterTwoKill = await until('the cluster whole after the two kills', 90_000, () =>
      cluster.supervisors.every((s) => s.settled(n)),
    ).catch(() => undefined);
    const survivorKilled = eventAfter(survivor, twoKillAt, /asd exited \(SIGKILL\)/);
    const survivorHeld = eventAfter(survivor, twoKillAt, /may serve .*not killed/);
    log(
      `  node${n - 1} (the survivor): ${survivorKilled ? `KILLED (${at(survivorKilled.at)})` : 'not killed'}; ` +
        `${survivorHeld?.what ?? 'its watchdog said nothing'}`,
    );
    if (survivorKilled) fail(`node${n - 1}, the survivor of two kills, was killed while the others were down`);
    if (!survivorHeld) fail(`node${n - 1}'s watchdog did not say it held its kill while the others were down`);
    if (!backAfterTwoKill) fail('the cluster did not re-form after the two kills');
    else log(`  ${at(backAfterTwoKill)} the ${n}-node cluster whole again`);
    await sleep(3000);
    running = false;
    await Promise.all(workers);

    // every acknowledged spend stands; the windows without one
    const tried = [...spenders.keys()];
    for (const k of tried.filter((x) => !acked.has(x))) await spendOne(k, Date.now() + 30_000);
    const unacked = tried.filter((k) => !acked.has(k));
    if (unacked.length > 0) fail(`${unacked.length} output(s) never acknowledged`);
    let wrong = 0;
    for (const k of acked) {
      const s = await store.getSpend({ txid: outputs[k].p.txid, vout: outputs[k].vout });
      if (s.status !== 'SPENT' || s.spendingTxid !== spenders.get(k)!.txid) wrong++;
    }
    if (wrong > 0) fail(`${wrong} acknowledged spend(s) not in the records`);
    // the goal is for one node's faults (steps 1 and 2); the whole-cluster stall stops every spend until it is back
    const times = [t0, ...acks.filter((t) => t <= stallAt).sort((a, b) => a - b), stallAt];
    // after the nodes resumed (an answer read late by a busy event loop may land between the stop and the resume)
    const firstAfterStall = acks.filter((t) => t > resumedAt).sort((a, b) => a - b)[0];
    let gap = 0;
    let gapAt = t0;
    for (let i = 1; i < times.length; i++)
      if (times[i] - times[i - 1] > gap) [gap, gapAt] = [times[i] - times[i - 1], times[i - 1]];
    const firstAfterStop = acks.filter((t) => t > stoppedAt).sort((a, b) => a - b)[0];
    const byReason: Record<string, number> = {};
    for (const r of refusals) byReason[r.reason] = (byReason[r.reason] ?? 0) + r.txs;
    log(
      `  spends: ${tried.length} outputs, ${acked.size} acknowledged (each record names its spender: ${wrong === 0}); ` +
        `refused by the guard and retried (txs by reason): ${JSON.stringify(byReason)}; other failures retried: ` +
        `${JSON.stringify(failures)}; longest window without an acknowledged spend ` +
        `${(gap / 1000).toFixed(1)} s (from ${at(gapAt)}); first acknowledgement after the stop ` +
        `${firstAfterStop ? `${((firstAfterStop - stoppedAt) / 1000).toFixed(1)} s after it` : 'none'}; ` +
        `first acknowledgement after the whole-cluster stall ` +
        `${firstAfterStall ? `${((firstAfterStall - stallAt) / 1000).toFixed(1)} s after it` : 'none'}` +
        `${wholeAgain ? ` (the cluster whole again ${((wholeAgain - stallAt) / 1000).toFixed(1)} s after it)` : ''}`,
    );
    if (gap > 15_000) fail(`${(gap / 1000).toFixed(1)} s without an acknowledged spend (goal: at most 15 s)`);
    return problems;
  } finally {
    console.warn = quiet.warn;
    console.error = quiet.error;
    log(`  (${quiet.lines} warning lines of the client and the signal consumer not shown)`);
    await runtime.engine.close().catch(() => undefined);
    // the runtime's client is the process's shared one (as in a function): open, it keeps the run from ending
    await closeSharedAerospikeClients();
    rmSync(blobs, { recursive: true, force: true });
  }
}

async function cli(): Promise<void> {
  const asd = process.env.ASD_BIN;
  if (!asd) {
    console.log('e2e watchdog scenario SKIPPED: no ASD_BIN (an asd binary to start the cluster stack conf with)');
    return;
  }
  const dir = mkdtempSync(path.join(process.env.E2E_DIR ?? tmpdir(), 'utxo-e2e-watchdog-cluster-'));
  const stack = synthesizedClusterStack();
  const nodes = Object.values(stack.template.Resources).filter((r) => r.Type === 'AWS::EC2::Instance').length;
  const log = (l: string) => console.log(l);
  console.log(`starting the cluster stack's scripts on ${nodes} local nodes (watchdog and start hook included)...`);
  const cluster = await startSupervisedCluster({
    stack,
    asd,
    dir,
    basePort: Number(process.env.E2E_CLUSTER_PORT ?? 3200),
    nodes,
    fileSize: 1024 * 1024 * 1024,
    log,
  });
  let problems: string[] = [];
  try {
    console.log(`watchdog scenario on ${cluster.hosts}:`);
    problems = await runWatchdogScenario({ cluster, namespace: 'utxo', log });
  } finally {
    await cluster.stop();
    if (problems.length === 0 && process.env.E2E_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
    else console.log(`work directory kept: ${dir}`);
  }
  console.log(problems.length === 0 ? 'watchdog scenario passed' : `watchdog scenario FAILED: ${problems.length}`);
  process.exit(problems.length === 0 ? 0 : 1);
}

if (require.main === module)
  cli().catch((err: unknown) => {
    console.error('watchdog scenario FAILED:', err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  });
