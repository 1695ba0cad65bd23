/**
 * The capacity model's slope check (docs/performance.md, "Capacity to a million txs a second"): does the CPU per tx
 * stay the same with more Aerospike nodes and with more client processes, as the model assumes when it divides a rate
 * by a per-tx figure? Starts a real cluster from ASD_BIN in network namespaces (scripts/partition/cluster.ts: the
 * deployment's aerospike.conf, a data file per node), and for each node count runs the block's four phases from 1 and
 * from k client processes (slope-worker.ts, each its own client and share of the txs), printing per phase: the
 * clients' CPU per tx (all processes), every `asd`'s CPU per tx (/proc/<pid>/stat), each node's bytes on the wire per
 * tx (its veth's counters) and the rate; after create, the bytes per record copy (namespace statistics).
 *
 *   sudo ASD_BIN=/path/to/asd npx tsx bench/capacity/slope.ts [--nodes 2,3] [--clients 1,3] [--rf 2] [--txs 30000]
 *   sudo ASD_BIN=... npx tsx bench/capacity/slope.ts --nodes 2 --exec 'npm run bench'   # any command on the cluster,
 *       with AEROSPIKE_HOSTS, AEROSPIKE_NAMESPACE and BENCH_ASD_PIDS set (the block bench then prints asd CPU per tx)
 *
 * Names start with --prefix (default cap) and addresses are in --subnet (default 10.23.0); everything started is
 * stopped and removed on exit, failure and SIGINT/SIGTERM. Skips (exit 0, reason printed) without ASD_BIN, root or
 * `ip netns`.
 */
import { fork, spawn, type ChildProcess } from 'child_process';
import { rmSync } from 'fs';
import { loadavg } from 'os';
import * as path from 'path';
import { aerospikeConfSettings, defaultConfig } from '../../cdk/config';
import { Cluster, preconditions } from '../../scripts/partition/cluster';
import { asdCpu, lessIdle } from './asd-cpu';
import { interfaceBytes } from './proc';
import { SLOPE_PHASES, type FromWorker, type SlopePhase, type ToWorker } from './slope-worker';

interface Args {
  nodes: number[];
  clients: number[];
  rf: number;
  txs: number;
  exec?: string;
  prefix: string;
  subnet: string;
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { nodes: [2, 3], clients: [1, 3], rf: 2, txs: 30000, prefix: 'cap', subnet: '10.23.0' };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag}: a value is missing`);
    const list = () => value.split(',').map(Number);
    if (flag === '--nodes') args.nodes = list();
    else if (flag === '--clients') args.clients = list();
    else if (flag === '--rf') args.rf = Number(value);
    else if (flag === '--txs') args.txs = Number(value);
    else if (flag === '--exec') args.exec = value;
    else if (flag === '--prefix') args.prefix = value;
    else if (flag === '--subnet') args.subnet = value;
    else throw new Error(`unknown flag ${flag}`);
  }
  return args;
}

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 23)} ${line}\n`);

export interface PhaseFigures {
  nodes: number;
  rf: number;
  clients: number;
  phase: SlopePhase;
  txs: number;
  ms: number;
  clientCpuUsPerTx: number;
  /** every asd's CPU over the phase less what the nodes spend idle over as long (their background threads) */
  asdCpuUsPerTx: number;
  /** the same without the idle share taken off */
  asdRawCpuUsPerTx: number;
  /** bytes in + out of every node's interface together, per tx */
  wireBytesPerTx: number;
  deleted: number;
}

/** Sends one message to a worker and waits for its answer; an `error` answer or an exit throws. */
function ask(child: ChildProcess, m: ToWorker): Promise<FromWorker> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a slope worker exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (answer: FromWorker) => {
      child.off('exit', onExit);
      if (answer.type === 'error') reject(new Error(answer.message));
      else resolve(answer);
    });
    child.send(m);
  });
}

async function namespaceBytes(cluster: Cluster, namespace: string): Promise<string> {
  let objects = 0;
  let data = 0;
  let index = 0;
  let sindex = 0;
  for (const n of cluster.nodes) {
    const s = await cluster.namespaceStats(n.index, namespace);
    objects += Number(s.objects ?? 0);
    data += Number(s.data_used_bytes ?? 0);
    index += Number(s.index_used_bytes ?? 0);
    sindex += Object.entries(s)
      .filter(([k]) => /^sindex.*used_bytes$/.test(k))
      .reduce((sum, [, v]) => sum + Number(v), 0);
  }
  const per = (v: number) => (objects > 0 ? Math.round(v / objects) : 0);
  return (
    `${objects} record copies: data ${per(data)} B + primary index ${per(index)} B + sindex ${per(sindex)} B per copy ` +
    `(in all: data ${data} B, sindex ${sindex} B)`
  );
}

