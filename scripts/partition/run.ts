/**
 * `npm run partition`: the partition experiment (docs/reliability.md). Starts a 3-node Aerospike cluster from
 * ASD_BIN in network namespaces (cluster.ts), and for each nemesis: creates the parent txs through the store, runs
 * the client processes (worker.ts) that send competing spenders of every output around the fault, applies the
 * fault and heals it, waits for the cluster to be whole with no migration pending, reads the final records through
 * the store and checks the history against them (checker.ts); then runs the detection and repair (repair.ts) and
 * checks again. Prints the counts per nemesis and writes every history and report under --out.
 *
 * Skips (exit 0, reason printed) without ASD_BIN, root or `ip netns`. Removes its namespaces, links and servers on
 * exit, failure and SIGINT/SIGTERM.
 *
 *   npm run partition -- [--nemesis cut-off,split,...] [--runs 1] [--outputs 1000] [--clients 4] [--spenders 2]
 *                        [--fault-ms 8000] [--settings baseline|settled|deployed] [--filler 0] [--retries 20]
 *                        [--tail-ms 4000] [--rf 2] [--prefix us19] [--subnet 10.19.0]
 *                        [--out DIR] [--no-repair]
 * (nemeses: nemesis.ts; a watchdog per node as on the cluster stack: watchdog.ts; availability: availability.ts)
 */
import { spawn } from 'child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync, rmSync } from 'fs';
import { loadavg } from 'os';
import * as path from 'path';
import { aerospikeConfSettings } from '../../cdk/config';
import { effectiveReplication } from '../../cdk/config/aerospike';
import { loadConfig } from '../../lib/domain/config';
import { buildRuntime, type Runtime } from '../../lib/runtime';
import { availability, availabilityRow, type Availability } from './availability';
import { checkHistory, summaryRow, type CheckReport } from './checker';
import { Cluster, preconditions, sleep } from './cluster';
import { RECORD_BYTES } from './filler';
import {
  afterWorkload,
  applyFault,
  healFault,
  CLIENT_GROUPS,
  faultTooShort,
  NEMESES,
  SKEW,
  victimOf,
  type Nemesis,
  type NemesisContext,
  type RollingStep,
} from './nemesis';
import { HarnessWatchdog } from './watchdog';
import { outpointKey, parseHistory, type FinalState, type HistoryEvent } from './history';
import { buildPlan, withLateRivals, type Plan } from './plan';
import { repairDoubleAcknowledged, type RepairReport } from './repair';
import { clusterSettings, harnessDeployment, type SettingsProfile } from './settings';
import type { WorkerJob } from './worker';

interface Args {
  nemeses: Nemesis[];
  runs: number;
  outputs: number;
  clients: number;
  spenders: number;
  faultMs: number;
  settings: SettingsProfile;
  out: string;
  repair: boolean;
  prefix: string;
  subnet: string;
  filler: number;
  retries: number;
  /** the workload goes on this long after the heal */
  tailMs: number;
  /** replication factor (undefined: 2, the figures of docs/reliability.md) */
  rf?: number;
}

