/**
 * `npm run drill`: the disaster-recovery drill (docs/reliability.md "Backup and restore", the runbook's "Restore from
 * backup"), end to end on a real 3-node cluster with the deployed backup and restore scripts (cdk/backup-scripts.ts,
 * run with bash in a node's network namespace as a node runs them: node-shell.ts) and the real asbackup and asrestore,
 * writing to an S3 emulator on the bridge address. Steps:
 *  1. 3 nodes (the deployment's conf, --rf), --records filler records, seed txs through the store, then a steady load
 *     of spends, creates and blocks through the store (load.ts) recording every answer;
 *  2. the backup script on every node, as the schedule runs it (the principal backs up), while the load goes on;
 *  3. the whole cluster lost: every node killed and its directory wiped; empty nodes started; the restore script;
 *  4. what the restore lacks of the writes acknowledged since the backup began (RPO);
 *  5. those writes sent again in order, as block validation would (replay.ts);
 *  6. the checks (checks.ts): 0 lost, no output spent by two txs, the DAH rule;
 *  7. forged backups (no marker, a file missing, a file altered) refused by the restore;
 *  8. partial loss: one node wiped and restored into while the others serve (partial.ts); then two cleanup passes.
 * Skips (exit 0, reason printed) without ASD_BIN, root, `ip netns`, asbackup/asrestore or the aws CLI.
 *
 *   npm run drill -- [--records 1000000] [--rf 2] [--rate 150] [--chains 16] [--warmup-ms 15000] [--tail-ms 10000]
 *                    [--prefix drl] [--subnet 10.21.0] [--out DIR]
 */
import { spawn, type ChildProcess } from 'child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { loadavg } from 'os';
import * as path from 'path';
import { renderBackupScript, renderRestoreScript } from '../../cdk/backup-scripts';
import { aerospikeConfSettings } from '../../cdk/config';
import { effectiveReplication } from '../../cdk/config/aerospike';
import { loadConfig } from '../../lib/domain/config';
import { buildRuntime, type Runtime } from '../../lib/runtime';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION, startAwsEmulator, type AwsEmulator } from '../e2e/aws-emulator';
import { Cluster, sleep } from '../partition/cluster';
import { clusterSettings, harnessDeployment } from '../partition/settings';
import { BackupBucket, forgeBackups } from './backups';
import { checkStore, cleanupPasses } from './checks';
import { parseDrillArgs, DRILL_BUCKET, DRILL_PREFIX, type DrillArgs } from './args';
import { parseDrillHistory, type DrillEvent } from './events';
import type { LoadJob } from './load';
import { NodeShell } from './node-shell';
import { partialLoss } from './partial';
import { drillPreconditions } from './preconditions';
import { readFinal } from './records';
import { recoveryPoint, replayBatches } from './recovery';
import { replay } from './replay';
import { figuresRow, toolMs } from './report';
import { seedTx } from './txs';