/** One configuration: `clients` worker processes, each with txs / clients of the block, on a fresh set. */
async function measure(cluster: Cluster, a: Args, clients: number, set: string): Promise<PhaseFigures[]> {
  const namespace = 'utxo';
  const workers = Array.from({ length: clients }, () =>
    fork(path.join(__dirname, 'slope-worker.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  try {
    let txs = 0;
    // one at a time: the first registers the UDF module and creates the indexes
    for (const [shard, w] of workers.entries()) {
      const share = Math.floor(a.txs / clients);
      const ready = await ask(w, {
        type: 'setup',
        hosts: cluster.hosts,
        namespace,
        set,
        txs: share,
        shard,
        shards: clients,
      });
      if (ready.type === 'ready') txs += ready.txs;
    }
    const pids = cluster.nodes.map((n) => cluster.pid(n.index)).filter((p): p is number => p !== undefined);
    const ifaces = cluster.nodes.map((n) => `${a.prefix}v${n.index}`);
    const wire = () => ifaces.reduce((s, i) => s + (interfaceBytes(i) ?? NaN), 0);
    // what the nodes spend doing nothing (heartbeats, the supervisor, tickers): taken off each phase's asd CPU
    const asd = await asdCpu(log, pids);
    if (!asd) throw new Error(`cannot read the CPU of the asd processes ${pids.join(',')}`);
    log(`before the phases (the parents): ${await namespaceBytes(cluster, namespace)}`);
    const out: PhaseFigures[] = [];
    for (const phase of SLOPE_PHASES) {
      const [asd0, wire0, t] = [asd.read(), wire(), performance.now()];
      const done = await Promise.all(workers.map((w) => ask(w, { type: 'phase', phase })));
      const ms = performance.now() - t;
      const [asd1, wire1] = [asd.read(), wire()];
      const sum = (f: (d: Extract<FromWorker, { type: 'done' }>) => number) =>
        done.reduce((s, d) => s + (d.type === 'done' ? f(d) : 0), 0);
      const figures: PhaseFigures = {
        nodes: cluster.nodes.length,
        rf: a.rf,
        clients,
        phase,
        txs,
        ms: Math.round(ms),
        clientCpuUsPerTx: Math.round(sum((d) => d.cpuUs) / txs),
        asdCpuUsPerTx: Math.round((lessIdle(asd0, asd1, ms, asd.idleUsPerMs) ?? NaN) / txs),
        asdRawCpuUsPerTx: Math.round(((asd1 ?? NaN) - (asd0 ?? NaN)) / txs),
        wireBytesPerTx: Math.round((wire1 - wire0) / txs),
        deleted: sum((d) => d.deleted),
      };
      console.log(JSON.stringify(figures));
      out.push(figures);
      log(`after ${phase}: ${await namespaceBytes(cluster, namespace)}`);
    }
    return out;
  } finally {
    for (const w of workers) w.kill();
  }
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const reason = preconditions();
  if (reason) {
    console.log(`slope: skipped: ${reason}`);
    return;
  }
  const all: PhaseFigures[] = [];
  for (const nodes of a.nodes) {
    const d = defaultConfig('capacity');
    const aerospike = { ...d.aerospike, nodeCount: nodes, replicationFactor: a.rf };
    const runDir = `/tmp/${a.prefix}`;
    const workDir = `${runDir}/cluster`;
    const cluster = new Cluster({
      asdBin: process.env.ASD_BIN!,
      prefix: a.prefix,
      subnet: a.subnet,
      workDir,
      nodes,
      conf: aerospikeConfSettings(aerospike, d.store, `utxo-${a.prefix}`, []),
      fileSizeMb: 4096,
      log,
    });
    const stop = async () => {
      await cluster.stopAll().catch(() => undefined);
      cluster.tearDownNetwork();
      rmSync(runDir, { recursive: true, force: true });
    };
    const onSignal = () => void stop().then(() => process.exit(130));
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      cluster.setUpNetwork();
      rmSync(workDir, { recursive: true, force: true });
      for (const n of cluster.nodes) cluster.start(n.index, true);
      await cluster.waitStable(nodes, 120_000);
      const pids = cluster.nodes.map((n) => cluster.pid(n.index)).join(',');
      log(`${nodes} nodes, RF ${a.rf}: ${cluster.hosts} (asd pids ${pids}); load average ${loadavg()[0].toFixed(1)}`);
      if (a.exec) {
        const env = {
          ...process.env,
          AEROSPIKE_HOSTS: cluster.hosts,
          AEROSPIKE_NAMESPACE: 'utxo',
          BENCH_ASD_PIDS: pids,
        };
        const code = await new Promise<number | null>((resolve) =>
          spawn('bash', ['-c', a.exec!], { env, stdio: 'inherit' }).on('exit', resolve),
        );
        log(`--exec exited ${code}`);
        continue;
      }
      for (const clients of a.clients)
        all.push(...(await measure(cluster, a, clients, `slope_${nodes}n_${clients}c_${Date.now() % 100000}`)));
      log(
        `load average ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')} at the end of ${nodes} nodes`,
      );
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await stop();
    }
  }
  if (all.length) console.log(slopeTable(all));
}

/** Per phase: each configuration's CPU per tx beside the first configuration's (the slope the model assumes flat). */
export function slopeTable(rows: PhaseFigures[]): string {
  const lines = [
    '| phase | nodes | clients | asd CPU us/tx (less idle) | asd CPU us/tx (raw) | clients CPU us/tx | wire bytes/tx (all nodes) | txs/s |',
  ];
  lines.push('|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    lines.push(
      `| ${r.phase} | ${r.nodes} | ${r.clients} | ${r.asdCpuUsPerTx} | ${r.asdRawCpuUsPerTx} | ${r.clientCpuUsPerTx} | ${r.wireBytesPerTx} | ${Math.round((r.txs * 1000) / r.ms)} |`,
    );
  return lines.join('\n');
}

if (require.main === module)
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