function parseArgs(argv: string[]): Args {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const int = (name: string, fallback: number, min = 1) => {
    const v = get(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: expected an integer >= ${min}, got "${v}"`);
    return n;
  };
  // by default every nemesis but clock-skew (it runs alone: its node's clock stays skewed for the whole run)
  const nemeses = (get('nemesis') ?? NEMESES.filter((n) => n !== 'clock-skew').join(',')).split(',') as Nemesis[];
  for (const n of nemeses)
    if (!NEMESES.includes(n)) throw new Error(`--nemesis: unknown "${n}" (${NEMESES.join(', ')})`);
  // the skewed clock is the node's for the whole run: the other nemeses would run on it too
  if (nemeses.includes('clock-skew') && nemeses.length > 1)
    throw new Error('--nemesis: clock-skew runs alone (its node keeps a skewed clock for the whole run)');
  const tooShort = faultTooShort(nemeses, int('fault-ms', 8000));
  if (tooShort) throw new Error(tooShort);
  const settings = (get('settings') ?? 'deployed') as SettingsProfile;
  if (!['baseline', 'settled', 'deployed'].includes(settings))
    throw new Error('--settings: baseline, settled or deployed');
  return {
    nemeses,
    runs: int('runs', 1),
    outputs: int('outputs', 1000),
    clients: int('clients', 4),
    spenders: int('spenders', 2),
    faultMs: int('fault-ms', 8000),
    settings,
    out: get('out') ?? `/tmp/${get('prefix') ?? 'us19'}/results`,
    repair: !argv.includes('--no-repair'),
    prefix: get('prefix') ?? 'us19',
    subnet: get('subnet') ?? '10.19.0',
    filler: int('filler', 0, 0),
    tailMs: int('tail-ms', 4000),
    retries: int('retries', 20, 0),
    rf: get('rf') === undefined ? undefined : int('rf', 2),
  };
}

const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 23)} ${line}`);

async function readFinal(store: Runtime['store'], plan: Plan): Promise<FinalState> {
  const spenders: Record<string, string | null> = {};
  const outpoints = plan.spends
    .filter((s, i, all) => all.findIndex((x) => x.parent === s.parent && x.vout === s.vout) === i)
    .map((s) => ({ txid: s.parent, vout: s.vout }));
  for (let i = 0; i < outpoints.length; i += 500) {
    const chunk = outpoints.slice(i, i + 500);
    const results = await store.getSpendMany(chunk);
    results.forEach((r, k) => {
      if (!r.ok) return; // unreadable: absent from the map
      spenders[outpointKey(chunk[k])] = r.value.spendingTxid ?? null;
    });
  }
  const txs: FinalState['txs'] = {};
  const txids = [...plan.parents.map((p) => p.txid), ...plan.spends.map((s) => s.txid)];
  for (let i = 0; i < txids.length; i += 500) {
    const chunk = txids.slice(i, i + 500);
    const results = await store.getMany(chunk, ['blockIDs', 'conflicting']);
    results.forEach((r, k) => {
      if (!r.ok) return;
      const ids = r.value.blockIDs;
      txs[chunk[k]] = {
        blockIds: Array.isArray(ids) ? ids.map(Number) : [],
        conflicting: r.value.conflicting === true,
      };
    });
  }
  return { spenders, txs };
}

/** A client process; in the network namespace `netns` when given (a client zone: az-isolation). */
function runWorker(jobPath: string, netns?: string): Promise<number> {
  return runScript('worker.ts', [jobPath], netns);
}

function runScript(script: string, args: string[], netns?: string): Promise<number> {
  return new Promise((resolve) => {
    const command = [process.execPath, '--import', 'tsx', path.join(__dirname, script), ...args];
    const [file, ...rest] = netns ? ['ip', 'netns', 'exec', netns, ...command] : command;
    const child = spawn(file, rest, {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

interface RunResult {
  name: string;
  report: CheckReport;
  availability: Availability;
  /** ms from the run's start to the end of the fault as applied (a rolling restart's last node settled) */
  faultEndMs: number;
  /** rolling restart: per node, rejoined and settled ms after its stop */
  rolling?: RollingStep[];
  /** the workload's spends fell due until after the fault ended (false: --fault-ms too short, the run fails) */
  covered: boolean;
  /** the machine's load average (1, 5, 15 min) when the run's records were read */
  loadAverage?: number[];
  repair?: RepairReport;
  afterRepair?: CheckReport;
}

async function runOne(
  nc: NemesisContext,
  args: Args,
  nemesis: Nemesis,
  run: number,
  storeEnv: (set: string) => Record<string, string>,
): Promise<RunResult> {
  const name = `${nemesis}#${run}`;
  const set = `p${Date.now() % 1_000_000}`;
  const dir = path.join(args.out, `${args.settings}-${nemesis}-${run}-${set}`);
  mkdirSync(dir, { recursive: true });
  const historyPath = path.join(dir, 'history.jsonl');
  const env = storeEnv(set);
  // a fresh cluster on a busy machine may time out the UDF registration: retried before anything is sent
  let runtime: Runtime | undefined;
  for (let attempt = 1; !runtime; attempt++) {
    try {
      runtime = await buildRuntime(loadConfig({ ...process.env, ...env }));
    } catch (err) {
      if (attempt >= 5) throw err;
      log(`${name}: opening the store failed (${err instanceof Error ? err.message : String(err)}), again`);
      await sleep(2000);
    }
  }
  const { store } = runtime;

  const lead = 5000; // the workers' start-up (tsx, client connect, UDF check)
  const faultAtMs = 4000;
  const healAtMs = faultAtMs + args.faultMs;
  const groups = CLIENT_GROUPS[nemesis];
  const late = groups && 'startMs' in groups ? groups : undefined;
  const zones = groups !== undefined && 'zones' in groups;
  const built = buildPlan({
    outputs: args.outputs,
    outputsPerParent: groups ? 4 : 10,
    spenders: args.spenders,
    clients: args.clients,
    fromMs: 1000,
    toMs: healAtMs + args.tailMs,
    seed: Date.now(),
  });
  // late: the first spenders sent in the fault's first 2.5 s, before the majority re-forms (in doubt on the cut node,
  // retried), the rivals from
  // processes started during it; zones: the first spenders from az1's clients, the rivals from az2's, throughout
  const plan = late
    ? withLateRivals(built, args.clients, {
        firstFromMs: faultAtMs,
        firstToMs: faultAtMs + 2500,
        rivalsFromMs: faultAtMs + late.dueFromMs,
        rivalsToMs: healAtMs - 500,
      })
    : zones
      ? withLateRivals(built, args.clients, {
          firstFromMs: 1000,
          firstToMs: healAtMs + args.tailMs,
          rivalsFromMs: 1000,
          rivalsToMs: healAtMs + args.tailMs,
        })
      : built;
  const early = groups ? Math.max(1, Math.floor(args.clients / 2)) : args.clients;

  // the parents, before the fault, through the store (acknowledged creates are checked too)
  const history: HistoryEvent[] = [];
  for (let i = 0; i < plan.parents.length; i += 50) {
    let chunk = plan.parents.slice(i, i + 50);
    // before the fault; a timeout (a busy machine) is retried, and TX_EXISTS then means the first attempt applied
    for (let attempt = 0; chunk.length > 0; attempt++) {
      const results = await store.createMany(chunk.map((p) => ({ tx: p.hex })));
      const again: typeof chunk = [];
      results.forEach((r, k) => {
        if (r.ok || r.error.code === 'TX_EXISTS') {
          history.push({
            kind: 'create',
            client: 'controller',
            mode: 'batch',
            start: -1,
            end: -1,
            answer: 'ok',
            txid: chunk[k].txid,
          });
        } else if (r.error.code === 'STORAGE_ERROR' && attempt < 5) again.push(chunk[k]);
        else throw new Error(`creating parent ${chunk[k].txid} failed: ${r.error.message}`);
      });
      chunk = again;
      if (chunk.length > 0) await sleep(1000);
    }
  }
  writeFileSync(historyPath, history.map((e) => JSON.stringify(e)).join('\n') + '\n');

  const t0 = Date.now() + lead;
  const jobs = Array.from({ length: args.clients }, (_, c) => {
    const job: WorkerJob = {
      client: `c${c + 1}`,
      clientIndex: c,
      spends: plan.spends.filter((s) => s.client === c),
      t0,
      historyPath,
      env,
      retries: args.retries,
      retryDelayMs: 500,
      retryDelayCapMs: 2000,
      faultAtMs,
      healAtMs,
      minedEveryMs: 2000,
      batchSize: 25,
    };
    const jobPath = path.join(dir, `job-c${c + 1}.json`);
    writeFileSync(jobPath, JSON.stringify(job));
    return jobPath;
  });
  log(`${name}: ${plan.outputs} outputs x ${args.spenders} spenders, ${args.clients} clients, set ${set}`);
  // late clients: processes started during the fault (a new Lambda execution environment connects then); zones:
  // each half in its client zone's namespace
  const workers = Promise.all(
    jobs.map((job, c) => {
      const netns = zones ? nc.cluster.clientNetns(c < early ? 1 : 2).netns : undefined;
      if (!late || c < early) return runWorker(job, netns);
      return sleep(t0 + faultAtMs + late.startMs - Date.now()).then(() => runWorker(job, netns));
    }),
  );

  await sleep(t0 + faultAtMs - Date.now());
  log(`${name}: fault: ${nemesis} node ${victimOf(nemesis)}`);
  const rolling = (await applyFault(nc, nemesis)) ?? undefined;
  const faultEndMs = Date.now() - t0;
  const covered = faultEndMs <= healAtMs;
  if (!covered)
    log(
      `${name}: WORKLOAD TOO SHORT: the fault ended at ${faultEndMs} ms, after the planned heal at ${healAtMs} ms: raise --fault-ms (this run fails)`,
    );
  await sleep(t0 + healAtMs - Date.now());
  log(`${name}: heal`);
  await healFault(nc, nemesis);

  const codes = await workers;
  if (codes.some((c) => c !== 0)) throw new Error(`${name}: a worker failed (exit codes ${codes.join(', ')})`);
  await afterWorkload(nc, nemesis);
  const stableMs = await nc.cluster.waitStable(3, 1_800_000);
  log(`${name}: workers done; cluster whole, migrations done ${stableMs} ms later`);

  const events = parseHistory(readFileSync(historyPath, 'utf8'));
  const final = await readFinal(store, plan);
  const report = checkHistory(events, final);
  const result: RunResult = {
    name,
    report,
    availability: availability(events, faultAtMs),
    faultEndMs,
    rolling,
    covered,
  };
  result.loadAverage = loadavg().map((l) => Number(l.toFixed(2)));
  log(
    `${name}: ${JSON.stringify(availabilityRow(result.availability))}; windows > 1 s: ${JSON.stringify(result.availability.gaps)}; answers in the longest: ${JSON.stringify(result.availability.longestGapAnswers)}; load average ${result.loadAverage.join(' ')}`,
  );
  if (args.repair && (report.doubleAcknowledged.length > 0 || report.lostSpends.length > 0)) {
    result.repair = await repairDoubleAcknowledged(store, events);
    result.afterRepair = checkHistory(events, await readFinal(store, plan));
  }
  writeFileSync(path.join(dir, 'final.json'), JSON.stringify(final));
  writeFileSync(path.join(dir, 'report.json'), JSON.stringify(result, null, 1));
  printAnomalies(name, report);
  return result;
}

function printAnomalies(name: string, r: CheckReport): void {
  for (const d of r.doubleAcknowledged.slice(0, 5)) {
    log(
      `${name}: DOUBLE-ACKNOWLEDGED ${d.outpoint}: acknowledged to ${d.acknowledged.map((s) => s.slice(0, 8)).join(' and ')}, record says ${d.recorded?.slice(0, 8)}`,
    );
    for (const e of d.events) {
      log(
        `    ${e.client} ${e.mode} ${e.spender.slice(0, 8)} sent ${e.start} ms (${e.phase}) answered ${e.end} ms: ${e.answer}${e.code ? ` ${e.code}` : ''}`,
      );
    }
  }
  if (r.doubleAcknowledged.length > 5)
    log(`${name}: ... ${r.doubleAcknowledged.length - 5} more double-acknowledged outputs`);
  for (const l of r.lostSpends.filter((x) => !x.doubleAcknowledged).slice(0, 5)) {
    log(`${name}: LOST acknowledged spend ${l.outpoint} by ${l.spender.slice(0, 8)}, record says ${l.recorded}`);
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const reason = preconditions();
  if (reason) {
    console.log(`partition: skipped: ${reason}`);
    return;
  }
  const workDir = `/tmp/${args.prefix}/cluster`;
  const deployment = harnessDeployment(args.rf);
  const a = deployment.aerospike;
  const rf = effectiveReplication(a);
  const settings = clusterSettings(args.settings, a.nodeCount);
  const conf = aerospikeConfSettings(a, deployment.store, 'utxo-partition', []);
  const cluster = new Cluster({
    asdBin: process.env.ASD_BIN!,
    prefix: args.prefix,
    subnet: args.subnet,
    workDir,
    conf,
    extra: settings.conf,
    // the filler's records (and their copies: RF of them over 3 nodes) with room to spare
    fileSizeMb: Math.max(1024, Math.ceil((args.filler * 750 * rf) / 2 ** 20) + 1024),
    log,
    ...(args.nemeses.includes('clock-skew') ? { skew: SKEW } : {}),
  });
  const watchdog = new HarnessWatchdog(cluster, log, conf.minClusterSize);
  const nc: NemesisContext = { cluster, watchdog, faultMs: args.faultMs, log };

  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    await watchdog.stop();
    await cluster.stopAll().catch(() => undefined);
    cluster.tearDownNetwork();
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      log(`${sig}: stopping the servers and removing the namespaces`);
      void cleanup().then(() => process.exit(130));
    });
  }

  const results: RunResult[] = [];
  try {
    log(
      `settings "${args.settings}": ${JSON.stringify(settings)}; 3 nodes, RF ${rf}, min-cluster-size ${conf.minClusterSize}`,
    );
    cluster.setUpNetwork();
    if (existsSync(workDir)) rmSync(workDir, { recursive: true, force: true });
    for (const n of cluster.nodes) cluster.start(n.index, true);
    log(`cluster starting: ${cluster.hosts}`);
    await cluster.waitStable(3, 60_000);
    log('cluster stable');
    watchdog.start();
    if (args.filler > 0) {
      const started = Date.now();
      const code = await runScript('filler.ts', [cluster.hosts, a.namespace, String(args.filler)]);
      if (code !== 0) throw new Error(`the filler failed (exit code ${code})`);
      log(`filler: ${args.filler} records of ${RECORD_BYTES} B in ${Date.now() - started} ms`);
      await cluster.waitStable(3, 600_000);
    }
    const blobDir = path.join(args.out, 'blobs');
    const storeEnv = (set: string) => ({
      UTXO_STORE: `aerospike://${cluster.hosts}/${a.namespace}?set=${set}`,
      BLOB_STORE: `file:${blobDir}`,
      SIGNAL_QUEUE: 'inline',
      ...settings.clientEnv,
    });
    for (const nemesis of args.nemeses) {
      for (let run = 1; run <= args.runs; run++) {
        results.push(await runOne(nc, args, nemesis, run, storeEnv));
        await cluster.waitStable(3, 1_800_000);
      }
    }
  } finally {
    await cleanup();
  }

  console.log(
    `\nsettings: ${args.settings}; 3 nodes, RF ${rf}, filler ${args.filler} records, fault ${args.faultMs} ms; ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at the end`,
  );
  console.table(results.map((r) => summaryRow(r.name, r.report)));
  console.table(
    results.map((r) => ({
      nemesis: r.name,
      ...availabilityRow(r.availability),
      'rolling restart ended (s)': r.rolling ? (r.faultEndMs / 1000).toFixed(1) : '-',
      covered: r.covered ? 'yes' : 'NO',
    })),
  );
  if (watchdog.kills.length > 0) log(`watchdog kills: ${JSON.stringify(watchdog.kills)}`);
  const repaired = results.filter((r) => r.afterRepair);
  if (repaired.length > 0) {
    console.log('after detection and repair:');
    console.table(
      repaired.map((r) => ({
        ...summaryRow(r.name, r.afterRepair!),
        found: r.repair!.found,
        marked: r.repair!.marked,
      })),
    );
  }
  writeFileSync(
    path.join(args.out, `summary-${args.settings}-${Date.now()}.json`),
    JSON.stringify(
      results.map((r) => ({
        name: r.name,
        nodes: 3,
        rf,
        filler: args.filler,
        faultMs: args.faultMs,
        faultEndMs: r.faultEndMs,
        rolling: r.rolling,
        covered: r.covered,
        loadAverage: r.loadAverage,
        before: summaryRow(r.name, r.report),
        availability: r.availability,
        after: r.afterRepair ? summaryRow(r.name, r.afterRepair) : undefined,
        repair: r.repair,
      })),
      null,
      1,
    ),
  );
  process.exit(results.every((r) => (r.afterRepair ?? r.report).ok && r.covered) ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error('partition failed:', err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(2);
});
