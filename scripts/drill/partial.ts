/**
 * Partial loss: one node's data lost while the other two serve, and the restore run into the cluster that kept the
 * rest. A backup is taken (the schedule's script on every node), then a record changes after it (an unspent output
 * is spent and its spender stored: the parent's generation rises above the backup's copy), then node 1 is killed,
 * its whole directory wiped, started empty, and once migrations are done the restore script runs on it. asrestore's
 * generation check (a record is written only when the backup's generation is higher) must keep the newer record:
 * the output is still spent by the tx stored after the backup. Reads go on throughout and are counted.
 */
import { appendFileSync } from 'fs';
import { parseTx } from '../../lib/domain/tx';
import type { Runtime } from '../../lib/runtime';
import { sleep, type Cluster } from '../partition/cluster';
import { outpointKey } from '../partition/history';
import type { DrillEvent } from './events';
import type { NodeShell } from './node-shell';
import { spenderTx, type Utxo } from './txs';

export interface PartialContext {
  cluster: Cluster;
  shell: NodeShell;
  runtime: Runtime;
  backupScript: string;
  restoreScript: string;
  historyPath: string;
  now: () => number;
  log: (line: string) => void;
}

export interface PartialReport {
  stamp: string;
  /** the changed record: the output, its spender stored after the backup, what the record says after the restore */
  changed: { outpoint: string; spender: string; recorded: string | null | undefined; spenderStored: boolean };
  /** asrestore's last counts: inserted, and refused by the generation check (existed or fresher) */
  asrestore: { inserted: number; failed: number; fresher: number } | null;
  /** reads while node 1 was down, rejoining and restored into */
  reads: { ok: number; failed: number };
  restoreMs: number;
  ok: boolean;
}

/** asrestore's last "inserted N: failed M (existed E , fresher F)" line (src/restore.c counter thread). */
export function asrestoreCounts(output: string): PartialReport['asrestore'] {
  const all = [...output.matchAll(/inserted (\d+)\s*: failed (\d+) \(existed \d+\s*, fresher (\d+)\)/g)];
  const m = all[all.length - 1];
  return m ? { inserted: Number(m[1]), failed: Number(m[2]), fresher: Number(m[3]) } : null;
}

/** An output no acknowledged spend of the history consumed: the first output of the last tx created. */
export function unspentOutput(events: DrillEvent[]): Utxo {
  const spent = new Set<string>();
  for (const e of events)
    if (e.kind === 'spend' && e.answer === 'ok') e.inputs.forEach((i) => spent.add(outpointKey(i)));
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.kind === 'create' && e.answer === 'ok' && !spent.has(`${e.txid}:0`))
      return { txid: e.txid, vout: 0, satoshis: parseTx(e.hex).outputs[0].satoshis };
  }
  throw new Error('no unspent output in the history');
}

export async function partialLoss(ctx: PartialContext, events: DrillEvent[], stamp: string): Promise<PartialReport> {
  const { cluster, shell, runtime, log } = ctx;
  const { store } = runtime;
  const backups = await Promise.all(
    cluster.nodes.map((n) => shell.run(n.netns, ctx.backupScript, [], `partial-backup-${n.name}`, { STAMP: stamp })),
  );
  if (backups.some((b) => b.code !== 0)) throw new Error('partial loss: the backup failed');

  // a record changed after the backup, through the store; appended to the history so every later check covers it
  const u = unspentOutput(events);
  const child = spenderTx(u);
  const record = (e: DrillEvent) => appendFileSync(ctx.historyPath, `${JSON.stringify(e)}\n`);
  let start = ctx.now();
  await store.spend({ tx: child.hex });
  const inputs = [{ txid: u.txid, vout: u.vout }];
  record({
    kind: 'spend',
    client: 'controller',
    mode: 'single',
    start,
    end: ctx.now(),
    answer: 'ok',
    spender: child.txid,
    inputs,
    hex: child.hex,
  });
  start = ctx.now();
  await store.create(child.hex);
  record({
    kind: 'create',
    client: 'controller',
    mode: 'single',
    start,
    end: ctx.now(),
    answer: 'ok',
    txid: child.txid,
    hex: child.hex,
  });
  log(`partial loss: ${outpointKey(u)} spent by ${child.txid.slice(0, 12)} after backup ${stamp}`);

  // reads of the outputs the history spent, throughout
  const probe = events.flatMap((e) => (e.kind === 'spend' && e.answer === 'ok' ? e.inputs : [])).slice(-200);
  const reads = { ok: 0, failed: 0 };
  let reading = true;
  const reader = (async () => {
    while (reading) {
      for (const r of await store
        .getSpendMany(probe.slice(0, 20))
        .catch(() => probe.slice(0, 20).map(() => ({ ok: false })))) {
        if (r.ok) reads.ok++;
        else reads.failed++;
      }
      probe.push(...probe.splice(0, 20));
      await sleep(200);
    }
  })();

  log('partial loss: node 1 killed, its directory wiped, started empty');
  await cluster.kill(1, 'SIGKILL');
  cluster.start(1, true);
  const stableMs = await cluster.waitStable(3, 1_800_000);
  log(`partial loss: node 1 rejoined, migrations done ${stableMs} ms later; restoring ${stamp} on it`);
  const restore = await shell.run(cluster.node(1).netns, ctx.restoreScript, [stamp], 'partial-restore');
  reading = false;
  await reader;
  if (restore.code !== 0) throw new Error(`partial loss: the restore failed (exit ${restore.code})`);

  const [after] = await store.getSpendMany([u]);
  const recorded = after.ok ? (after.value.spendingTxid ?? null) : undefined;
  const [stored] = await store.getMany([child.txid], ['blockIDs']);
  const changed = { outpoint: outpointKey(u), spender: child.txid, recorded, spenderStored: stored.ok };
  return {
    stamp,
    changed,
    asrestore: asrestoreCounts(restore.stdout + restore.stderr),
    reads,
    restoreMs: restore.ms,
    ok: recorded === child.txid && stored.ok,
  };
}