const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 23)} ${line}`);

function tsx(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, script), ...args], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
const exited = (child: ChildProcess) =>
  new Promise<number>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.on('exit', (code) => resolve(code ?? 1));
  });

async function openStore(env: Record<string, string>): Promise<Runtime> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await buildRuntime(loadConfig({ ...process.env, ...env }));
    } catch (err) {
      if (attempt >= 10) throw err;
      log(`opening the store failed (${err instanceof Error ? err.message : String(err)}), again`);
      await sleep(3000);
    }
  }
}

/** The backup script on every node at once (the association's maxConcurrency 100 %); answers the principal's run. */
async function backupEverywhere(cluster: Cluster, shell: NodeShell, script: string, label: string) {
  const runs = await Promise.all(cluster.nodes.map((n) => shell.run(n.netns, script, [], `${label}-${n.name}`)));
  const failed = runs.filter((r) => r.code !== 0);
  if (failed.length > 0) throw new Error(`${label}: the backup script failed on ${failed.length} node(s)`);
  const done = runs.flatMap((r) => {
    const m = /aerospike-backup: s3:\/\/[^/]+\/[^/]+\/(\S+) complete/.exec(r.stdout);
    const toolTime = toolMs(r.stderr + r.stdout, /Starting backup of/, /Backed up \d+ record/);
    return m ? [{ stamp: m[1], ms: r.ms, toolMs: toolTime }] : [];
  });
  if (done.length !== 1) throw new Error(`${label}: ${done.length} nodes backed up (expected the principal only)`);
  return done[0];
}

async function drill(args: DrillArgs, tools: { toolsDir: string; awsDir: string }): Promise<boolean> {
  const t0 = Date.now();
  const now = () => Date.now() - t0;
  const out = args.out;
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const historyPath = path.join(out, 'history.jsonl');
  const deployment = harnessDeployment(args.rf);
  const a = deployment.aerospike;
  const rf = effectiveReplication(a);
  const conf = aerospikeConfSettings(a, deployment.store, 'utxo-drill', []);
  const workDir = path.join(path.dirname(out), 'cluster');
  const cluster = new Cluster({
    asdBin: process.env.ASD_BIN!,
    prefix: args.prefix,
    subnet: args.subnet,
    workDir,
    conf,
    // each node holds RF/3 of the records (about 750 B each on the device with the store's) and room to spare
    fileSizeMb: Math.max(1024, Math.ceil((args.records * 750 * rf) / 3 / 2 ** 20) + 1024),
    loopbackService: true,
    log,
  });
  let emulator: AwsEmulator | undefined;
  let load: ChildProcess | undefined;
  const cleanup = async () => {
    if (load && load.exitCode === null) load.kill('SIGKILL');
    await cluster.stopAll().catch(() => undefined);
    cluster.tearDownNetwork();
    await emulator?.stop().catch(() => undefined);
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => void cleanup().then(() => process.exit(130)));

  try {
    cluster.setUpNetwork();
    emulator = await startAwsEmulator({ host: `${args.subnet}.1`, buckets: [DRILL_BUCKET], s3Gaps: true });
    const bucket = new BackupBucket(emulator.s3, DRILL_BUCKET, DRILL_PREFIX);
    const shell = new NodeShell({
      runDir: path.join(out, 'node-shell'),
      ...tools,
      s3Endpoint: emulator.endpoint,
      region: EMULATOR_REGION,
      credentials: EMULATOR_CREDENTIALS,
      log,
    });
    const scripts = { bucket: DRILL_BUCKET, prefix: DRILL_PREFIX, namespace: a.namespace };
    const backupScript = renderBackupScript({
      ...scripts,
      metric: { namespace: 'BsvUtxoStore/Aerospike', clusterName: conf.clusterName },
      keepNewest: 3,
    });
    const restoreScript = renderRestoreScript(scripts);

    // 1. the cluster, the records, the store's seed txs, the load
    rmSync(workDir, { recursive: true, force: true });
    for (const n of cluster.nodes) cluster.start(n.index, true);
    await cluster.waitStable(3, 120_000);
    log(`cluster stable: ${cluster.hosts}, RF ${rf}; filling ${args.records} records`);
    let started = Date.now();
    // random bodies: a backup of them compresses as little as a store's records (txids, hashes, scripts)
    const filler = tsx('../partition/filler.ts', [cluster.hosts, a.namespace, String(args.records), 'random']);
    if ((await exited(filler)) !== 0) throw new Error('the filler failed');
    log(`filler: ${args.records} records in ${Date.now() - started} ms`);
    await cluster.waitStable(3, 600_000);
    const storeEnv = {
      UTXO_STORE: `aerospike://${cluster.hosts}/${a.namespace}?set=drill`,
      BLOB_STORE: `file:${path.join(out, 'blobs')}`,
      SIGNAL_QUEUE: 'inline',
      ...clusterSettings('deployed', a.nodeCount).clientEnv,
    };
    let runtime = await openStore(storeEnv);
    const seeds = Array.from({ length: args.seeds }, (_, i) => seedTx((t0 % 1_000_000_000) + i, 8, 1_000_000_000));
    const history: DrillEvent[] = [];
    let start = now();
    const created = await runtime.store.createMany(seeds.map((s) => ({ tx: s.hex })));
    created.forEach((r, i) => {
      if (!r.ok) throw new Error(`seed ${seeds[i].txid}: ${r.error.message}`);
      history.push({
        kind: 'create',
        client: 'controller',
        mode: 'batch',
        start,
        end: now(),
        answer: 'ok',
        txid: seeds[i].txid,
        hex: seeds[i].hex,
      });
    });
    const tip = await runtime.store.getChainTip();
    start = now();
    const seedBlock = { txids: seeds.map((s) => s.txid), blockId: 1, blockHeight: tip + 1, subtreeIdx: 0 };
    await runtime.store.setMined(seedBlock);
    history.push({
      kind: 'setMined',
      client: 'controller',
      mode: 'batch',
      start,
      end: now(),
      answer: 'ok',
      ...seedBlock,
    });
    writeFileSync(historyPath, history.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const job: LoadJob = {
      env: storeEnv,
      historyPath,
      t0,
      utxos: seeds.flatMap((s) => s.outputs),
      chains: args.chains,
      rate: args.rate,
      rivalEvery: 10,
      minedEveryMs: 2000,
      firstBlock: { id: 2, height: tip + 2 },
    };
    writeFileSync(path.join(out, 'load.json'), JSON.stringify(job));
    load = tsx('load.ts', [path.join(out, 'load.json')]);
    await sleep(args.warmupMs);

    // 2. the backup, while the load goes on
    const backupStartMs = now();
    log('backup: the backup script on every node');
    const backup = await backupEverywhere(cluster, shell, backupScript, 'backup');
    const described = await bucket.describe(backup.stamp);
    log(
      `backup ${backup.stamp}: ${described.manifest.records} records, ${described.files} files, ${described.bytes} bytes, ${backup.ms} ms`,
    );
    await sleep(args.tailMs);
    load.kill('SIGTERM');
    if ((await exited(load)) !== 0) throw new Error('the load failed');

    // 3. the whole cluster lost; empty nodes; the restore
    const lossMs = now();
    log('loss: every node killed, every node directory wiped');
    for (const n of cluster.nodes) await cluster.kill(n.index, 'SIGKILL');
    started = Date.now();
    for (const n of cluster.nodes) cluster.start(n.index, true);
    await cluster.waitStable(3, 300_000);
    const nodesMs = Date.now() - started;
    log(`empty nodes stable after ${nodesMs} ms; restoring ${backup.stamp} on node 1`);
    const restore = await shell.run(cluster.node(1).netns, restoreScript, [backup.stamp], 'restore');
    if (restore.code !== 0) throw new Error(`the restore failed (exit ${restore.code})`);
    runtime = await openStore(storeEnv);

    // 4. what the restore lacks; 5. the replay; 6. the checks
    const events = parseDrillHistory(readFileSync(historyPath, 'utf8'));
    const rpo = recoveryPoint(events, await readFinal(runtime.store, events), backupStartMs, lossMs);
    log(`RPO: ${JSON.stringify(rpo)}`);
    const replayed = await replay(runtime.store, replayBatches(events, backupStartMs));
    log(`replay: ${JSON.stringify(replayed)}`);
    const check = await checkStore(runtime, events);
    const figures = {
      records: described.manifest.records,
      rf,
      backup: { ms: backup.ms, toolMs: backup.toolMs, bytes: described.bytes, files: described.files },
      restore: {
        nodesMs,
        scriptMs: restore.ms,
        toolMs: toolMs(restore.stderr + restore.stdout, /Starting restore to/, /Expired \d+ : skipped/),
      },
      rpo,
      replay: replayed,
      check,
    };

    // 7. forged backups
    const forged = [];
    for (const c of await forgeBackups(bucket, backup.stamp)) {
      const r = await shell.run(cluster.node(1).netns, restoreScript, [c.stamp], 'forged');
      forged.push({
        name: c.name,
        refused: r.code === 1 && r.stderr.includes(c.expected) && !r.stdout.includes('restored into'),
      });
    }

    // 8. partial loss; then cleanup over everything the history holds
    const partial = await partialLoss(
      { cluster, shell, runtime, backupScript, restoreScript, historyPath, now, log },
      events,
      `${backup.stamp}-partial`,
    );
    const all = parseDrillHistory(readFileSync(historyPath, 'utf8'));
    const afterPartial = await checkStore(runtime, all);
    const cleaned = await cleanupPasses(runtime, all, afterPartial.final);

    const row = figuresRow(figures);
    console.log(
      `\ndrill: 3 nodes, RF ${rf}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.table([row]);
    console.table(forged);
    console.log(`partial loss: ${JSON.stringify(partial)}`);
    console.log(
      `after the partial loss: lost ${afterPartial.history.creates.lost.length + afterPartial.history.lostSpends.length}, DAH violations ${afterPartial.dah.length}`,
    );
    console.log(
      `cleanup: ${JSON.stringify({ ...cleaned, passes: cleaned.passes.map((p) => ({ deleted: p.deleted, kept: p.kept, errors: p.errors })) })}`,
    );
    const ok =
      check.ok &&
      rpo.missingBefore.creates + rpo.missingBefore.spends + rpo.missingBefore.blocks === 0 &&
      replayed.failures.length === 0 &&
      forged.every((f) => f.refused) &&
      partial.ok &&
      afterPartial.ok &&
      cleaned.ok;
    writeFileSync(
      path.join(out, `summary-rf${rf}.json`),
      JSON.stringify(
        { row, figures: { ...figures, check: { ...check, final: undefined } }, forged, partial, cleaned, ok },
        null,
        1,
      ),
    );
    console.log(`drill: ${ok ? 'PASSED' : 'FAILED'} (details in ${out})`);
    return ok;
  } finally {
    await cleanup();
  }
}

async function main(): Promise<void> {
  const args = parseDrillArgs(process.argv.slice(2));
  const tools = drillPreconditions();
  if (typeof tools === 'string') {
    console.log(`drill: skipped: ${tools}`);
    return;
  }
  if (existsSync(args.out)) log(`drill: ${args.out} is replaced`);
  process.exit((await drill(args, tools)) ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error('drill failed:', err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(2);
});
